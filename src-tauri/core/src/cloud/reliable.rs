//! Reliability around one provider: first-byte and idle timeouts, retries with exponential
//! backoff and jitter (honouring `Retry-After`), a circuit breaker with cool-down, and a limit
//! on concurrent requests. Retries happen only before any part of a reply reached the caller:
//! a stream that breaks later is reported, never silently re-sent.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::stream::StreamExt;
use tokio::sync::Semaphore;

use super::{CloudError, CloudEvent, CloudProvider, CloudRequest, EventStream, SendPermit};

#[derive(Debug, Clone)]
pub struct Policy {
    /// Attempts in all (1 = no retry).
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// Time allowed until the response headers arrive.
    pub first_byte_timeout: Duration,
    /// Time allowed between two pieces of a streamed reply.
    pub idle_timeout: Duration,
    /// Consecutive failed requests that open the breaker.
    pub breaker_threshold: u32,
    pub breaker_cooldown: Duration,
    pub max_concurrent: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(8),
            first_byte_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            breaker_threshold: 5,
            breaker_cooldown: Duration::from_secs(30),
            max_concurrent: 4,
        }
    }
}

#[derive(Default)]
struct Breaker {
    failures: u32,
    open_until: Option<Instant>,
}

pub struct Reliable {
    provider: Arc<dyn CloudProvider>,
    policy: Policy,
    breaker: Mutex<Breaker>,
    slots: Arc<Semaphore>,
}

impl Reliable {
    pub fn new(provider: Arc<dyn CloudProvider>, policy: Policy) -> Self {
        let slots = Arc::new(Semaphore::new(policy.max_concurrent.max(1)));
        Self {
            provider,
            policy,
            breaker: Mutex::new(Breaker::default()),
            slots,
        }
    }

    pub fn provider(&self) -> &Arc<dyn CloudProvider> {
        &self.provider
    }

    fn check_breaker(&self) -> Result<(), CloudError> {
        let b = self.breaker.lock().unwrap_or_else(|p| p.into_inner());
        match b.open_until {
            Some(t) if t > Instant::now() => Err(CloudError::Unavailable {
                provider: self.provider.name().to_string(),
                retry_in: t.saturating_duration_since(Instant::now()),
            }),
            _ => Ok(()),
        }
    }

    fn record(&self, ok: bool) {
        let mut b = self.breaker.lock().unwrap_or_else(|p| p.into_inner());
        if ok {
            *b = Breaker::default();
        } else {
            b.failures += 1;
            if b.failures >= self.policy.breaker_threshold {
                b.open_until = Some(Instant::now() + self.policy.breaker_cooldown);
            }
        }
    }

    /// Pause before attempt `n + 1`: exponential with ±25% jitter, or the server's
    /// `Retry-After` when it gave one (capped by `max_delay`).
    fn delay(&self, attempt: u32, err: &CloudError) -> Duration {
        if let CloudError::RateLimited {
            retry_after: Some(d),
            ..
        } = err
        {
            return (*d).min(self.policy.max_delay);
        }
        let exp = self
            .policy
            .base_delay
            .saturating_mul(1u32 << attempt.min(16));
        let base = exp.min(self.policy.max_delay);
        // Jitter without a random-number crate: the clock's nanoseconds are random enough to
        // keep clients from retrying in lock-step.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let factor = 0.75 + f64::from(nanos % 1000) / 2000.0;
        base.mul_f64(factor)
    }

    /// The provider's configured name.
    pub fn name(&self) -> &str {
        self.provider.name()
    }

    /// The exact body a streamed request for `req` carries (what egress hashes into the ledger
    /// and then sends).
    pub fn wire_body(&self, req: &CloudRequest) -> Vec<u8> {
        self.provider.wire_body(req, true)
    }

    /// A streamed reply to a body `wire_body` made, with retries before its first event and
    /// timeouts throughout: the body is (sent, and re-sent on retry, byte for byte), telling
    /// `before_retry` about each failed attempt just before the request is sent again (after the
    /// back-off pause); it answers whether to go on (egress records one ledger row per
    /// transmission and re-checks the pause switch there). When it says no, the failed
    /// attempt's error is returned.
    pub async fn stream_observed(
        &self,
        body: &[u8],
        key: &str,
        send: &SendPermit,
        mut before_retry: impl FnMut(&CloudError) -> futures::future::BoxFuture<'static, bool>,
    ) -> Result<EventStream, CloudError> {
        self.check_breaker()?;
        let permit = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| CloudError::Config("provider closed".into()))?;
        let name = self.provider.name().to_string();
        let mut attempt = 0;
        let inner = loop {
            let r = match tokio::time::timeout(
                self.policy.first_byte_timeout,
                self.provider.stream_body(body.to_vec(), key, send),
            )
            .await
            {
                Ok(r) => r,
                Err(_) => Err(CloudError::Timeout {
                    provider: name.clone(),
                    phase: "first byte",
                    after: self.policy.first_byte_timeout,
                }),
            };
            match r {
                Ok(s) => {
                    self.record(true);
                    break s;
                }
                Err(e) => {
                    self.record(false);
                    attempt += 1;
                    if !e.retryable() || attempt >= self.policy.max_attempts {
                        return Err(e);
                    }
                    self.check_breaker()?;
                    tracing::info!(provider = %name, attempt, error = %e, "retrying");
                    tokio::time::sleep(self.delay(attempt - 1, &e)).await;
                    if !before_retry(&e).await {
                        return Err(e);
                    }
                }
            }
        };
        let idle = self.policy.idle_timeout;
        // The permit lives as long as the stream: dropping the stream (cancellation) frees it.
        Ok(futures::stream::unfold(
            (inner, permit, name, false),
            move |(mut s, permit, name, done)| async move {
                if done {
                    return None;
                }
                match tokio::time::timeout(idle, s.next()).await {
                    Ok(Some(ev)) => {
                        let end = !matches!(ev, Ok(CloudEvent::Delta { .. }));
                        Some((ev, (s, permit, name, end)))
                    }
                    Ok(None) => None,
                    Err(_) => {
                        let err = CloudError::Timeout {
                            provider: name.clone(),
                            phase: "idle stream",
                            after: idle,
                        };
                        Some((Err(err), (s, permit, name, true)))
                    }
                }
            },
        )
        .boxed())
    }
}
