//! Shared state of the shell: settings, the event bus, and the core's parts, each opened once
//! on first use (or at startup, in the background) and kept for the app's lifetime.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tandem_core::config::{ConfigError, RawConfig, Settings};
use tandem_core::conversations::{ConversationError, Conversations};
use tandem_core::error::ErrorInfo;
use tandem_core::events::EventBus;
use tandem_core::host::{self, Assembled};
use tandem_core::ledger::Ledger;
use tandem_core::local::{self, LocalEngine, LocalError};
use tandem_core::pause::PauseSwitch;
use tandem_core::router::{Attachment, Policy};
use tandem_core::secrets::Keys;
use tandem_core::sensitivity::Scanner;
use tokio::sync::{oneshot, OnceCell};

/// Where the app keeps its files. Tests point every path into a temporary directory (the
/// environment is shared by parallel tests, so paths are passed, not read from env there).
#[derive(Debug, Clone)]
pub struct DataPaths {
    pub ledger: PathBuf,
    pub conversations: PathBuf,
    pub index: PathBuf,
    pub folders: PathBuf,
    pub prefs: PathBuf,
    /// The Pause cloud switch every host shares (`<config dir>/cloud-paused`).
    pub pause: PathBuf,
}

impl DataPaths {
    /// The defaults, each with its environment override (TANDEM_LEDGER, TANDEM_CONVERSATIONS,
    /// TANDEM_INDEX, TANDEM_PREFS; folders live beside the config file).
    pub fn from_env() -> Self {
        Self {
            ledger: tandem_core::ledger::default_path(),
            conversations: tandem_core::conversations::default_path(),
            index: tandem_core::index::default_path(),
            folders: tandem_core::index::Folders::file(),
            prefs: tandem_core::config::data_file("TANDEM_PREFS", "app-prefs.json"),
            pause: tandem_core::pause::default_path(),
        }
    }

    pub fn under(dir: &std::path::Path) -> Self {
        Self {
            ledger: dir.join("ledger.sqlite3"),
            conversations: dir.join("conversations.sqlite3"),
            index: dir.join("index.sqlite3"),
            folders: dir.join("folders.toml"),
            prefs: dir.join("app-prefs.json"),
            pause: dir.join(tandem_core::pause::PAUSE_FILE),
        }
    }
}

/// What the user switched in the app, kept across restarts (a paused cloud stays paused).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Prefs {
    /// Overrides the config file's policy when set.
    pub policy: Option<Policy>,
    pub cloud_paused: bool,
    /// The quick-ask shortcut (Tauri's accelerator syntax); None = the default.
    pub shortcut: Option<String>,
    /// Start the local gateway with the app.
    pub gateway: bool,
    /// The model chosen in Settings for the next start (`TANDEM_MODEL` still wins).
    #[serde(default)]
    pub model: Option<String>,
    /// macOS: live in the menu bar only (no Dock icon); applied at the next start.
    #[serde(default)]
    pub menu_bar_only: bool,
    /// The first-run welcome was finished or dismissed (Settings can show it again).
    #[serde(default)]
    pub onboarded: bool,
}

impl Prefs {
    pub fn load(path: &std::path::Path) -> Self {
        // An unreadable prefs file falls back to defaults (all switches off = the safe side
        // except pause; a broken file is reported in the log).
        match std::fs::read_to_string(path) {
            Ok(s) => serde_json::from_str(&s).unwrap_or_else(|e| {
                tracing::warn!("ignoring {}: {e}", path.display());
                Prefs::default()
            }),
            Err(_) => Prefs::default(),
        }
    }

    /// Written to a temporary file and renamed, so a crash never leaves half a file.
    pub fn save(&self, path: &std::path::Path) -> std::io::Result<()> {
        tandem_core::private_fs::write_private(path, &serde_json::to_vec_pretty(self)?)
    }
}

type EngineCell = Arc<OnceCell<Result<Arc<dyn LocalEngine>, LocalError>>>;

/// The current engine load and the settings it loads with.
struct EngineSlot {
    cell: EngineCell,
    settings: Arc<Settings>,
}

/// The running gateway: dropping `stop` shuts it down.
pub struct GatewayRun {
    pub port: u16,
    pub stop: oneshot::Sender<()>,
}

