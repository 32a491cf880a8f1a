//! Runs plans: local steps on the local engine, cloud steps only through `egress`, results
//! merged on the device (placeholders restored), progress as events on a channel. A cloud
//! failure before the answer started falls back to the local model with a notice; after it
//! started, the partial text stays and the local model answers again (nothing is lost).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::StreamExt;
use serde::Serialize;
use tokio::sync::{mpsc, watch};

use super::{attachment_block, plan, Context, LocalClass, Plan, Route, Strategy, Task};
use crate::cloud::agents::{Agent, Catalog, Needs};
use crate::cloud::reliable::{self, Reliable};
use crate::cloud::{self, ChatMessage, CloudEvent, Role};
use crate::egress::{Draft, Egress, EgressError, Sanitizer, Turn};
use crate::ledger::LocalRun;
use crate::local::{GenerateRequest, LocalEngine, StreamEvent};
use crate::network::{NetState, NetworkStatus};
use crate::secrets::Keys;
use crate::sensitivity::{Provenance, Pseudonymizer, StreamRestore};

/// The CPU package energy counter (Intel/AMD RAPL through powercap), when this user can read
/// it: microjoules since an arbitrary start.
fn rapl_uj() -> Option<u64> {
    std::fs::read_to_string("/sys/class/powercap/intel-rapl:0/energy_uj")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// Energy assumptions for the accounting (documented in the README), used when RAPL is not
/// readable. Package power per busy core of a laptop/desktop CPU.
pub const WATTS_PER_CORE: f64 = 7.5;
/// Joules per generated or read token in a data centre for a frontier model (published
/// estimates span roughly 0.3-4 J; 2 J is the middle of that range).
pub const CLOUD_JOULES_PER_TOKEN: f64 = 2.0;

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    Plan { plan: Plan },
    Step { step: String, place: String },
    Text { text: String },
    Notice { text: String },
}

