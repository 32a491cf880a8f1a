//! Shared state of the shell: settings, the event bus, and the local engine, loaded
//! once on first use (or at startup) and kept for the app's lifetime.

use std::sync::Arc;

use tandem_core::config::{ConfigError, RawConfig, Settings};
use tandem_core::events::EventBus;
use tandem_core::local::{self, LocalEngine, LocalError};
use tokio::sync::OnceCell;

#[derive(Clone)]
pub struct AppState {
    pub settings: Arc<Settings>,
    pub events: EventBus,
    engine: Arc<OnceCell<Result<Arc<dyn LocalEngine>, LocalError>>>,
}

impl AppState {
    pub fn new(settings: Settings) -> Self {
        Self {
            settings: Arc::new(settings),
            events: EventBus::new(),
            engine: Arc::new(OnceCell::new()),
        }
    }

    pub fn from_env() -> Result<Self, ConfigError> {
        Ok(Self::new(RawConfig::load()?.validate()?))
    }

    /// The loaded engine; the first caller loads it, later ones wait for that load.
    /// A failed load is remembered (restart after fixing the model).
    pub async fn engine(&self) -> Result<Arc<dyn LocalEngine>, LocalError> {
        self.engine
            .get_or_init(|| async {
                local::load_configured(&self.settings, self.events.clone())
                    .await
                    .map(|e| Arc::new(e) as Arc<dyn LocalEngine>)
            })
            .await
            .clone()
    }
}
