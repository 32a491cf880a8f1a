//! The only door out. `Sanitizer::sanitize` is the one way to build a `SanitizedRequest` (every
//! turn masked or withheld by the sensitivity engine), and `Egress::send` is the one function in
//! Tandem that hands a request to a cloud provider: it honours the pause switch, re-scans the
//! exact payload (last-line check: anything sensitive that is not a placeholder blocks it),
//! and records what left (or was blocked) in the ledger before any byte goes out.

use std::sync::Arc;

use crate::pause::PauseSwitch;

use futures::{FutureExt, StreamExt};
use serde::Serialize;

use crate::cloud::agents::Agent;
use crate::cloud::reliable::Reliable;
use crate::cloud::{ChatMessage, CloudError, CloudEvent, CloudRequest, EventStream, Role};
use crate::ledger::{Ledger, LedgerError, Outbound};
use crate::sensitivity::{self, Provenance, Pseudonymizer, Scanner, Verdict};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EgressError {
    #[error("blocked before sending: {0}")]
    Blocked(String),
    #[error("the cloud is paused: nothing leaves this device")]
    Paused,
    #[error("nothing may leave: every part of this request is private")]
    NothingToSend,
    #[error(transparent)]
    Cloud(#[from] CloudError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

impl crate::ErrorCode for EgressError {
    fn code(&self) -> &'static str {
        match self {
            EgressError::Blocked(_) => "egress.blocked",
            EgressError::Paused => "egress.paused",
            EgressError::NothingToSend => "egress.nothing_to_send",
            EgressError::Cloud(e) => e.code(),
            EgressError::Ledger(e) => e.code(),
        }
    }
}

/// Proof that the egress guard is the one sending. Only this module can make one
/// (`SendPermit::issue` is private to it), and every function that transmits to a provider
/// (`CloudProvider::stream_body`, `Reliable::stream_observed`) asks for it: no host, test or
/// benchmark can reach the network without the pause switch, the last-line check and the
/// ledger.
pub struct SendPermit {
    _private: (),
}

impl SendPermit {
    fn issue() -> Self {
        Self { _private: () }
    }
}

/// One turn of what the task wants to send, before sanitizing: parts of different provenance
/// (the prompt, a document from a sensitive folder, ...) each sanitized on its own terms.
#[derive(Debug, Clone)]
pub struct Turn {
    pub role: Role,
    pub parts: Vec<(String, Provenance)>,
}

impl Turn {
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            parts: vec![(text.into(), Provenance::Content)],
        }
    }
}

/// A request as the orchestrator drafts it.
#[derive(Debug, Clone)]
pub struct Draft {
    pub task: String,
    pub agent: Agent,
    /// The agent's role; scanned like everything else.
    pub system: Option<String>,
    pub turns: Vec<Turn>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// Why this goes to the cloud (shown by --explain, kept in the ledger).
    pub reasons: Vec<String>,
    /// The plan's decision for each part it classified; the sanitizer applies them.
    pub decisions: sensitivity::Decisions,
}

/// A request whose every turn went through the sanitizer. No public constructor.
#[derive(Debug, Clone)]
pub struct SanitizedRequest {
    request: CloudRequest,
    task: String,
    agent: Agent,
    reasons: Vec<String>,
    masked: usize,
    withheld: usize,
}

/// The ledger's copy of a payload: the model and the messages exactly as sent.
#[derive(Serialize)]
struct Payload<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
}

impl SanitizedRequest {
    pub fn request(&self) -> &CloudRequest {
        &self.request
    }
    pub fn agent(&self) -> &Agent {
        &self.agent
    }
    pub fn masked(&self) -> usize {
        self.masked
    }
    pub fn withheld(&self) -> usize {
        self.withheld
    }
    pub fn reasons(&self) -> &[String] {
        &self.reasons
    }
    /// The text of every message, as the cloud will read it.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self
            .request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        parts.join("\n\n")
    }
    /// JSON of the model and messages: what the ledger stores and hashes.
    pub fn payload(&self) -> String {
        serde_json::to_string(&Payload {
            model: &self.request.model,
            messages: &self.request.messages,
        })
        .unwrap_or_default()
    }
}

/// Builds `SanitizedRequest`s by applying the plan's decisions: masks the spans the plan chose
/// (placeholders consistent within the conversation's vault) and withholds local-only
/// fragments.
#[derive(Clone)]
pub struct Sanitizer {
    scanner: Arc<Scanner>,
}

impl Sanitizer {
    pub fn new(scanner: Arc<Scanner>) -> Self {
        Self { scanner }
    }

    pub fn scanner(&self) -> &Arc<Scanner> {
        &self.scanner
    }

