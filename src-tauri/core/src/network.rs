//! Network awareness: probes the configured providers with cheap requests (a HEAD of the base
//! URL: any HTTP answer proves the path works), keeps round-trip times and the recent error rate
//! per provider, and publishes `online / degraded / offline` on a watch channel and as events
//! when a state changes. Probing backs off while offline; starting offline is just a state.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::watch;

use crate::events::{Event, EventBus};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetState {
    Online,
    Degraded,
    Offline,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderHealth {
    pub provider: String,
    pub state: NetState,
    /// Median round-trip time of the recent successful probes.
    pub rtt_ms: Option<f64>,
    /// Share of failed probes in the recent window (0..=1).
    pub error_rate: f64,
    /// The last failure, without URLs.
    pub last_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NetworkStatus {
    /// Online if any provider is, degraded if the best one is, else offline.
    pub state: NetState,
    pub providers: Vec<ProviderHealth>,
    /// False until the first round of probes finished (the state is `offline` until then).
    pub probed: bool,
}

impl NetworkStatus {
    fn initial(targets: &[Target]) -> Self {
        Self {
            state: NetState::Offline,
            providers: targets
                .iter()
                .map(|t| ProviderHealth {
                    provider: t.provider.clone(),
                    state: NetState::Offline,
                    rtt_ms: None,
                    error_rate: 0.0,
                    last_error: None,
                })
                .collect(),
            probed: false,
        }
    }

    pub fn provider(&self, name: &str) -> Option<&ProviderHealth> {
        self.providers.iter().find(|p| p.provider == name)
    }
}

/// One provider to watch.
#[derive(Debug, Clone)]
pub struct Target {
    pub provider: String,
    pub url: url::Url,
}

#[derive(Debug, Clone)]
pub struct MonitorConfig {
    pub interval: Duration,
    /// Per probe, connection included.
    pub timeout: Duration,
    /// Longest pause between probes while everything is offline.
    pub max_backoff: Duration,
    /// Probes remembered per provider.
    pub window: usize,
    pub degraded_rtt: Duration,
    pub degraded_error_rate: f64,
}

impl Default for MonitorConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(30),
            timeout: Duration::from_secs(5),
            // Recovery is noticed within a minute however long the network was away.
            max_backoff: Duration::from_secs(60),
            window: 10,
            degraded_rtt: Duration::from_millis(1500),
            degraded_error_rate: 0.2,
        }
    }
}

/// Recent probe outcomes of one provider: RTT on success, the error on failure.
struct History {
    outcomes: VecDeque<Result<Duration, String>>,
}

impl History {
    fn health(&self, provider: &str, cfg: &MonitorConfig) -> ProviderHealth {
        let mut rtts: Vec<Duration> = self
            .outcomes
            .iter()
            .filter_map(|o| o.as_ref().ok().copied())
            .collect();
        rtts.sort();
        let rtt = rtts.get(rtts.len() / 2).copied();
        let n = self.outcomes.len().max(1) as f64;
        let error_rate = self.outcomes.iter().filter(|o| o.is_err()).count() as f64 / n;
        let last = self.outcomes.back();
        let prev = self.outcomes.iter().rev().nth(1);
        let last_failed = matches!(last, Some(Err(_)) | None);
        // One lost probe is a blip (degraded); two in a row, or no success at all, is offline.
        let state = if last_failed && (rtts.is_empty() || matches!(prev, Some(Err(_)))) {
            NetState::Offline
        } else if last_failed
            || error_rate > cfg.degraded_error_rate
            || rtt.is_some_and(|r| r > cfg.degraded_rtt)
        {
            NetState::Degraded
        } else {
            NetState::Online
        };
        ProviderHealth {
            provider: provider.to_string(),
            state,
            rtt_ms: rtt.map(|r| r.as_secs_f64() * 1000.0),
            error_rate,
            last_error: self
                .outcomes
                .iter()
                .rev()
                .find_map(|o| o.as_ref().err().cloned()),
        }
    }
}

impl NetworkStatus {
    /// Why the network counts as degraded, for a plan's reasons ("the network is slow: round
    /// trip 1820 ms"); `None` unless probed and degraded.
    pub fn degraded_reason(&self) -> Option<String> {
        if !self.probed || self.state != NetState::Degraded {
            return None;
        }
        // The best provider's figures: the others do not slow a task down.
        let best = self
            .providers
            .iter()
            .filter(|p| p.state == NetState::Degraded)
            .min_by(|a, b| a.error_rate.total_cmp(&b.error_rate))?;
        Some(match (best.rtt_ms, best.error_rate) {
            (_, e) if e > 0.0 => format!(
                "the network is unreliable: {:.0}% of recent checks of {} failed",
                e * 100.0,
                best.provider
            ),
            (Some(r), _) => format!(
                "the network is slow: a round trip to {} takes {r:.0} ms",
                best.provider
            ),
            _ => "the network is degraded".to_string(),
        })
    }
}

