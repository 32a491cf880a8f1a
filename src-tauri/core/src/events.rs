//! The event bus: low-rate notices (model loading, downloads) that any host can
//! subscribe to. Streams of tokens do not go here; they have their own channels.

use serde::Serialize;
use tokio::sync::broadcast;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    ModelLoadStarted {
        model: String,
        path: String,
        bytes: u64,
    },
    ModelLoadPhase {
        model: String,
        phase: String,
    },
    ModelLoaded {
        model: String,
        seconds: f64,
    },
    ModelLoadFailed {
        model: String,
        code: String,
        message: String,
    },
    DownloadProgress {
        model: String,
        done_bytes: u64,
        total_bytes: Option<u64>,
    },
    /// The cloud providers' reachability changed (see `network`).
    Network {
        status: crate::network::NetworkStatus,
    },
}

/// A cheap-to-clone handle; sending with no subscriber is not an error.
#[derive(Clone)]
pub struct EventBus {
    tx: broadcast::Sender<Event>,
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus {
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(256);
        Self { tx }
    }
    pub fn emit(&self, event: Event) {
        tracing::debug!(?event, "event");
        let _ = self.tx.send(event);
    }
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }
}