    /// CPU work (scanning): call from a blocking thread in async code.
    pub fn sanitize(
        &self,
        draft: Draft,
        pz: &mut Pseudonymizer,
    ) -> Result<SanitizedRequest, EgressError> {
        let mut messages = Vec::new();
        let (mut masked, mut withheld, mut useful) = (0, 0, false);
        let mut turns = Vec::new();
        if let Some(s) = draft.system.filter(|s| !s.trim().is_empty()) {
            turns.push(Turn::new(Role::System, s));
        }
        turns.extend(draft.turns);
        for t in turns {
            let mut content = String::new();
            for (text, provenance) in &t.parts {
                // The plan decided this part: apply its decision. Anything it never saw (the
                // role, headers, an abstract written during the turn) is decided now, by the
                // same function.
                let decided;
                let decision = match draft.decisions.get(text, *provenance) {
                    Some(d) => d,
                    None => {
                        decided = sensitivity::decide(&self.scanner, text, *provenance, false);
                        &decided
                    }
                };
                let r = sensitivity::apply(pz, text, decision);
                masked += r.masked;
                withheld += r.withheld;
                content.push_str(&r.text);
            }
            let only_withheld = content
                .split(sensitivity::redact::WITHHELD)
                .all(|rest| rest.trim().is_empty());
            if t.role == Role::User && !only_withheld {
                useful = true;
            }
            messages.push(ChatMessage::new(t.role, content));
        }
        if !useful {
            return Err(EgressError::NothingToSend);
        }
        Ok(SanitizedRequest {
            request: CloudRequest {
                model: draft.agent.model.clone(),
                messages,
                max_tokens: draft.max_tokens,
                temperature: draft.temperature,
            },
            task: draft.task,
            agent: draft.agent,
            reasons: draft.reasons,
            masked,
            withheld,
        })
    }
}

/// The last-line check over a sanitized payload: the reason to block, if any.
pub fn last_line_check(scanner: &Scanner, req: &SanitizedRequest) -> Option<String> {
    // Each message, then all of them together (a keyword in one turn, the value in the next).
    let joined = req.text();
    let texts = req
        .request
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .chain(std::iter::once(joined.as_str()));
    for text in texts {
        let report = scanner.scan_with(text, Provenance::Content);
        if report.verdict != Verdict::Public {
            let what: Vec<&str> = report
                .spans
                .iter()
                .filter(|s| !crate::sensitivity::is_context_only(&s.label))
                .map(|s| s.label.as_str())
                .collect();
            return Some(format!(
                "the outgoing text still contains {} ({:?})",
                if what.is_empty() {
                    "private content".to_string()
                } else {
                    what.join(", ")
                },
                report.verdict
            ));
        }
    }
    None
}

/// The egress guard.
pub struct Egress {
    scanner: Arc<Scanner>,
    ledger: Option<Ledger>,
    /// Shared with a send's retry hook, which re-checks it before each new transmission.
    pause: Arc<PauseSwitch>,
}

impl Egress {
    /// An egress guard with a pause switch of its own (tests, benchmarks).
    pub fn new(scanner: Arc<Scanner>, ledger: Option<Ledger>) -> Self {
        Self::with_pause(scanner, ledger, Arc::new(PauseSwitch::memory()))
    }

    /// An egress guard obeying `pause` (hosts pass the shared, persisted switch).
    pub fn with_pause(
        scanner: Arc<Scanner>,
        ledger: Option<Ledger>,
        pause: Arc<PauseSwitch>,
    ) -> Self {
        Self {
            scanner,
            ledger,
            pause,
        }
    }

    /// "Pause cloud": while set, nothing leaves. A persisted switch tells every host.
    pub fn set_paused(&self, paused: bool) {
        if let Err(e) = self.pause.set(paused) {
            tracing::warn!(error = %e, paused, "could not switch Pause cloud");
        }
    }

    /// Read before every transmission.
    pub fn paused(&self) -> bool {
        self.pause.is_paused()
    }

    pub fn pause_switch(&self) -> &Arc<PauseSwitch> {
        &self.pause
    }

    pub fn ledger(&self) -> Option<&Ledger> {
        self.ledger.as_ref()
    }