#[derive(Clone)]
pub struct AppState {
    pub settings: Arc<Settings>,
    pub events: EventBus,
    pub paths: Arc<DataPaths>,
    /// The engine's load (one per model: switching models starts a new cell) and the model
    /// it loads; questions already running keep the engine they started with.
    engine: Arc<Mutex<EngineSlot>>,
    scanner: Arc<OnceCell<Result<Arc<Scanner>, ErrorInfo>>>,
    ledger: Arc<OnceCell<Result<Ledger, ErrorInfo>>>,
    conversations: Arc<OnceCell<Result<Conversations, ErrorInfo>>>,
    /// The key store, shared by Settings' key commands and the orchestrator; kept once it
    /// opened (a keychain that was locked or absent at first is tried again next time).
    keys: Arc<Mutex<Option<Keys>>>,
    /// Rebuilt after the providers change (the catalog is read when assembling).
    assembled: Arc<tokio::sync::Mutex<Option<Arc<Assembled>>>>,
    pub prefs: Arc<Mutex<Prefs>>,
    /// Pause cloud, shared with `tandem ask`, `tandem serve` and `tandem cloud pause|resume`:
    /// the truth behind `Prefs::cloud_paused`.
    pub pause: Arc<PauseSwitch>,
    /// Dropped files, extracted and waiting for the next question, by chip id.
    pub staged: Arc<Mutex<HashMap<String, Attachment>>>,
    /// Running answers by task id; sending stops one.
    pub runs: Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>,
    pub gateway: Arc<tokio::sync::Mutex<Option<GatewayRun>>>,
    /// One indexing pass at a time (two writers would fight over the index database).
    pub indexing: Arc<tokio::sync::Mutex<()>>,
    /// Answers for the native file dialogs given in advance (tests, where no dialog can be
    /// clicked); when empty the dialog plugin asks the user.
    pub dialog_answers: Arc<Mutex<VecDeque<Option<PathBuf>>>>,
    /// The NER files a package ships among its resources (`bundle-ner.json`), set at start:
    /// used when the models directory has none.
    pub bundled_ner: Arc<std::sync::OnceLock<PathBuf>>,
}

/// Opens a part once (on a blocking thread: each opens files); a failure is remembered too.
async fn open_once<T: Clone + Send + 'static>(
    cell: &OnceCell<Result<T, ErrorInfo>>,
    open: impl FnOnce() -> Result<T, ErrorInfo> + Send + 'static,
) -> Result<T, ErrorInfo> {
    cell.get_or_init(|| async { tokio::task::spawn_blocking(open).await.map_err(internal)? })
        .await
        .clone()
}

fn internal(e: impl std::fmt::Display) -> ErrorInfo {
    ErrorInfo {
        code: "app.internal".into(),
        message: e.to_string(),
    }
}

impl AppState {
    pub fn new(mut settings: Settings, paths: DataPaths) -> Self {
        let mut prefs = Prefs::load(&paths.prefs);
        let pause = Arc::new(PauseSwitch::at(&paths.pause));
        // Before the switch was shared, the app kept it in its prefs only: carry a pause over.
        if prefs.cloud_paused && !pause.is_paused() {
            if let Err(e) = pause.set(true) {
                tracing::warn!("cannot keep Pause cloud on: {e}");
            }
        }
        prefs.cloud_paused = pause.is_paused();
        if std::env::var_os(tandem_core::config::MODEL_ENV).is_none() {
            if let Some(m) = &prefs.model {
                settings.model = Some(m.clone());
            }
        }
        let settings = Arc::new(settings);
        Self {
            settings: settings.clone(),
            events: EventBus::new(),
            paths: Arc::new(paths),
            engine: Arc::new(Mutex::new(EngineSlot {
                cell: Arc::new(OnceCell::new()),
                settings: settings.clone(),
            })),
            scanner: Arc::new(OnceCell::new()),
            ledger: Arc::new(OnceCell::new()),
            conversations: Arc::new(OnceCell::new()),
            keys: Arc::new(Mutex::new(None)),
            assembled: Arc::new(tokio::sync::Mutex::new(None)),
            prefs: Arc::new(Mutex::new(prefs)),
            pause,
            staged: Arc::new(Mutex::new(HashMap::new())),
            runs: Arc::new(Mutex::new(HashMap::new())),
            gateway: Arc::new(tokio::sync::Mutex::new(None)),
            indexing: Arc::new(tokio::sync::Mutex::new(())),
            dialog_answers: Arc::new(Mutex::new(VecDeque::new())),
            bundled_ner: Arc::default(),
        }
    }