fn overall(providers: &[ProviderHealth]) -> NetState {
    if providers.iter().any(|p| p.state == NetState::Online) {
        NetState::Online
    } else if providers.iter().any(|p| p.state == NetState::Degraded) {
        NetState::Degraded
    } else {
        NetState::Offline
    }
}

async fn probe(client: &reqwest::Client, url: &url::Url) -> Result<Duration, String> {
    let start = Instant::now();
    match client.head(url.clone()).send().await {
        // 401/404/405 still prove that DNS, TCP, TLS and the server all work.
        Ok(_) => Ok(start.elapsed()),
        Err(e) if e.is_timeout() => Err("timed out".into()),
        Err(e) if e.is_connect() => Err("cannot connect".into()),
        Err(e) => Err(e.without_url().to_string()),
    }
}

/// A running monitor; dropping it stops the probing.
pub struct NetworkMonitor {
    rx: watch::Receiver<NetworkStatus>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for NetworkMonitor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl NetworkMonitor {
    /// Starts probing on the current tokio runtime. Never blocks.
    pub fn spawn(targets: Vec<Target>, cfg: MonitorConfig, bus: Option<EventBus>) -> Self {
        Self::spawn_quiet(targets, cfg, bus, Arc::new(|| false))
    }

    /// `spawn`, probing nothing while `quiet` says so (Pause cloud: not even a probe leaves);
    /// the last state stays until probing resumes. `quiet` may block briefly (a file check):
    /// it runs on the blocking pool.
    pub fn spawn_quiet(
        targets: Vec<Target>,
        cfg: MonitorConfig,
        bus: Option<EventBus>,
        quiet: Arc<dyn Fn() -> bool + Send + Sync>,
    ) -> Self {
        let (tx, rx) = watch::channel(NetworkStatus::initial(&targets));
        let task = tokio::spawn(run(targets, cfg, tx, bus, quiet));
        Self { rx, task }
    }

    pub fn status(&self) -> NetworkStatus {
        self.rx.borrow().clone()
    }

    pub fn subscribe(&self) -> watch::Receiver<NetworkStatus> {
        self.rx.clone()
    }

    /// One round of probes, for one-off checks (`tandem cloud status`).
    pub async fn check(targets: &[Target], cfg: &MonitorConfig) -> NetworkStatus {
        let client = client(cfg);
        let outcomes =
            futures::future::join_all(targets.iter().map(|t| probe(&client, &t.url))).await;
        let providers: Vec<_> = targets
            .iter()
            .zip(outcomes)
            .map(|(t, o)| {
                History {
                    outcomes: VecDeque::from([o]),
                }
                .health(&t.provider, cfg)
            })
            .collect();
        NetworkStatus {
            state: overall(&providers),
            providers,
            probed: true,
        }
    }
}

fn client(cfg: &MonitorConfig) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(cfg.timeout)
        .connect_timeout(cfg.timeout)
        .build()
        .unwrap_or_default()
}

async fn run(
    targets: Vec<Target>,
    cfg: MonitorConfig,
    tx: watch::Sender<NetworkStatus>,
    bus: Option<EventBus>,
    quiet: Arc<dyn Fn() -> bool + Send + Sync>,
) {
    let client = client(&cfg);
    let mut histories: Vec<History> = targets
        .iter()
        .map(|_| History {
            outcomes: VecDeque::new(),
        })
        .collect();
    let mut pause = cfg.interval;
    loop {
        let q = quiet.clone();
        if tokio::task::spawn_blocking(move || q())
            .await
            .unwrap_or(false)
        {
            tokio::time::sleep(cfg.interval).await;
            continue;
        }
        let outcomes =
            futures::future::join_all(targets.iter().map(|t| probe(&client, &t.url))).await;
        for (h, o) in histories.iter_mut().zip(outcomes) {
            if h.outcomes.len() == cfg.window.max(1) {
                h.outcomes.pop_front();
            }
            h.outcomes.push_back(o);
        }
        let providers: Vec<ProviderHealth> = targets
            .iter()
            .zip(&histories)
            .map(|(t, h)| h.health(&t.provider, &cfg))
            .collect();
        let status = NetworkStatus {
            state: overall(&providers),
            providers,
            probed: true,
        };
        let changed = {
            let old = tx.borrow();
            !old.probed
                || old.state != status.state
                || old
                    .providers
                    .iter()
                    .zip(&status.providers)
                    .any(|(a, b)| a.state != b.state)
        };
        if changed {
            if let Some(bus) = &bus {
                bus.emit(Event::Network {
                    status: status.clone(),
                });
            }
            tracing::info!(state = ?status.state, "network state");
        }
        let offline = status.state == NetState::Offline;
        // Receivers read the latest value; nobody listening is fine.
        tx.send_replace(status);
        pause = if offline {
            (pause * 2).min(cfg.max_backoff.max(cfg.interval))
        } else {
            cfg.interval
        };
        tokio::time::sleep(pause).await;
    }
}