    /// Sends through `provider` (which must serve `req.agent()`), after the pause switch, the
    /// last-line scan and the ledger record. The stream's end (tokens, cost, or the failure) is
    /// recorded too.
    pub async fn send(
        &self,
        req: SanitizedRequest,
        provider: &Reliable,
        key: &str,
    ) -> Result<EventStream, EgressError> {
        let outbound = Outbound {
            task: req.task.clone(),
            agent: req.agent.name.clone(),
            provider: req.agent.provider.clone(),
            model: req.request.model.clone(),
            payload: req.payload(),
            reasons: req.reasons.clone(),
            // The exact body the provider will write: the ledger hashes these bytes, and these
            // bytes are what is sent.
            wire: provider.wire_body(&req.request),
        };
        if self.paused() {
            self.record_block(outbound, "cloud paused".into()).await?;
            return Err(EgressError::Paused);
        }
        let (scanner, req) = {
            let scanner = self.scanner.clone();
            let checked = tokio::task::spawn_blocking(move || {
                let verdict = last_line_check(&scanner, &req);
                (verdict, req)
            })
            .await
            .map_err(|e| EgressError::Blocked(format!("the last-line check failed: {e}")))?;
            (checked.0, checked.1)
        };
        if let Some(reason) = scanner {
            tracing::warn!(agent = %req.agent.name, %reason, "egress blocked");
            self.record_block(outbound, reason.clone()).await?;
            return Err(EgressError::Blocked(reason));
        }
        let id = match &self.ledger {
            Some(l) => Some(l.sent(outbound.clone()).await?),
            None => None,
        };
        // The switch may have been thrown while scanning and recording.
        if self.paused() {
            if let (Some(l), Some(id)) = (&self.ledger, id) {
                let _ = l
                    .finish(id, None, None, None, Some("not sent: cloud paused".into()))
                    .await;
            }
            return Err(EgressError::Paused);
        }
        // One ledger row per transmission: a retry finishes the failed attempt's row and opens
        // a new one (the same payload, sent again) just before it goes, unless Pause cloud
        // was switched on during the back-off.
        let current = Arc::new(std::sync::Mutex::new(id));
        let (ledger, cur, again, paused) = (
            self.ledger.clone(),
            current.clone(),
            outbound.clone(),
            self.pause.clone(),
        );
        let before_retry = move |e: &CloudError| {
            let (ledger, cur, again, paused) =
                (ledger.clone(), cur.clone(), again.clone(), paused.clone());
            let error = e.code_string();
            async move {
                let Some(l) = ledger else {
                    return !paused.is_paused();
                };
                let last = cur.lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some(id) = last {
                    if let Err(le) = l.finish(id, None, None, None, Some(error)).await {
                        tracing::warn!(error = %le, "could not complete a ledger record");
                    }
                }
                if paused.is_paused() {
                    return false;
                }
                match l.sent(again).await {
                    Ok(id) => {
                        *cur.lock().unwrap_or_else(|p| p.into_inner()) = Some(id);
                        true
                    }
                    // Never send what could not be recorded.
                    Err(le) => {
                        tracing::warn!(error = %le, "not retrying: the ledger refused the record");
                        false
                    }
                }
            }
            .boxed()
        };
        let permit = SendPermit::issue();
        let sent = provider
            .stream_observed(&outbound.wire, key, &permit, before_retry)
            .await;
        let id = *current.lock().unwrap_or_else(|p| p.into_inner());
        let stream = match sent {
            Ok(s) => s,
            Err(e) => {
                if let (Some(l), Some(id)) = (&self.ledger, id) {
                    // The cloud error is what the caller needs; a ledger failure is only logged.
                    if let Err(le) = l.finish(id, None, None, None, Some(e.code_string())).await {
                        tracing::warn!(error = %le, "could not complete a ledger record");
                    }
                }
                if self.paused() {
                    return Err(EgressError::Paused);
                }
                return Err(e.into());
            }
        };
        let (ledger, agent) = (self.ledger.clone(), req.agent.clone());
        Ok(stream
            .then(move |ev| {
                let (ledger, agent) = (ledger.clone(), agent.clone());
                async move {
                    if let (Some(l), Some(id)) = (&ledger, id) {
                        let done = match &ev {
                            Ok(CloudEvent::Done { usage, .. }) => Some((*usage, None)),
                            Err(e) => Some((None, Some(e.code_string()))),
                            _ => None,
                        };
                        if let Some((usage, error)) = done {
                            let (tin, tout) = usage
                                .map(|u| (u.prompt_tokens, u.completion_tokens))
                                .unzip();
                            let cost =
                                usage.map(|u| agent.cost(u.prompt_tokens, u.completion_tokens));
                            if let Err(e) = l.finish(id, tin, tout, cost, error).await {
                                tracing::warn!(error = %e, "could not complete a ledger record");
                            }
                        }
                    }
                    ev
                }
            })
            .boxed())
    }

    async fn record_block(&self, o: Outbound, reason: String) -> Result<(), EgressError> {
        if let Some(l) = &self.ledger {
            l.blocked(o, reason).await?;
        }
        Ok(())
    }
}

trait CodeString {
    fn code_string(&self) -> String;
}

impl CodeString for CloudError {
    fn code_string(&self) -> String {
        use crate::ErrorCode;
        format!("{}: {}", self.code(), self)
    }
}