#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(default)]
pub struct Summary {
    pub text: String,
    pub route: Option<Route>,
    pub agent: Option<String>,
    pub cloud_tokens: u64,
    pub local_tokens: u64,
    /// Tokens read and written by the model(s) that answered (usage for API hosts).
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
    /// What sending the whole task to the same agent would have cost.
    pub all_cloud_cost_usd: f64,
    pub energy_local_j: f64,
    pub energy_cloud_j: f64,
    pub masked: usize,
    pub withheld: usize,
    pub fell_back: bool,
    /// Who wrote the answer: "local", "cloud" or "device".
    pub answered_by: Option<String>,
    /// How sure the local model was of its answer, when its confidence was read.
    pub confidence: Option<f64>,
    /// How far the local answer cleared the bar for keeping it (kept when ≥ 0), when it was
    /// judged: its confidence against the shape's threshold, or for multiple choice its
    /// expected success against the cloud's (`router/keep.rs`).
    pub keep: Option<f64>,
    /// The local model tried first and was not sure enough: the task went on as planned.
    pub escalated: bool,
    /// The calls the answer asks the client to make (placeholders restored).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(skip)]
    pub tool_calls: Vec<crate::cloud::ToolCall>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    #[error("no local model is loaded, and the task cannot go to the cloud: {0}")]
    NoLocal(String),
    #[error(transparent)]
    Local(#[from] crate::local::LocalError),
    #[error(transparent)]
    Cloud(#[from] crate::cloud::CloudError),
    /// The cloud step failed and no local model could take over.
    #[error(transparent)]
    CloudFailed(#[from] StepError),
    #[error("internal: {0}")]
    Internal(String),
}

impl crate::ErrorCode for RunError {
    fn code(&self) -> &'static str {
        match self {
            RunError::NoLocal(_) => "router.no_local",
            RunError::Local(e) => e.code(),
            RunError::Cloud(e) => e.code(),
            RunError::CloudFailed(e) => e.code(),
            RunError::Internal(_) => "router.internal",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub task_id: String,
    /// Use this agent (skips the complexity check, not the privacy rules).
    pub agent: Option<String>,
    pub force_local: bool,
    pub needs: Needs,
    pub max_tokens: usize,
    pub temperature: Option<f64>,
    /// The conversation's pseudonym vault: every cloud step of the task masks with it (the
    /// same value keeps its placeholder across turns) and the host stores it after the turn.
    /// `None`: a vault for this task alone.
    pub vault: Option<Arc<Mutex<Pseudonymizer>>>,
    /// Tools an API client offers: the cloud may ask for calls, which come back restored in
    /// the summary (the client runs them on this machine). The local model is not offered them.
    pub tools: crate::cloud::Tools,
    /// Local answers to short tasks are written in a form whose confidence can be read
    /// (`selfcheck`), and the summary reports it (`tandem answer`).
    pub self_check: bool,
}

/// Everything a task needs, built once by the host.
pub struct Orchestrator {
    pub sanitizer: Sanitizer,
    pub egress: Arc<Egress>,
    pub local: Option<Arc<dyn LocalEngine>>,
    pub catalog: Catalog,
    pub keys: Keys,
    pub network: Option<watch::Receiver<NetworkStatus>>,
    /// The monitor behind `network`, when the orchestrator runs its own (`watch_network`).
    monitor: Option<crate::network::NetworkMonitor>,
    pub reliability: reliable::Policy,
    pub local_class: LocalClass,
    reliables: Mutex<HashMap<String, Arc<Reliable>>>,
}

/// Waits for room (a slow reader slows the task, never loses text); a host that stopped
/// listening does not stop the task.
async fn send(tx: &mpsc::Sender<RunEvent>, ev: RunEvent) {
    let _ = tx.send(ev).await;
}

impl Orchestrator {
    pub fn new(
        sanitizer: Sanitizer,
        egress: Arc<Egress>,
        local: Option<Arc<dyn LocalEngine>>,
        catalog: Catalog,
        keys: Keys,
        local_class: LocalClass,
    ) -> Self {
        Self {
            sanitizer,
            egress,
            local,
            catalog,
            keys,
            network: None,
            monitor: None,
            reliability: reliable::Policy::default(),
            local_class,
            reliables: Mutex::new(HashMap::new()),
        }
    }

    /// Plans read the network's state from `monitor` (offline: local at once, without a
    /// connection attempt; degraded: short tasks local), for as long as the orchestrator lives.
    pub fn watch_network(&mut self, monitor: crate::network::NetworkMonitor) {
        self.network = Some(monitor.subscribe());
        self.monitor = Some(monitor);
    }

    fn reliable(&self, provider: &str) -> Result<Arc<Reliable>, RunError> {
        let mut map = self.reliables.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = map.get(provider) {
            return Ok(r.clone());
        }
        let p = self
            .catalog
            .provider(provider)
            .ok_or_else(|| RunError::Internal(format!("unknown provider {provider}")))?;
        let r = Arc::new(Reliable::new(
            cloud::connect_provider(p)?,
            self.reliability.clone(),
        ));
        map.insert(provider.to_string(), r.clone());
        Ok(r)
    }

    /// The agent for this task and its key, or why there is none. Blocking (keychain).
    fn choose_agent(
        &self,
        opts: &RunOptions,
        task_chars: usize,
    ) -> Result<(Agent, String), String> {
        // Pause cloud is a plan-time fact too: the task is planned local and says why, instead
        // of being planned for the cloud and refused at the egress guard (which still refuses
        // anything that gets there while paused).
        if self.egress.paused() {
            return Err("Pause cloud is on".into());
        }
        let offline = self
            .network
            .as_ref()
            .map(|n| n.borrow().clone())
            .filter(|s| s.probed && s.state == NetState::Offline);
        if offline.is_some() {
            return Err("the network is offline".into());
        }
        let has_key = |name: &str| matches!(self.keys.get(name), Ok(Some(_)));
        let agent = match &opts.agent {
            Some(a) => self
                .catalog
                .agent(a)
                .filter(|a| !self.catalog.is_device(a))
                .cloned()
                .ok_or_else(|| format!("no cloud agent named {a:?}"))?,
            None => {
                let needs = Needs {
                    input_tokens: (task_chars / 4) as u64 + 1,
                    output_tokens: opts.max_tokens as u64,
                    ..opts.needs.clone()
                };
                self.catalog
                    .pick(&needs, |p| !p.needs_key || has_key(&p.name))
                    .map_err(|e| e.to_string())?
                    .clone()
            }
        };
        let needs_key = self
            .catalog
            .provider(&agent.provider)
            .is_none_or(|p| p.needs_key);
        let key = match self.keys.get(&agent.provider) {
            Ok(Some((k, _))) => k.expose().to_string(),
            Ok(None) if !needs_key => String::new(),
            Ok(None) => {
                return Err(format!(
                    "no key stored for {} (tandem keys set {})",
                    agent.provider, agent.provider
                ))
            }
            Err(e) => return Err(e.to_string()),
        };
        Ok((agent, key))
    }

    /// The device agent private work may use, with its key ("" when it needs none), unless
    /// Pause devices is on. Blocking (keychain).
    fn choose_device(&self, opts: &RunOptions) -> Option<(Agent, String)> {
        if self.egress.devices_paused() {
            return None;
        }
        let key_of = |p: &crate::cloud::agents::ProviderConfig| match self.keys.get(&p.name) {
            Ok(Some((k, _))) => Some(k.expose().to_string()),
            _ if !p.needs_key => Some(String::new()),
            _ => None,
        };
        let agent = self
            .catalog
            .device(opts.agent.as_deref(), |p| key_of(p).is_some())
            .or_else(|| {
                // A named cloud agent does not stop private work from using a device.
                opts.agent
                    .as_ref()
                    .and_then(|_| self.catalog.device(None, |p| key_of(p).is_some()))
            })?
            .clone();
        let key = key_of(self.catalog.provider(&agent.provider)?)?;
        Some((agent, key))
    }

    /// Plans `task` and runs it. Events stream on `tx`; the summary comes back at the end.
    pub async fn run(
        self: &Arc<Self>,
        task: Task,
        opts: RunOptions,
        tx: mpsc::Sender<RunEvent>,
    ) -> Result<Summary, RunError> {
        let mut summary = self.run_planned(task, opts, tx).await?;
        if summary.answered_by.is_none() {
            let by = match &summary.agent {
                _ if summary.fell_back => "local",
                None => "local",
                Some(a) if a.starts_with("your device") => "device",
                Some(_) => "cloud",
            };
            summary.answered_by = Some(by.into());
        }
        Ok(summary)
    }

    async fn run_planned(
        self: &Arc<Self>,
        task: Task,
        opts: RunOptions,
        tx: mpsc::Sender<RunEvent>,
    ) -> Result<Summary, RunError> {
        let chars =
            task.prompt.len() + task.attachments.iter().map(|a| a.text.len()).sum::<usize>();
        let (me, mut t, o) = (self.clone(), task, opts.clone());
        let (plan, choice, device, task) = tokio::task::spawn_blocking(move || {
            // Before planning, so the plan and every step after it see the same attachments.
            super::mark_confidential(&mut t);
            let choice = if o.force_local {
                Err("--local".to_string())
            } else {
                me.choose_agent(&o, chars)
            };
            // `--local` means this machine's model only.
            let device = (!o.force_local).then(|| me.choose_device(&o)).flatten();
            let device_chosen = device
                .as_ref()
                .is_some_and(|(a, _)| o.agent.as_deref() == Some(a.name.as_str()));
            let ctx = Context {
                local_class: me.local_class,
                cloud_available: choice.is_ok(),
                cloud_unavailable_reason: choice.as_ref().err().cloned(),
                // A client that offers tools wants them called: the local model does not call
                // tools, so the "can the local model do it" guess is skipped (privacy still
                // decides).
                force_cloud: (o.agent.is_some() && !device_chosen) || !o.tools.is_empty(),
                device: device.as_ref().map(|(a, _)| a.name.clone()),
                device_chosen,
                no_local: me.local.is_none(),
                degraded: me
                    .network
                    .as_ref()
                    .and_then(|n| n.borrow().degraded_reason()),
            };
            (plan(me.sanitizer.scanner(), &t, &ctx), choice, device, t)
        })
        .await
        .map_err(|e| RunError::Internal(e.to_string()))?;
        send(&tx, RunEvent::Plan { plan: plan.clone() }).await;
        let named_device = device
            .as_ref()
            .is_some_and(|(a, _)| opts.agent.as_deref() == Some(a.name.as_str()));
        if let (Some(a), Err(why), false) = (&opts.agent, &choice, named_device) {
            send(
                &tx,
                RunEvent::Notice {
                    text: format!("cannot ask {a}: {why}; answering with the local model"),
                },
            )
            .await;
        }
        let mut summary = Summary {
            route: Some(plan.route),
            ..Summary::default()
        };
        if let (Some(Strategy::Device), Some((agent, key))) = (plan.strategy, &device) {
            match self
                .run_device(&task, &opts, agent, key, &plan, &tx, &mut summary)
                .await
            {
                Ok(()) => return Ok(summary),
                Err(why) => {
                    summary.agent = None;
                    self.fall_back(why, &task, &opts, &tx, &mut summary).await?;
                    return Ok(summary);
                }
            }
        }
        if let (true, Ok(_), Some(shape)) = (
            plan.local_attempt,
            &choice,
            super::selfcheck::shape(&task.prompt),
        ) {
            match self
                .judged_local(&task, &opts, &shape, &tx, &mut summary)
                .await
            {
                Ok(j) if j.kept() => {
                    send(
                        &tx,
                        RunEvent::Notice {
                            text: format!("answered locally: {}", j.why),
                        },
                    )
                    .await;
                    summary.text = j.text.clone();
                    summary.answered_by = Some("local".into());
                    send(&tx, RunEvent::Text { text: j.text }).await;
                    return Ok(summary);
                }
                Ok(j) => {
                    summary.escalated = true;
                    send(
                        &tx,
                        RunEvent::Notice {
                            text: format!("escalated: {}", j.why),
                        },
                    )
                    .await;
                }
                // The attempt is an extra: the task goes on as planned without it.
                Err(e) => tracing::warn!(error = %e, "local attempt failed"),
            }
        }
        match (plan.route, choice) {
            (Route::Local, _) | (_, Err(_)) => {
                if !opts.tools.is_empty() {
                    send(
                        &tx,
                        RunEvent::Notice {
                            text: "the local model answered in words: tools are offered to cloud agents only".into(),
                        },
                    )
                    .await;
                }
                self.run_local(&task, &opts, &tx, &mut summary).await?;
            }
            (_, Ok((agent, key))) => {
                let call = CloudCall {
                    task: &task,
                    plan: &plan,
                    opts: &opts,
                    agent: &agent,
                    key: &key,
                    tx: &tx,
                };
                let ran = if plan.strategy == Some(Strategy::CloudPlans) {
                    self.run_cloud_plans(call, &mut summary).await
                } else if plan.local_rewrite {
                    self.run_rewrite(call, &mut summary).await
                } else {
                    self.run_cloud(call, &mut summary).await
                };
                if let Err(why) = ran {
                    self.fall_back(why, &task, &opts, &tx, &mut summary).await?;
                }
            }
        }
        Ok(summary)
    }

    /// A remote step (the cloud, or the user's device) failed: the local model answers
    /// instead, after what already arrived, and says why. Without a local model there is
    /// nothing to fall back to: the host gets the step's own error (an API answers 502/504).
    async fn fall_back(
        &self,
        why: StepError,
        task: &Task,
        opts: &RunOptions,
        tx: &mpsc::Sender<RunEvent>,
        summary: &mut Summary,
    ) -> Result<(), RunError> {
        if self.local.is_none() {
            return Err(RunError::CloudFailed(why));
        }
        send(
            tx,
            RunEvent::Notice {
                text: format!("{why}; answering with the local model"),
            },
        )
        .await;
        summary.fell_back = true;
        if !summary.text.is_empty() {
            summary.text.push_str("\n\n");
            send(
                tx,
                RunEvent::Text {
                    text: "\n\n".into(),
                },
            )
            .await;
        }
        self.run_local(task, opts, tx, summary).await
    }

    async fn run_local(
        &self,
        task: &Task,
        opts: &RunOptions,
        tx: &mpsc::Sender<RunEvent>,
        summary: &mut Summary,
    ) -> Result<(), RunError> {
        self.run_local_with(task, opts, tx, summary, false).await
    }

    /// `run_local`; `cloud_instructed`: the local model follows text the cloud wrote while it
    /// reads private material (cloud plans; completing a cloud draft), so what would load by
    /// itself in its answer is defused (`LoadGuard`): a prompt-injected instruction could
    /// otherwise have it write a private value into an image's address.
    async fn run_local_with(
        &self,
        task: &Task,
        opts: &RunOptions,
        tx: &mpsc::Sender<RunEvent>,
        summary: &mut Summary,
        cloud_instructed: bool,
    ) -> Result<(), RunError> {
        let Some(local) = &self.local else {
            return Err(RunError::NoLocal("start Tandem with a local model".into()));
        };
        if let Some(shape) = opts
            .self_check
            .then(|| super::selfcheck::shape(&task.prompt))
            .flatten()
        {
            let j = self.judged_local(task, opts, &shape, tx, summary).await?;
            let text = j.local_only.unwrap_or(j.text);
            let text = if cloud_instructed {
                crate::sensitivity::LoadGuard::defuse(&text)
            } else {
                text
            };
            summary.text.push_str(&text);
            send(tx, RunEvent::Text { text }).await;
            return Ok(());
        }
        let mut guard = cloud_instructed.then(crate::sensitivity::LoadGuard::new);
        send(
            tx,
            RunEvent::Step {
                step: "answer".into(),
                place: "local".into(),
            },
        )
        .await;
        let req = GenerateRequest {
            messages: on_device_messages(task),
            max_tokens: opts.max_tokens.max(1),
            temperature: opts.temperature,
            logprobs: None,
            choices: Vec::new(),
            plain: false,
            stop: Vec::new(),
        };
        let clock = LocalClock::start();
        let mut stream = local.generate(req)?;
        while let Some(ev) = stream.next().await {
            match ev? {
                StreamEvent::Token { text } => {
                    let text = match guard.as_mut() {
                        Some(g) => g.push(&text),
                        None => text,
                    };
                    if !text.is_empty() {
                        summary.text.push_str(&text);
                        send(tx, RunEvent::Text { text }).await;
                    }
                }
                StreamEvent::Done { metrics } => {
                    if let Some(text) = guard.as_mut().map(|g| g.finish()).filter(|t| !t.is_empty())
                    {
                        summary.text.push_str(&text);
                        send(tx, RunEvent::Text { text }).await;
                    }
                    self.account_local(local.as_ref(), opts, &metrics, clock, summary)
                        .await;
                    return Ok(());
                }
            }
        }
        Err(crate::local::LocalError::Stopped.into())
    }

    /// The local model's answer in the form `shape` asks for, with its confidence (recorded in
    /// the summary); nothing is shown yet: the caller decides whether it is the answer.
    async fn judged_local(
        &self,
        task: &Task,
        opts: &RunOptions,
        shape: &super::selfcheck::Shape,
        tx: &mpsc::Sender<RunEvent>,
        summary: &mut Summary,
    ) -> Result<super::selfcheck::Judged, RunError> {
        let Some(local) = &self.local else {
            return Err(RunError::NoLocal("start Tandem with a local model".into()));
        };
        send(
            tx,
            RunEvent::Step {
                step: "answer and check its confidence".into(),
                place: "local".into(),
            },
        )
        .await;
        let req =
            super::selfcheck::request(shape, on_device_messages(task), opts.max_tokens.max(1));
        let (text, metrics) = self.local_whole(local.as_ref(), req, opts, summary).await?;
        tracing::debug!(?shape, logprobs = ?metrics.logprobs, "local attempt");
        let mut j = super::selfcheck::judge(shape, &task.prompt, &text, &metrics.logprobs);
        if matches!(shape, super::selfcheck::Shape::Worked) {
            if metrics.finish_reason == crate::local::FINISHED_AT_LENGTH {
                j = j.cut_off();
            }
            // Worked again as a program, and where that disagrees with the words, as a second
            // program written another way: kept when two of the three reach the same number.
            let messages = on_device_messages(task);
            let mut programs = Vec::new();
            for (nth, step) in [
                "check the answer as arithmetic",
                "check it again as arithmetic, another way",
            ]
            .into_iter()
            .enumerate()
            {
                if j.settled_by(&programs) {
                    break;
                }
                let Some(req) = super::selfcheck::program_request(shape, &messages, nth) else {
                    break;
                };
                send(
                    tx,
                    RunEvent::Step {
                        step: step.into(),
                        place: "local".into(),
                    },
                )
                .await;
                let (program, m) = self.local_whole(local.as_ref(), req, opts, summary).await?;
                tracing::debug!(nth, %program, finish = %m.finish_reason, "local program");
                // A program cut off at the token limit computes nothing worth comparing.
                programs.push(if m.finish_reason == crate::local::FINISHED_AT_LENGTH {
                    String::new()
                } else {
                    program
                });
            }
            j = j.confirmed_by(&programs);
        }
        summary.confidence = Some((j.confidence * 1000.0).round() / 1000.0);
        summary.keep = j.keep.map(|k| (k * 1000.0).round() / 1000.0);
        Ok(j)
    }

    /// Private work on one of the user's own devices: the task as the local model would read
    /// it (the agent's role first), through the door's device path (Pause devices, the ledger
    /// as a device transmission); its answer streams like the local model's.
    #[allow(clippy::too_many_arguments)]
    async fn run_device(
        &self,
        task: &Task,
        opts: &RunOptions,
        agent: &Agent,
        key: &str,
        plan: &Plan,
        tx: &mpsc::Sender<RunEvent>,
        summary: &mut Summary,
    ) -> Result<(), StepError> {
        let provider_cfg = self
            .catalog
            .provider(&agent.provider)
            .ok_or_else(|| StepError::Internal(format!("unknown provider {}", agent.provider)))?;
        let mut messages = vec![ChatMessage::new(
            Role::System,
            self.catalog.role_of(agent).to_string(),
        )];
        messages.extend(on_device_messages(task));
        let req = crate::egress::DeviceRequest::new(
            &opts.task_id,
            agent,
            provider_cfg,
            messages,
            Some(opts.max_tokens.max(1) as u32),
            opts.temperature,
            plan.reasons.clone(),
        )
        .map_err(StepError::Egress)?;
        let sent_tokens = (req.chars() / 4) as u64;
        send(
            tx,
            RunEvent::Step {
                step: format!("ask your device {}", agent.name),
                place: "device".into(),
            },
        )
        .await;
        let provider = self
            .reliable(&agent.provider)
            .map_err(|e| StepError::Run(Box::new(e)))?;
        let mut stream = self
            .egress
            .send_device(req, &provider, key)
            .await
            .map_err(StepError::Egress)?;
        summary.agent = Some(format!("your device: {}", agent.name));
        while let Some(ev) = stream.next().await {
            match ev {
                Ok(CloudEvent::Delta { text }) => {
                    if !text.is_empty() {
                        summary.text.push_str(&text);
                        send(tx, RunEvent::Text { text }).await;
                    }
                }
                Ok(CloudEvent::Done { usage, .. }) => {
                    // The user's own hardware: tokens count as local work, at no price.
                    let (tin, tout) = usage
                        .map(|u| (u.prompt_tokens, u.completion_tokens))
                        .unwrap_or((sent_tokens, 0));
                    summary.local_tokens += tin + tout;
                    summary.prompt_tokens += tin;
                    summary.completion_tokens += tout;
                    return Ok(());
                }
                Err(e) => {
                    return Err(StepError::Cloud {
                        agent: agent.name.clone(),
                        source: e,
                    })
                }
            }
        }
        Err(StepError::Cut {
            agent: agent.name.clone(),
        })
    }

    /// One whole local generation (not shown while it runs), accounted in the summary.
    async fn local_whole(
        &self,
        local: &dyn LocalEngine,
        req: GenerateRequest,
        opts: &RunOptions,
        summary: &mut Summary,
    ) -> Result<(String, crate::local::GenerationMetrics), crate::local::LocalError> {
        let clock = LocalClock::start();
        let (text, metrics) = local.generate(req)?.collect_text().await?;
        self.account_local(local, opts, &metrics, clock, summary)
            .await;
        Ok((text, metrics))
    }

    /// Adds one local generation to the task's accounting and the ledger (metrics only).
    async fn account_local(
        &self,
        local: &dyn LocalEngine,
        opts: &RunOptions,
        metrics: &crate::local::GenerationMetrics,
        clock: LocalClock,
        summary: &mut Summary,
    ) {
        let LocalClock {
            started,
            energy_start,
        } = clock;
        let tokens = (metrics.prompt_tokens + metrics.completion_tokens) as u64;
        summary.local_tokens += tokens;
        summary.prompt_tokens += metrics.prompt_tokens as u64;
        summary.completion_tokens += metrics.completion_tokens as u64;
        let cpu_s = metrics
            .cpu_ms
            .unwrap_or(started.elapsed().as_secs_f64() * 1000.0)
            / 1000.0;
        // Measured package energy when readable (it includes other processes' share of the
        // package during the run), else CPU time × per-core power.
        summary.energy_local_j += match (energy_start, rapl_uj()) {
            (Some(a), Some(b)) if b >= a => (b - a) as f64 / 1e6,
            _ => cpu_s * WATTS_PER_CORE,
        };
        if let Some(l) = self.egress.ledger() {
            let run = LocalRun {
                task: opts.task_id.clone(),
                model: local.model().name.clone(),
                prompt_tokens: metrics.prompt_tokens as u64,
                completion_tokens: metrics.completion_tokens as u64,
                millis: started.elapsed().as_millis() as u64,
            };
            if let Err(e) = l.local_run(run).await {
                tracing::warn!(error = %e, "could not record a local run");
            }
        }
    }

    /// Strategy (c), cloud plans and local executes: the cloud writes instructions from the
    /// task and the private documents' structure; the local model follows them over each part
    /// of each private document, then answers from its findings. The findings come from
    /// private material, so they are combined on the device and never sent.
    async fn run_cloud_plans(
        &self,
        call: CloudCall<'_>,
        summary: &mut Summary,
    ) -> Result<(), StepError> {
        let CloudCall {
            task,
            plan,
            opts,
            agent,
            tx,
            ..
        } = call;
        let Some(local) = self.local.clone() else {
            return Err(StepError::NoLocal);
        };
        let draft = draft_request(task, plan, opts, agent, self.catalog.role_of(agent), &[]);
        let step = format!("plan with {}", agent.name);
        let reply = self.ask_cloud(draft, call, summary, false, step).await?;
        let steps = instructions(&reply).unwrap_or_else(|| format!("1. {}", task.prompt));
        let mut findings = Vec::new();
        for a in task
            .attachments
            .iter()
            .filter(|a| super::is_private(a, plan))
        {
            let (parts, cut) = super::parts_of(&a.text);
            if cut {
                send(
                    tx,
                    RunEvent::Notice {
                        text: format!(
                            "{} is long: only its first {} parts were read",
                            a.name,
                            parts.len()
                        ),
                    },
                )
                .await;
            }
            for (i, part) in parts.iter().enumerate() {
                send(
                    tx,
                    RunEvent::Step {
                        step: format!("read {} part {}/{}", a.name, i + 1, parts.len()),
                        place: "local".into(),
                    },
                )
                .await;
                let req = GenerateRequest {
                    messages: vec![
                        ChatMessage::new(
                            Role::System,
                            "Follow the instructions on this part of a private document. Answer briefly with what you find. If the part holds nothing for the instructions, answer NONE.",
                        ),
                        ChatMessage::user(format!(
                            "Task: {}\n\nInstructions:\n{steps}\n\nPart {} of {}:\n{part}",
                            task.prompt,
                            i + 1,
                            parts.len()
                        )),
                    ],
                    max_tokens: 128,
                    temperature: None,
                    logprobs: None,
                choices: Vec::new(),
                plain: false,
                stop: Vec::new(),
                };
                let (out, _) = self.local_whole(local.as_ref(), req, opts, summary).await?;
                let out = out.trim();
                if !out.is_empty() && !out.eq_ignore_ascii_case("none") {
                    findings.push(format!("- {} part {}: {out}", a.name, i + 1));
                }
            }
        }
        if findings.is_empty() {
            findings.push("- nothing relevant was found".into());
        }
        let combined = Task {
            prompt: format!(
                "{}\n\nFindings from the private documents, gathered on this device:\n{}",
                task.prompt,
                findings.join("\n")
            ),
            attachments: Vec::new(),
            history: task.history.clone(),
            policy: task.policy,
        };
        self.run_local_with(&combined, opts, tx, summary, true)
            .await
            .map_err(|e| StepError::Run(Box::new(e)))
    }

    /// Local rewrite (PAPILLON's idea, `plan.local_rewrite`): the local model writes the request
    /// without the person in it; the rewrite is planned like any request (`plan`, the one
    /// decision of what may leave) and goes through the sanitizer and the door; the cloud's
    /// answer is then completed on the device with the original details. A rewrite that is
    /// empty, repeats a withheld passage of the prompt, or still reads as private is dropped
    /// and the masked request goes as planned, with a notice.
    async fn run_rewrite(
        &self,
        call: CloudCall<'_>,
        summary: &mut Summary,
    ) -> Result<(), StepError> {
        let CloudCall {
            task,
            plan,
            opts,
            agent,
            tx,
            ..
        } = call;
        let Some(local) = self.local.clone() else {
            return self.run_cloud(call, summary).await;
        };
        send(
            tx,
            RunEvent::Step {
                step: "rewrite the request without your details".into(),
                place: "local".into(),
            },
        )
        .await;
        let req = GenerateRequest {
            messages: vec![
                ChatMessage::new(Role::System, REWRITE_ROLE),
                ChatMessage::user(task.prompt.clone()),
            ],
            // Room for a request as long as the prompt and some more, never an essay.
            max_tokens: (task.prompt.len() / 3).clamp(48, 320),
            temperature: None,
            logprobs: None,
            choices: Vec::new(),
            plain: false,
            stop: Vec::new(),
        };
        let (out, _) = self.local_whole(local.as_ref(), req, opts, summary).await?;
        let rewrite = rewritten(&out);
        let (scanner, prompt, fragments) = (
            self.sanitizer.scanner().clone(),
            task.prompt.clone(),
            plan.fragments.clone(),
        );
        let (history, policy, local_class) = (task.history.clone(), task.policy, self.local_class);
        let checked = tokio::task::spawn_blocking(move || {
            check_rewrite(
                &scanner,
                &prompt,
                &fragments,
                rewrite,
                history,
                policy,
                local_class,
            )
        })
        .await
        .map_err(|e| StepError::Internal(e.to_string()))?;
        let (rtask, rplan) = match checked {
            Ok(ok) => ok,
            Err(why) => {
                send(
                    tx,
                    RunEvent::Notice {
                        text: format!("{why}: the masked request goes instead"),
                    },
                )
                .await;
                return self.run_cloud(call, summary).await;
            }
        };
        let draft = draft_request(
            &rtask,
            &rplan,
            opts,
            agent,
            self.catalog.role_of(agent),
            &[],
        );
        let step = format!("ask {} (the rewritten request)", agent.name);
        let reply = self
            .ask_cloud(
                draft,
                CloudCall {
                    task: &rtask,
                    plan: &rplan,
                    ..call
                },
                summary,
                false,
                step,
            )
            .await?;
        // The answer is completed on the device: the original request (which never left) with
        // the cloud's draft; if the local model fails, the draft is the answer.
        let merge = Task {
            prompt: format!(
                "{}\n\nA draft answer, written without the details above:\n{reply}\n\nWrite the final answer to the request above from the draft, with the request's own details where they belong. Change nothing else.",
                task.prompt
            ),
            attachments: Vec::new(),
            history: task.history.clone(),
            policy: task.policy,
        };
        let merge_opts = RunOptions {
            self_check: false,
            ..opts.clone()
        };
        if let Err(e) = self
            .run_local_with(&merge, &merge_opts, tx, summary, true)
            .await
        {
            tracing::warn!(error = %e, "completing the answer on the device failed");
            summary.text = reply.clone();
            send(tx, RunEvent::Text { text: reply }).await;
        }
        summary.answered_by = Some("cloud".into());
        Ok(())
    }

    /// The local model writes an abstract of one private document for the task.
    async fn abstract_of(
        &self,
        task: &Task,
        name: &str,
        text: &str,
        tx: &mpsc::Sender<RunEvent>,
    ) -> Option<String> {
        let local = self.local.as_ref()?;
        send(
            tx,
            RunEvent::Step {
                step: format!("read {name}"),
                place: "local".into(),
            },
        )
        .await;
        let messages = vec![
            ChatMessage::new(Role::System, "You read a private document for a task. Write a short, general abstract that helps with the task. Do not copy names, numbers, identifiers, addresses, or health, financial or legal details."),
            ChatMessage::user(format!("Task: {}\n\nDocument:\n{}", task.prompt, text)),
        ];
        let req = GenerateRequest {
            messages,
            max_tokens: 96,
            temperature: None,
            logprobs: None,
            choices: Vec::new(),
            plain: false,
            stop: Vec::new(),
        };
        let (out, _) = local.generate(req).ok()?.collect_text().await.ok()?;
        Some(out)
    }

    async fn run_cloud(&self, call: CloudCall<'_>, summary: &mut Summary) -> Result<(), StepError> {
        let CloudCall {
            task,
            plan,
            opts,
            agent,
            tx,
            ..
        } = call;
        // Abstracts the local model writes of the private documents (local_extract); the draft
        // places each after its document.
        let mut abstracts = Vec::new();
        for a in &task.attachments {
            let has_local = plan
                .fragments
                .iter()
                .any(|f| f.source == a.name && f.class == crate::sensitivity::Verdict::LocalOnly);
            // Abstracts only of documents whose private passages the scanner found; a file from
            // a sensitive folder is private whatever it says, so nothing derived from it leaves.
            if plan.strategy == Some(Strategy::LocalExtract) && has_local && !a.sensitive_source {
                let Some(abs) = self.abstract_of(task, &a.name, &a.text, tx).await else {
                    continue;
                };
                // Small models copy: an abstract that repeats four words in a row of the
                // document is not an abstract.
                if copies(&abs, &a.text) {
                    send(
                        tx,
                        RunEvent::Notice {
                            text: format!(
                                "the local abstract of {} repeated the document; it stays local",
                                a.name
                            ),
                        },
                    )
                    .await;
                    continue;
                }
                abstracts.push((a.name.clone(), abs));
            }
        }
        let mut draft = draft_request(
            task,
            plan,
            opts,
            agent,
            self.catalog.role_of(agent),
            &abstracts,
        );
        // An abstract is written from private passages of the user's own material: its health,
        // money, legal and education terms count without a personal word beside them, as the
        // passages' did ("the student's grade is a C+" stays here however it is worded).
        if !abstracts.is_empty() {
            let scanner = self.sanitizer.scanner().clone();
            let strict = task.policy == super::Policy::Private;
            let texts: Vec<String> = abstracts.iter().map(|(_, a)| a.clone()).collect();
            let decided = tokio::task::spawn_blocking(move || {
                texts
                    .into_iter()
                    .map(|t| {
                        let d = crate::sensitivity::decide_material(
                            &scanner,
                            &t,
                            Provenance::Content,
                            strict,
                            true,
                        );
                        (t, d)
                    })
                    .collect::<Vec<_>>()
            })
            .await
            .map_err(|e| StepError::Internal(e.to_string()))?;
            draft.decisions = draft.decisions.with(decided);
        }
        let step = format!("ask {}", agent.name);
        self.ask_cloud(draft, call, summary, true, step)
            .await
            .map(|_| ())
    }

    /// Sanitizes `draft`, sends it through the egress guard and reads the reply with the
    /// placeholders restored, accounting tokens, cost and energy. With `show` the reply is the
    /// answer (streamed as text events into the summary); without, it is an intermediate
    /// result (a plan) the caller uses. Returns the restored reply.
    async fn ask_cloud(
        &self,
        draft: Draft,
        call: CloudCall<'_>,
        summary: &mut Summary,
        show: bool,
        step: String,
    ) -> Result<String, StepError> {
        let CloudCall {
            task,
            opts,
            agent,
            key,
            tx,
            ..
        } = call;
        let mut out = String::new();
        let sanitizer = self.sanitizer.clone();
        let vault = opts.vault.clone();
        let start = vault
            .as_ref()
            .map(|v| v.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default();
        let (req, mut pz) = tokio::task::spawn_blocking(move || {
            let mut pz = start;
            (sanitizer.sanitize(draft, &mut pz), pz)
        })
        .await
        .map_err(|e| StepError::Internal(e.to_string()))?;
        // What was issued is kept before anything is sent: a reply may use any of it.
        if let Some(v) = &vault {
            *v.lock().unwrap_or_else(|p| p.into_inner()) = pz.clone();
        }
        let req = req.map_err(StepError::Egress)?;
        summary.masked += req.masked();
        summary.withheld += req.withheld();
        summary.agent = Some(agent.name.clone());
        let sent_tokens = (req.text().len() / 4) as u64;
        summary.all_cloud_cost_usd =
            agent.cost((summary_chars(task) / 4) as u64, opts.max_tokens as u64);
        send(
            tx,
            RunEvent::Step {
                step,
                place: "cloud".into(),
            },
        )
        .await;
        let provider = self
            .reliable(&agent.provider)
            .map_err(|e| StepError::Run(Box::new(e)))?;
        let mut stream = match self.egress.send(req, &provider, key).await {
            Ok(s) => s,
            Err(e @ EgressError::Blocked(_)) => return Err(StepError::Blocked(e)),
            Err(e) => return Err(StepError::Egress(e)),
        };
        let mut restore = StreamRestore::new();
        while let Some(ev) = stream.next().await {
            match ev {
                Ok(CloudEvent::Delta { text }) => {
                    let shown = restore.push(&mut pz, &text);
                    if !shown.is_empty() {
                        emit(&mut out, summary, tx, show, shown).await;
                    }
                }
                Ok(CloudEvent::Done {
                    usage, tool_calls, ..
                }) => {
                    let shown = restore.finish(&mut pz);
                    emit(&mut out, summary, tx, show, shown).await;
                    // The client's tools run on this machine and need the real values, unless
                    // the call reaches beyond it (a network tool, or an address or a fetching
                    // command in any of its arguments): then every placeholder in it stays, as
                    // in a link (`call_reaches_out`).
                    for mut c in tool_calls.into_iter().filter(|_| show) {
                        let mut strings = Vec::new();
                        crate::egress::map_json_strings(&c.function.arguments, |s| {
                            strings.push(s.to_string());
                            s.to_string()
                        });
                        let strings: Vec<&str> = strings.iter().map(String::as_str).collect();
                        let reaches = crate::sensitivity::pseudonym::call_reaches_out(
                            &c.function.name,
                            &strings,
                        );
                        c.function.arguments =
                            crate::egress::map_json_strings(&c.function.arguments, |s| {
                                let r = if reaches {
                                    pz.keep_argument(s)
                                } else {
                                    pz.restore_argument(s)
                                };
                                restore.refused.extend(r.refused);
                                restore.unknown.extend(r.unknown);
                                r.text
                            });
                        summary.tool_calls.push(c);
                    }
                    let (tin, tout) = usage
                        .map(|u| (u.prompt_tokens, u.completion_tokens))
                        .unwrap_or((sent_tokens, 0));
                    summary.cloud_tokens += tin + tout;
                    summary.prompt_tokens += tin;
                    summary.completion_tokens += tout;
                    summary.cost_usd += agent.cost(tin, tout);
                    summary.energy_cloud_j += (tin + tout) as f64 * CLOUD_JOULES_PER_TOKEN;
                    if !restore.refused.is_empty() {
                        send(
                            tx,
                            RunEvent::Notice {
                                text: format!(
                                    "left as placeholders: {} (in a link or a command that fetches, the real value would be sent to whoever wrote the address)",
                                    restore.refused.join(", ")
                                ),
                            },
                        )
                        .await;
                    }
                    if !restore.unknown.is_empty() {
                        send(
                            tx,
                            RunEvent::Notice {
                                text: format!(
                                    "the answer used placeholders Tandem never issued: {}",
                                    restore.unknown.join(", ")
                                ),
                            },
                        )
                        .await;
                    }
                    return Ok(out);
                }
                Err(e) => {
                    let shown = restore.finish(&mut pz);
                    emit(&mut out, summary, tx, show, shown).await;
                    return Err(StepError::Cloud {
                        agent: agent.name.clone(),
                        source: e,
                    });
                }
            }
        }
        Err(StepError::Cut {
            agent: agent.name.clone(),
        })
    }
}

/// The task as a model on the user's own hardware reads it (this machine's, or a device's):
/// the history as it is, then the prompt with every attachment in full.
fn on_device_messages(task: &Task) -> Vec<ChatMessage> {
    let mut prompt = task.prompt.clone();
    for a in &task.attachments {
        prompt.push_str(&attachment_block(a, &a.text));
    }
    let mut messages = task.history.clone();
    if !prompt.is_empty() || messages.is_empty() {
        messages.push(ChatMessage::user(prompt));
    }
    messages
}

/// Appends a piece of a cloud reply to `out`; when it is the answer, shows it too.
async fn emit(
    out: &mut String,
    summary: &mut Summary,
    tx: &mpsc::Sender<RunEvent>,
    show: bool,
    text: String,
) {
    out.push_str(&text);
    if show {
        summary.text.push_str(&text);
        send(tx, RunEvent::Text { text }).await;
    }
}

/// What the cloud reads in place of an earlier answer the local model wrote from private
/// material.
pub const PRIVATE_ANSWER: &str =
    "[An earlier answer was written on this device from private material; it is not shared.]";

/// What every cloud step of a task works with.
#[derive(Clone, Copy)]
struct CloudCall<'a> {
    task: &'a Task,
    plan: &'a Plan,
    opts: &'a RunOptions,
    agent: &'a Agent,
    key: &'a str,
    tx: &'a mpsc::Sender<RunEvent>,
}

/// The one function that drafts what a plan sends (before sanitizing): under cloud_plans the
/// planner's role with the task and the private documents' structure; otherwise `role` with the
/// prompt and each attachment on its own terms, followed by the abstract the local model wrote
/// of it (`abstracts`: name → text, local_extract). Runs and `tandem route --jsonl` both draft
/// here, so the dry run's payload is what the run sends for the same task.
pub fn draft_request(
    task: &Task,
    plan: &Plan,
    opts: &RunOptions,
    agent: &Agent,
    role: &str,
    abstracts: &[(String, String)],
) -> Draft {
    if plan.strategy == Some(Strategy::CloudPlans) {
        return draft_of(
            task,
            plan,
            opts,
            agent,
            super::PLANNER_ROLE.to_string(),
            super::cloud_plans_parts(task, plan),
            PLANNER_MAX_TOKENS,
        );
    }
    let mut parts = vec![(task.prompt.clone(), Provenance::Content)];
    for (i, a) in task.attachments.iter().enumerate() {
        parts.extend(super::attachment_parts(a, i, plan));
        for (_, abs) in abstracts.iter().filter(|(n, _)| *n == a.name) {
            parts.push((
                format!(
                    "\n\nAbstract of document {} written on the device:\n",
                    super::attachment_title(a, i, plan)
                ),
                Provenance::Content,
            ));
            parts.push((abs.clone(), Provenance::Content));
        }
    }
    draft_of(
        task,
        plan,
        opts,
        agent,
        role.to_string(),
        parts,
        opts.max_tokens as u32,
    )
}

/// Room for the planner's numbered instructions.
const PLANNER_MAX_TOKENS: u32 = 300;

/// The request for a cloud step: the conversation so far, then the user's turn made of
/// `parts` (the sanitizer treats each on its own terms).
fn draft_of(
    task: &Task,
    plan: &Plan,
    opts: &RunOptions,
    agent: &Agent,
    system: String,
    parts: Vec<(String, Provenance)>,
    max_tokens: u32,
) -> Draft {
    // The earlier turns exactly as the plan classified them.
    let mut turns: Vec<Turn> = task
        .history
        .iter()
        .map(|m| Turn::of(m, super::history_text(m).into_owned()))
        .collect();
    // A turn that only carries tool results back has no new words of the user's.
    if parts.iter().any(|(t, _)| !t.is_empty()) {
        turns.push(Turn {
            parts,
            ..Turn::new(Role::User, "")
        });
    }
    Draft {
        task: opts.task_id.clone(),
        agent: agent.clone(),
        system: Some(system),
        turns,
        max_tokens: Some(max_tokens),
        temperature: opts.temperature,
        // The planner writes instructions, not calls: only the answering step gets the tools.
        tools: if plan.strategy == Some(Strategy::CloudPlans) {
            Default::default()
        } else {
            opts.tools.clone()
        },
        reasons: plan.reasons.clone(),
        decisions: plan.decisions.clone(),
    }
}

/// When a local generation started, and the package energy counter then (when readable).
#[derive(Clone, Copy)]
struct LocalClock {
    started: Instant,
    energy_start: Option<u64>,
}

impl LocalClock {
    fn start() -> Self {
        Self {
            started: Instant::now(),
            energy_start: rapl_uj(),
        }
    }
}

/// Why a cloud step (or the local work inside a split plan) failed, typed to the edge: hosts
/// map the variant (an API answers 504 for a timeout, 502 otherwise), never a string.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StepError {
    /// The last-line check blocked the payload.
    #[error("the egress guard blocked the request ({0})")]
    Blocked(#[source] EgressError),
    /// The door did not send: paused, nothing to send, the provider refused or could not be
    /// reached before the reply began, or the ledger failed.
    #[error(transparent)]
    Egress(EgressError),
    #[error("{agent} failed: {source}")]
    Cloud {
        agent: String,
        #[source]
        source: crate::cloud::CloudError,
    },
    #[error("the reply from {agent} ended early")]
    Cut { agent: String },
    /// Reading private documents on the device failed (cloud plans, local extract).
    #[error("reading the private documents needs the local model")]
    NoLocal,
    #[error(transparent)]
    Local(#[from] crate::local::LocalError),
    #[error(transparent)]
    Run(Box<RunError>),
    #[error("internal: {0}")]
    Internal(String),
}

impl crate::ErrorCode for StepError {
    fn code(&self) -> &'static str {
        match self {
            StepError::Blocked(e) | StepError::Egress(e) => e.code(),
            StepError::Cloud { source, .. } => source.code(),
            StepError::Cut { .. } => "cloud.stream_cut",
            StepError::NoLocal => "router.no_local",
            StepError::Local(e) => e.code(),
            StepError::Run(e) => e.code(),
            StepError::Internal(_) => "router.internal",
        }
    }
}

impl StepError {
    /// A provider timed out (before or during the reply).
    pub fn timed_out(&self) -> bool {
        matches!(
            self,
            StepError::Cloud {
                source: crate::cloud::CloudError::Timeout { .. },
                ..
            } | StepError::Egress(EgressError::Cloud(crate::cloud::CloudError::Timeout { .. }))
        )
    }
}

/// The numbered instructions in a planner's reply ("1. ...", "2) ..."), at most four, as a
/// numbered list again; `None` when it has none.
fn instructions(reply: &str) -> Option<String> {
    let steps: Vec<&str> = reply
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let digits = l.chars().take_while(char::is_ascii_digit).count();
            let rest = l[digits..].strip_prefix(['.', ')'])?;
            (digits > 0 && !rest.trim().is_empty()).then(|| rest.trim())
        })
        .take(4)
        .collect();
    (!steps.is_empty()).then(|| {
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{}. {s}", i + 1))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The local model's role when it rewrites a request for the cloud (local rewrite).
const REWRITE_ROLE: &str = "Rewrite the user's request so that a helper who must not learn who the user is can still do the task. Keep the task, its constraints and any public facts it needs. Leave out or generalize names of people, organizations and places, dates, numbers, identifiers, contact details, and health, financial or legal details about anyone (\"my sister Ana\" becomes \"a family member\"). Write only the rewritten request.";

/// The request in what the local model wrote: trimmed, without a label or quotes around it.
fn rewritten(out: &str) -> String {
    let mut t = out.trim();
    for label in ["rewritten request:", "request:", "rewrite:"] {
        if t.len() >= label.len() && t[..label.len()].eq_ignore_ascii_case(label) {
            t = t[label.len()..].trim_start();
        }
    }
    let t = t
        .trim_matches(|c| c == '"' || c == '\u{201c}' || c == '\u{201d}')
        .trim();
    t.to_string()
}

/// Whether a rewrite may go in place of the prompt, and the task and plan it goes with: it says
/// something, repeats no withheld passage of the prompt (four words in a row), and its own plan
/// (the same decision as for any request; `force_cloud`, as the router already chose the
/// cloud) does not keep it local. Err: why not.
fn check_rewrite(
    scanner: &crate::sensitivity::Scanner,
    prompt: &str,
    fragments: &[super::PlanFragment],
    rewrite: String,
    history: Vec<ChatMessage>,
    policy: super::Policy,
    local_class: LocalClass,
) -> Result<(Task, Plan), String> {
    if rewrite.split_whitespace().count() < 3 {
        return Err("the local rewrite was empty".into());
    }
    let withheld = fragments
        .iter()
        .filter(|f| f.source == "prompt" && f.class == crate::sensitivity::Verdict::LocalOnly)
        .map(|f| {
            prompt
                .chars()
                .skip(f.start)
                .take(f.end - f.start)
                .collect::<String>()
        });
    for w in withheld {
        if copies(&rewrite, &w) {
            return Err("the local rewrite repeated a private passage".into());
        }
    }
    let task = Task {
        prompt: rewrite,
        attachments: Vec::new(),
        history,
        policy,
    };
    let ctx = super::Context {
        local_class,
        cloud_available: true,
        cloud_unavailable_reason: None,
        force_cloud: true,
        device: None,
        device_chosen: false,
        no_local: false,
        degraded: None,
    };
    let plan = super::plan(scanner, &task, &ctx);
    if plan.route == Route::Local {
        return Err("the local rewrite still reads as private".into());
    }
    Ok((task, plan))
}

/// Whether `derived` repeats a run of four words of `source` (case-insensitive).
fn copies(derived: &str, source: &str) -> bool {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let src = words(source);
    let grams: std::collections::HashSet<&[String]> = src.windows(4).collect();
    words(derived).windows(4).any(|w| grams.contains(w))
}

fn summary_chars(task: &Task) -> usize {
    task.prompt.len() + task.attachments.iter().map(|a| a.text.len()).sum::<usize>()
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_abstract_that_copies_four_words_is_refused() {
        let doc = "I was diagnosed with asthma in May and the inhaler helps.";
        assert!(super::copies(
            "The author was diagnosed with asthma, it says.",
            doc
        ));
        assert!(!super::copies(
            "A health condition is mentioned; treatment helps.",
            doc
        ));
    }
}
