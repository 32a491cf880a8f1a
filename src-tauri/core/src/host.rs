//! Assembling what a host runs (the CLI, the gateway, the desktop app): the sensitivity
//! scanner, the agent catalog, the OS keychain, the egress ledger and the local model, wired
//! into one `Orchestrator`; and running one turn of a conversation on it. Hosts differ only in
//! how they show events and notices.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::cloud::agents::Catalog;
use crate::config::Settings;
use crate::conversations::{history, ConversationError, Conversations, Document, Turn};
use crate::egress::{Egress, Sanitizer};
use crate::extract::{self, ExtractError};
use crate::index::Folders;
use crate::ledger::{self, Ledger};
use crate::local::{LocalEngine, LocalError};
use crate::network::{MonitorConfig, NetworkMonitor, Target};
use crate::router::run::{Orchestrator, RunError, RunEvent, RunOptions};
use crate::router::{Attachment, LocalClass, Task};
use crate::secrets::Keys;
use crate::sensitivity::{self, Scanner};
use crate::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Sensitivity(#[from] sensitivity::SensitivityError),
    #[error(transparent)]
    Cloud(#[from] crate::cloud::CloudError),
    #[error(transparent)]
    Ledger(#[from] ledger::LedgerError),
    #[error(transparent)]
    Conversations(#[from] ConversationError),
    #[error("internal: {0}")]
    Internal(String),
}

impl ErrorCode for HostError {
    fn code(&self) -> &'static str {
        match self {
            HostError::Sensitivity(e) => e.code(),
            HostError::Cloud(e) => e.code(),
            HostError::Ledger(e) => e.code(),
            HostError::Conversations(e) => e.code(),
            HostError::Internal(_) => "host.internal",
        }
    }
}

fn joined(e: tokio::task::JoinError) -> HostError {
    HostError::Internal(e.to_string())
}

/// The scanner with the user's rules (`TANDEM_RULES` or the default rules file) and, when its
/// files are present, the NER model. Loads files: call off the async workers.
pub fn load_scanner(models_dir: &Path) -> Result<Scanner, HostError> {
    load_scanner_with(models_dir, None)
}

/// `load_scanner` for a packaged app: `bundled` is the NER directory among its resources, used
/// when the models directory has none (a new user has not fetched anything).
pub fn load_scanner_with(models_dir: &Path, bundled: Option<&Path>) -> Result<Scanner, HostError> {
    let rules = sensitivity::load_user_rules(&sensitivity::default_rules_path())?;
    Ok(sensitivity::load_default_with(models_dir, bundled, &rules)?)
}

/// The name of the model a host runs (blocking: probes the hardware): the settings' choice,
/// else the recommended model when it is fetched, else the manifest's default.
pub fn model_to_run(settings: &Settings) -> Option<String> {
    if let Some(m) = &settings.model {
        return Some(m.clone());
    }
    let manifest = crate::models::Manifest::load(&settings.models_dir).ok()?;
    let rec = crate::hardware::recommend(
        &crate::hardware::probe(),
        &manifest,
        crate::hardware::BuildCaps::current(),
    );
    crate::models::recommended_if_installed(
        &settings.models_dir,
        &manifest,
        rec.recommended_model.as_deref(),
    )
    .or(Some(manifest.default))
}

/// The local model's size class, from the manifest entry of the model `name`.
pub fn local_class(settings: &Settings, name: &str) -> LocalClass {
    crate::models::Manifest::load(&settings.models_dir)
        .ok()
        .and_then(|m| {
            m.models
                .iter()
                .find(|s| s.name == name)
                .map(|s| s.parameters_b)
        })
        .map(LocalClass::from_parameters_b)
        .unwrap_or(LocalClass::Small)
}

/// Everything assembled; `notices` says what is degraded (no local model, no NER, no keychain).
pub struct Assembled {
    pub orchestrator: Arc<Orchestrator>,
    pub catalog: Catalog,
    pub ledger: Ledger,
    pub scanner: Arc<Scanner>,
    pub notices: Vec<String>,
}

/// Builds the orchestrator around `local` (the host loads the model its own way: the CLI
/// waits for it, the app loads it in the background). Without a local model only the cloud
/// can answer, which is a notice, not an error.
pub async fn assemble(
    settings: &Settings,
    ledger_path: &Path,
    local: Result<Arc<dyn LocalEngine>, LocalError>,
) -> Result<Assembled, HostError> {
    let dir = settings.models_dir.clone();
    let scanner = Arc::new(
        tokio::task::spawn_blocking(move || load_scanner(&dir))
            .await
            .map_err(joined)??,
    );
    let path = ledger_path.to_path_buf();
    let ledger = tokio::task::spawn_blocking(move || Ledger::open(&path))
        .await
        .map_err(joined)??;
    let keys = tokio::task::spawn_blocking(Keys::os)
        .await
        .map_err(joined)?;
    let pause = Arc::new(crate::pause::PauseSwitch::shared());
    assemble_with(settings, scanner, ledger, keys, pause, local, None).await
}

/// `assemble` with a scanner, ledger, key store and pause switch the host already holds (the app opens
/// them before the model has loaded, for dropped files, the ledger view and Settings; its
/// key commands and the orchestrator then share one store).
pub async fn assemble_with(
    settings: &Settings,
    scanner: Arc<Scanner>,
    ledger: Ledger,
    keys: Keys,
    pause: Arc<crate::pause::PauseSwitch>,
    local: Result<Arc<dyn LocalEngine>, LocalError>,
    events: Option<crate::events::EventBus>,
) -> Result<Assembled, HostError> {
    let mut notices: Vec<String> = scanner.notices().to_vec();
    let catalog = tokio::task::spawn_blocking(Catalog::load)
        .await
        .map_err(joined)??;
    if let Err(e) = keys.store() {
        notices.push(format!(
            "no keychain ({e}): only TANDEM_KEY_* variables are read"
        ));
    }
    // Every host obeys the one persisted Pause cloud switch (the app passes its own path in tests).
    // Pause devices lives beside it (`devices-paused`): a separate switch, as shared.
    let device_pause = match pause.path() {
        Some(p) => crate::pause::PauseSwitch::at(p.with_file_name(crate::pause::DEVICES_FILE)),
        None => crate::pause::PauseSwitch::memory(),
    };
    let egress = Arc::new(
        Egress::with_pause(scanner.clone(), Some(ledger.clone()), pause)
            .with_device_pause(Arc::new(device_pause)),
    );
    let local = match local {
        Ok(l) => Some(l),
        Err(e) => {
            notices.push(format!("no local model ({e}); only the cloud can answer"));
            None
        }
    };
    let class = local
        .as_ref()
        .map(|l| local_class(settings, &l.model().name))
        .unwrap_or(LocalClass::Small);
    let mut orchestrator = Orchestrator::new(
        Sanitizer::new(scanner.clone()),
        egress.clone(),
        local,
        catalog.clone(),
        keys,
        class,
    );
    // Every host plans with the network's live state. The cloud providers are watched (a
    // HEAD of the base URL, no key, no content), never while Pause cloud is on.
    let targets: Vec<Target> = catalog
        .providers
        .iter()
        .filter(|p| p.trust == crate::cloud::agents::Trust::Cloud)
        .filter_map(|p| {
            Some(Target {
                provider: p.name.clone(),
                url: p.base_url.parse().ok()?,
            })
        })
        .collect();
    if !targets.is_empty() {
        let e = egress;
        orchestrator.watch_network(NetworkMonitor::spawn_quiet(
            targets,
            MonitorConfig::default(),
            events,
            Arc::new(move || e.paused()),
        ));
    }
    let orchestrator = Arc::new(orchestrator);
    Ok(Assembled {
        orchestrator,
        catalog,
        ledger,
        scanner,
        notices,
    })
}

/// A file read as an attachment through the same extraction as dropped files (PDF, DOCX,
/// XLSX, HTML, ...); the extraction's notes come back beside it. Its provenance comes from its
/// real path: under any folder marked sensitive in `folders` it is local only, however it
/// arrived (dropped, picked, `--attach`, named by a gateway client).
pub async fn attachment(
    path: &Path,
    limits: &extract::Limits,
    folders: &Folders,
) -> Result<(Attachment, Vec<String>), ExtractError> {
    let sensitive_source = {
        let (p, f) = (path.to_path_buf(), folders.clone());
        tokio::task::spawn_blocking(move || f.sensitive_for(&p).is_some())
            .await
            // Could not tell: the safe side.
            .unwrap_or(true)
    };
    let doc = extract::extract(path, limits).await?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok((
        Attachment {
            name,
            text: doc.text,
            sensitive_source,
        },
        doc.notes,
    ))
}

/// Aborts a spawned run when the turn that started it is dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One question of a conversation, as a host asks it.
#[derive(Debug, Clone, Default)]
pub struct TurnRequest {
    /// `None` starts a new conversation.
    pub conversation: Option<String>,
    pub prompt: String,
    pub attachments: Vec<Attachment>,
    /// The task id (ledger rows of this answer carry it).
    pub task: String,
    pub policy: crate::router::Policy,
    pub max_tokens: usize,
    /// Earlier turns the host holds itself (a gateway client sends its own history); they
    /// follow the stored conversation's turns.
    pub history: Vec<crate::local::ChatMessage>,
    /// Only the local model answers.
    pub force_local: bool,
    /// Ask this agent (the privacy rules still apply).
    pub agent: Option<String>,
    pub needs: crate::cloud::agents::Needs,
    pub temperature: Option<f64>,
    /// An API client's tools (see `RunOptions::tools`).
    pub tools: crate::cloud::Tools,
    /// See `RunOptions::self_check`.
    pub self_check: bool,
}

/// How a turn ended; the turn is stored on the device in every case.
#[derive(Debug)]
pub struct TurnOutcome {
    pub conversation: String,
    pub turn: Turn,
    /// The run failed (the turn carries the error's code and message as a notice).
    pub error: Option<RunError>,
}

impl TurnOutcome {
    /// The run's summary as the turn stored it (empty when the run failed before one).
    pub fn summary(&self) -> crate::router::run::Summary {
        self.turn
            .summary
            .as_ref()
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Runs one question for every host (the app, `tandem ask`): earlier turns of the conversation
/// go along as history, every cloud step masks with the conversation's vault (one placeholder
/// per value for the whole conversation), each event goes to `on_event` (which returns false
/// when its listener has gone: the run stops), `stop` resolving ends the run early and keeps
/// the text so far. With a `store`, the turn — answer, plan, summary, notices, error, time —
/// and the vault are stored whatever happened; without one (a one-off `tandem ask`) nothing is.
pub async fn run_turn(
    orch: &Arc<Orchestrator>,
    store: Option<&Conversations>,
    req: TurnRequest,
    mut on_event: impl FnMut(RunEvent) -> bool,
    stop: impl std::future::Future<Output = ()>,
) -> Result<TurnOutcome, HostError> {
    let (earlier, vault) = match (&req.conversation, store) {
        (Some(id), Some(store)) => {
            let (s, id) = (store.clone(), id.clone());
            tokio::task::spawn_blocking(move || {
                Ok::<_, ConversationError>((s.turns(&id)?, s.vault(&id)?))
            })
            .await
            .map_err(joined)??
        }
        _ => (Vec::new(), Default::default()),
    };
    let vault = Arc::new(std::sync::Mutex::new(
        crate::sensitivity::Pseudonymizer::import(&vault),
    ));
    let mut turn = Turn {
        task: req.task.clone(),
        ts_ms: now_ms(),
        question: req.prompt.clone(),
        attachments: req.attachments.iter().map(|a| a.name.clone()).collect(),
        documents: req
            .attachments
            .iter()
            .map(|a| Document::keep(&a.name, &a.text))
            .collect(),
        ..Turn::default()
    };
    let task = Task {
        prompt: req.prompt,
        attachments: req.attachments,
        history: {
            let mut h = history(&earlier);
            h.extend(req.history);
            h
        },
        policy: req.policy,
    };
    let opts = RunOptions {
        task_id: req.task,
        max_tokens: req.max_tokens,
        agent: req.agent.clone(),
        force_local: req.force_local,
        needs: req.needs.clone(),
        temperature: req.temperature,
        tools: req.tools.clone(),
        vault: Some(vault.clone()),
        self_check: req.self_check,
    };
    let started = std::time::Instant::now();
    let (tx, mut rx) = mpsc::channel(256);
    let o = orch.clone();
    let mut runner = tokio::spawn(async move { o.run(task, opts, tx).await });
    // A host that drops this turn (a gateway client hung up) ends the run with it.
    let _guard = AbortOnDrop(runner.abort_handle());
    tokio::pin!(stop);
    let result = loop {
        tokio::select! {
            ev = rx.recv() => match ev {
                Some(ev) => {
                    match &ev {
                        RunEvent::Text { text } => turn.answer.push_str(text),
                        RunEvent::Plan { plan } => turn.plan = serde_json::to_value(plan).ok(),
                        RunEvent::Notice { text } => turn.notices.push(text.clone()),
                        RunEvent::Step { .. } => {}
                    }
                    if !on_event(ev) {
                        runner.abort();
                        break None;
                    }
                }
                // The run has ended and sent everything: its result is next.
                None => break Some((&mut runner).await),
            },
            _ = &mut stop => {
                // Aborting drops the run: the cloud stream and local generation stop with it.
                runner.abort();
                break None;
            }
        }
    };
    turn.elapsed_ms = started.elapsed().as_millis() as u64;
    let mut error = None;
    match result {
        None => turn.stopped = true,
        Some(Ok(Ok(summary))) => turn.summary = serde_json::to_value(&summary).ok(),
        Some(Ok(Err(e))) => {
            turn.error = Some(e.code().to_string());
            turn.notices.push(e.to_string());
            error = Some(e);
        }
        Some(Err(e)) => return Err(HostError::Internal(e.to_string())),
    }
    let conversation = match store {
        Some(store) => {
            let (s, c, t) = (store.clone(), req.conversation.clone(), turn.clone());
            let v = vault.lock().unwrap_or_else(|p| p.into_inner()).export();
            tokio::task::spawn_blocking(move || {
                let id = s.append(c.as_deref(), &t)?;
                s.save_vault(&id, &v)?;
                Ok::<_, ConversationError>(id)
            })
            .await
            .map_err(joined)??
        }
        None => req.conversation.clone().unwrap_or_default(),
    };
    Ok(TurnOutcome {
        conversation,
        turn,
        error,
    })
}