    pub fn from_env() -> Result<Self, ConfigError> {
        Ok(Self::new(
            RawConfig::load()?.validate()?,
            DataPaths::from_env(),
        ))
    }

    /// Uses `keys` instead of the OS keychain (tests: a `MemoryStore`).
    pub fn with_keys(self, keys: Keys) -> Self {
        *self.keys.lock().unwrap_or_else(|p| p.into_inner()) = Some(keys);
        self
    }

    /// The key store: the OS keychain, opened on a blocking thread (it talks to D-Bus).
    pub async fn keys(&self) -> Keys {
        if let Some(k) = self.keys.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return k;
        }
        let keys = tokio::task::spawn_blocking(Keys::os)
            .await
            .unwrap_or_else(|e| Keys::unavailable(e.to_string()));
        if keys.store().is_ok() {
            *self.keys.lock().unwrap_or_else(|p| p.into_inner()) = Some(keys.clone());
        }
        keys
    }

    /// The prefs, with Pause cloud as the shared switch says now (the CLI may have thrown it).
    pub fn prefs(&self) -> Prefs {
        let mut p = self.prefs.lock().unwrap_or_else(|p| p.into_inner()).clone();
        p.cloud_paused = self.pause.is_paused();
        p
    }

    /// Changes the prefs and writes them; the change stands even if the write fails (logged).
    pub async fn update_prefs(&self, f: impl FnOnce(&mut Prefs)) -> Prefs {
        let p = {
            let mut g = self.prefs.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut g);
            g.clone()
        };
        let (path, saved) = (self.paths.prefs.clone(), p.clone());
        let _ = tokio::task::spawn_blocking(move || {
            if let Err(e) = saved.save(&path) {
                tracing::warn!("cannot save {}: {e}", path.display());
            }
        })
        .await;
        p
    }

    pub fn policy(&self) -> Policy {
        self.prefs().policy.unwrap_or(self.settings.policy)
    }

    /// The loaded engine; the first caller loads it, later ones wait for that load.
    /// A failed load is remembered until another model is chosen (or the app restarts).
    pub async fn engine(&self) -> Result<Arc<dyn LocalEngine>, LocalError> {
        let (cell, settings) = {
            let slot = self.engine.lock().unwrap_or_else(|p| p.into_inner());
            (slot.cell.clone(), slot.settings.clone())
        };
        cell.get_or_init(|| async {
            // With no model chosen, core's `load_configured` runs the recommended one when it
            // is fetched (the same decision as the CLI and the gateway).
            local::load_configured(&settings, self.events.clone())
                .await
                .map(|e| Arc::new(e) as Arc<dyn LocalEngine>)
        })
        .await
        .clone()
    }

    /// The loaded model's name, without waiting for a load in progress.
    pub fn loaded_model_name(&self) -> Option<String> {
        let slot = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        match slot.cell.get() {
            Some(Ok(e)) => Some(e.model().name.clone()),
            _ => None,
        }
    }

    /// Whether the current engine load ended in an error (a retry needs another `switch_model`).
    pub fn engine_failed(&self) -> bool {
        let slot = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        matches!(slot.cell.get(), Some(Err(_)))
    }

    /// The model the engine loads (or loaded): the chosen one, else the manifest default.
    pub fn engine_model(&self) -> Option<String> {
        let slot = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        slot.settings.model.clone()
    }

    /// Switches the local model now: a new load of `name` starts (progress as usual on the
    /// event bus) and the orchestrator is rebuilt around it on the next question. Answers
    /// already running finish on the old engine, which is freed when the last one ends.
    pub async fn switch_model(&self, name: String) {
        {
            let mut slot = self.engine.lock().unwrap_or_else(|p| p.into_inner());
            let mut settings = (*slot.settings).clone();
            settings.model = Some(name);
            *slot = EngineSlot {
                cell: Arc::new(OnceCell::new()),
                settings: Arc::new(settings),
            };
        }
        self.reassemble().await;
        let s = self.clone();
        tokio::spawn(async move {
            let _ = s.engine().await;
        });
    }

    /// The scanner's notice without loading it: from the loaded scanner when there is one,
    /// else from its files (it loads on first use: a question, a drop, an indexing pass).
    pub fn scan_notice(&self) -> Option<String> {
        match self.scanner.get() {
            Some(Ok(s)) if s.has_ner() => None,
            Some(Ok(s)) => s.notices().first().cloned(),
            Some(Err(e)) => Some(e.message.clone()),
            None => tandem_core::sensitivity::ner_expected_notice(
                &self.settings.models_dir,
                self.bundled_ner.get().map(|p| p.as_path()),
            ),
        }
    }

    pub async fn scanner(&self) -> Result<Arc<Scanner>, ErrorInfo> {
        let dir = self.settings.models_dir.clone();
        let bundled = self.bundled_ner.get().cloned();
        open_once(&self.scanner, move || {
            host::load_scanner_with(&dir, bundled.as_deref())
                .map(Arc::new)
                .map_err(ErrorInfo::from)
        })
        .await
    }

    pub async fn ledger(&self) -> Result<Ledger, ErrorInfo> {
        let path = self.paths.ledger.clone();
        open_once(&self.ledger, move || {
            Ledger::open(&path).map_err(ErrorInfo::from)
        })
        .await
    }

    pub async fn conversations(&self) -> Result<Conversations, ErrorInfo> {
        let path = self.paths.conversations.clone();
        let keep = self.settings.keep_conversations_days;
        open_once(&self.conversations, move || {
            let c = Conversations::open(&path).map_err(ErrorInfo::from)?;
            // The retention setting applies once per start.
            c.apply_retention(keep).map_err(ErrorInfo::from)?;
            Ok(c)
        })
        .await
    }

    /// Runs `f` on the conversation store from a blocking thread (SQLite does file I/O).
    pub async fn with_conversations<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Conversations) -> Result<T, ConversationError> + Send + 'static,
    ) -> Result<T, ErrorInfo> {
        let store = self.conversations().await?;
        tokio::task::spawn_blocking(move || f(&store).map_err(ErrorInfo::from))
            .await
            .map_err(internal)?
    }

    /// The orchestrator and its parts, built after the model has loaded (or failed to: then
    /// only the cloud answers, with a notice). The pause switch is applied on every call.
    pub async fn assembled(&self) -> Result<Arc<Assembled>, ErrorInfo> {
        let mut slot = self.assembled.lock().await;
        if slot.is_none() {
            let local = self.engine().await;
            let parts = host::assemble_with(
                &self.settings,
                self.scanner().await?,
                self.ledger().await?,
                self.keys().await,
                self.pause.clone(),
                local,
                Some(self.events.clone()),
            )
            .await?;
            for n in &parts.notices {
                tracing::info!("{n}");
            }
            *slot = Some(Arc::new(parts));
        }
        slot.clone().ok_or_else(|| internal("not assembled"))
    }

    pub fn staged_insert(&self, id: String, a: Attachment) {
        self.staged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, a);
    }

    pub fn staged_remove(&self, id: &str) -> Option<Attachment> {
        self.staged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
    }

    pub fn staged_get(&self, id: &str) -> Option<Attachment> {
        self.staged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    pub fn runs_insert(&self, task: String, stop: oneshot::Sender<()>) {
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(task, stop);
    }

    pub fn runs_remove(&self, task: &str) -> Option<oneshot::Sender<()>> {
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(task)
    }

    /// Throws the shared Pause cloud switch (the egress guard reads it before every send).
    pub async fn apply_pause_now(&self, paused: bool) {
        let pause = self.pause.clone();
        let set = tokio::task::spawn_blocking(move || pause.set(paused)).await;
        if let Ok(Err(e)) | Err(e) = set.map_err(std::io::Error::other) {
            tracing::warn!("cannot switch Pause cloud: {e}");
        }
    }

    /// Forget the assembled parts (providers changed); the next question rebuilds them.
    pub async fn reassemble(&self) {
        *self.assembled.lock().await = None;
    }
}
