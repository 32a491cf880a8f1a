//! The local gateway: an OpenAI-compatible HTTP API on 127.0.0.1 whose every request goes
//! through the orchestrator (fragments, plan, egress guard, ledger), so tools that speak the
//! OpenAI wire format get Tandem's routing and masking unchanged. This module owns the server,
//! its limits and its token; `api` owns the request and response shapes.

mod api;
pub mod token;

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::router::run::Orchestrator;
use crate::router::Policy;
use crate::secrets::ApiKey;

pub use api::{ApiError, VIRTUAL_MODELS};

/// The port `tandem serve` uses when none is given.
pub const DEFAULT_PORT: u16 = 8719;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("gateway token: {0}")]
    Token(String),
    #[error("the gateway stopped: {0}")]
    Io(#[from] std::io::Error),
}

impl crate::ErrorCode for GatewayError {
    fn code(&self) -> &'static str {
        match self {
            GatewayError::Bind { .. } => "gateway.bind",
            GatewayError::Token(_) => "gateway.token",
            GatewayError::Io(_) => "gateway.io",
        }
    }
}

/// What one client may ask of the gateway. The defaults suit a single user's tools.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Request bodies above this are refused with 413 (a long document fits; a video does not).
    pub max_body_bytes: usize,
    /// Requests being answered at once; more get 429 at once rather than queueing unseen.
    pub max_concurrent: usize,
    /// Open connections; more are closed on accept (slowloris with many sockets).
    pub max_connections: usize,
    /// Time to send the request line and headers (slowloris with one socket).
    pub header_timeout: Duration,
    /// Time to send the body once the headers are in.
    pub body_timeout: Duration,
    /// Time for a whole answer, streamed or not (504 after it).
    pub request_timeout: Duration,
    /// `max_tokens` when the request does not say.
    pub default_max_tokens: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 4 << 20,
            max_concurrent: 16,
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(600),
            default_max_tokens: 1024,
        }
    }
}

/// A gateway bound to an orchestrator and a token. Cheap to share; `serve` runs it.
pub struct Gateway {
    pub(crate) orch: Arc<Orchestrator>,
    /// Only the digest is kept: comparing digests takes the same time whatever the guess.
    token_digest: [u8; 32],
    pub(crate) policy: Policy,
    pub(crate) limits: Limits,
    pub(crate) slots: Arc<Semaphore>,
    connections: Arc<Semaphore>,
    next_id: AtomicU64,
    pub(crate) started: u64,
}

impl Gateway {
    /// `policy` applies to `tandem-auto` and the cloud agents' names (`tandem-private` is
    /// always private, `tandem-local` never leaves the device).
    pub fn new(
        orch: Arc<Orchestrator>,
        token: &ApiKey,
        policy: Policy,
        limits: Limits,
    ) -> Arc<Self> {
        Arc::new(Self {
            orch,
            token_digest: digest(token.expose().as_bytes()),
            policy,
            slots: Arc::new(Semaphore::new(limits.max_concurrent.max(1))),
            connections: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            limits,
            next_id: AtomicU64::new(1),
            started: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default(),
        })
    }

    /// Requests being answered now (tests and status pages watch it return to zero).
    pub fn in_flight(&self) -> usize {
        self.limits.max_concurrent.max(1) - self.slots.available_permits()
    }

    /// Open client connections now.
    pub fn connections(&self) -> usize {
        self.limits.max_connections.max(1) - self.connections.available_permits()
    }

    pub(crate) fn authorized(&self, header: Option<&str>) -> bool {
        let Some(given) = header.and_then(|h| h.strip_prefix("Bearer ")) else {
            return false;
        };
        digest(given.trim().as_bytes()) == self.token_digest
    }

    pub(crate) fn request_id(&self) -> String {
        format!(
            "chatcmpl-tdm{:x}{:06x}",
            self.started,
            self.next_id.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// The axum application (routes, no limits on connections): for hosts that embed it.
    pub fn router(self: &Arc<Self>) -> axum::Router {
        api::router(self.clone())
    }

    /// Serves on `listener` until `shutdown` resolves. Each connection is HTTP/1.1 with the
    /// header timeout and the connection cap; requests in flight when `shutdown` fires are
    /// dropped (their runs stop, nothing half-sent is recorded as done).
    pub async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), GatewayError> {
        let app = self.router();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let (io, _) = tokio::select! {
                _ = &mut shutdown => return Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Out of file descriptors and the like: wait instead of spinning.
                        tracing::warn!(error = %e, "gateway accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            let Ok(permit) = self.connections.clone().try_acquire_owned() else {
                tracing::warn!("gateway: too many open connections; closing a new one");
                continue;
            };
            let _ = io.set_nodelay(true);
            let svc = TowerToHyperService::new(app.clone());
            let header_timeout = self.limits.header_timeout;
            tokio::spawn(async move {
                let mut http = hyper::server::conn::http1::Builder::new();
                http.timer(TokioTimer::new())
                    .header_read_timeout(header_timeout);
                if let Err(e) = http.serve_connection(TokioIo::new(io), svc).await {
                    tracing::debug!(error = %e, "gateway connection ended");
                }
                drop(permit);
            });
        }
    }
}

/// Binds 127.0.0.1 only: the gateway is for this machine's tools, never the network.
pub async fn bind(port: u16) -> Result<TcpListener, GatewayError> {
    TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        .await
        .map_err(|source| GatewayError::Bind { port, source })
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}
