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
use crate::cloud::{
    ChatMessage, CloudError, CloudEvent, CloudRequest, EventStream, Role, ToolCall, Tools,
};
use crate::ledger::{Ledger, LedgerError, Outbound};
use crate::sensitivity::{self, Provenance, Pseudonymizer, Scanner, Verdict};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EgressError {
    #[error("blocked before sending: {0}")]
    Blocked(String),
    #[error("the cloud is paused: nothing leaves this device")]
    Paused,
    #[error("your devices are paused (tandem cloud resume --devices)")]
    DevicesPaused,
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
            EgressError::DevicesPaused => "egress.devices_paused",
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
    /// An assistant turn's calls: every string in their arguments is sanitized like text.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool result answers (an id the cloud made; sent back as is).
    pub tool_call_id: Option<String>,
}

impl Turn {
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            parts: vec![(text.into(), Provenance::Content)],
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// An earlier message as it will be sent: its text (as the plan classified it), its calls
    /// and the call it answers.
    pub fn of(m: &ChatMessage, text: String) -> Self {
        Self {
            tool_calls: m.tool_calls.clone(),
            tool_call_id: m.tool_call_id.clone(),
            ..Self::new(m.role, text)
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
    /// Tools the cloud may call: descriptions are sanitized like text.
    pub tools: Tools,
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
    #[serde(skip_serializing_if = "Tools::is_empty")]
    tools: &'a Tools,
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
    /// The text of every message, as the cloud will read it: contents, the arguments of
    /// earlier tool calls, and the tools' definitions.
    pub fn text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for m in &self.request.messages {
            parts.push(m.content.clone());
            parts.extend(m.tool_calls.iter().map(call_text));
        }
        if !self.request.tools.is_empty() {
            parts.push(self.request.tools.openai().to_string());
        }
        parts.join("\n\n")
    }
    /// JSON of the model, messages and tools: what the ledger stores and hashes.
    pub fn payload(&self) -> String {
        payload_of(&self.request)
    }
}

/// A request for one of the user's own devices (a `Trust::Device` provider): the task as it
/// is, unmasked — the point of a device is that private material may go there. It can only be
/// made for a device's agent, and only `Egress::send_device` sends it (recorded in the ledger
/// as a device transmission, stopped by Pause devices, never by the cloud's door).
#[derive(Debug, Clone)]
pub struct DeviceRequest {
    request: CloudRequest,
    task: String,
    agent: Agent,
    reasons: Vec<String>,
}

impl DeviceRequest {
    /// Refuses any provider that is not the agent's own and a device of the user's.
    pub fn new(
        task: &str,
        agent: &Agent,
        provider: &crate::cloud::agents::ProviderConfig,
        messages: Vec<ChatMessage>,
        max_tokens: Option<u32>,
        temperature: Option<f64>,
        reasons: Vec<String>,
    ) -> Result<Self, EgressError> {
        if provider.name != agent.provider || provider.trust != crate::cloud::agents::Trust::Device
        {
            return Err(EgressError::Blocked(format!(
                "{} is not one of your devices: private material goes to devices only",
                agent.provider
            )));
        }
        Ok(Self {
            request: CloudRequest {
                model: agent.model.clone(),
                messages,
                max_tokens,
                temperature,
                tools: Tools::default(),
            },
            task: task.to_string(),
            agent: agent.clone(),
            reasons,
        })
    }

    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Characters of every message (for token estimates).
    pub fn chars(&self) -> usize {
        self.request.messages.iter().map(|m| m.content.len()).sum()
    }
}

/// The ledger's copy of a request: the model, messages and tools exactly as sent.
fn payload_of(r: &CloudRequest) -> String {
    serde_json::to_string(&Payload {
        model: &r.model,
        messages: &r.messages,
        tools: &r.tools,
    })
    .unwrap_or_default()
}

/// What the ledger records before a transmission; `wire` is the exact body the provider will
/// write (the ledger hashes these bytes, and these bytes are what is sent).
fn outbound(
    task: &str,
    agent: &Agent,
    request: &CloudRequest,
    reasons: &[String],
    provider: &Reliable,
    destination: crate::ledger::Destination,
) -> Outbound {
    Outbound {
        task: task.to_string(),
        agent: agent.name.clone(),
        provider: agent.provider.clone(),
        model: request.model.clone(),
        payload: payload_of(request),
        reasons: reasons.to_vec(),
        wire: provider.wire_body(request),
        destination,
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
        let mut turns = Vec::new();
        if let Some(s) = draft.system.as_ref().filter(|s| !s.trim().is_empty()) {
            turns.push(Turn::new(Role::System, s.clone()));
        }
        turns.extend(draft.turns.iter().cloned());
        // Decisions made here (for what the plan never saw), kept for the second rendering.
        let mut decided: Vec<(String, Provenance, sensitivity::Decision)> = Vec::new();
        // Rendered twice: the first pass fills the vault with every value the plan masks
        // anywhere in the request, so that the second masks each of them wherever it recurs,
        // also in a part that comes before the one where it was found (a restored reply in
        // the history before the user's turn that names the person).
        let _ = self.render(&draft, &turns, pz, &mut decided);
        let (messages, tools, masked, withheld, useful) =
            self.render(&draft, &turns, pz, &mut decided);
        if !useful {
            return Err(EgressError::NothingToSend);
        }
        Ok(SanitizedRequest {
            request: CloudRequest {
                model: draft.agent.model.clone(),
                messages,
                max_tokens: draft.max_tokens,
                temperature: draft.temperature,
                tools,
            },
            task: draft.task,
            agent: draft.agent,
            reasons: draft.reasons,
            masked,
            withheld,
        })
    }

    /// One rendering of `turns` and the draft's tools under the plan's decisions: the messages,
    /// the tools, how many values were masked and fragments withheld, and whether anything of
    /// the task is left to send.
    fn render(
        &self,
        draft: &Draft,
        turns: &[Turn],
        pz: &mut Pseudonymizer,
        decided: &mut Vec<(String, Provenance, sensitivity::Decision)>,
    ) -> (Vec<ChatMessage>, Tools, usize, usize, bool) {
        let mut messages = Vec::new();
        let (mut masked, mut withheld, mut useful) = (0, 0, false);
        let scanner = self.scanner.clone();
        let decisions = &draft.decisions;
        // One rule for every piece of text: the plan's decision, or (for what it never saw: the
        // role, headers, an abstract written during the turn, a tool's description) one made now
        // by the same function.
        let mut clean = |text: &str, provenance: Provenance| {
            let decision = match decisions.get(text, provenance) {
                Some(d) => d,
                None => {
                    let i = match decided
                        .iter()
                        .position(|(t, p, _)| t == text && *p == provenance)
                    {
                        Some(i) => i,
                        None => {
                            let d = sensitivity::decide(&scanner, text, provenance, false);
                            decided.push((text.to_string(), provenance, d));
                            decided.len() - 1
                        }
                    };
                    &decided[i].2
                }
            };
            let r = sensitivity::apply(pz, text, decision);
            masked += r.masked;
            withheld += r.withheld;
            r.text
        };
        for t in turns {
            let mut content = String::new();
            for (text, provenance) in &t.parts {
                content.push_str(&clean(text, *provenance));
            }
            let only_withheld = content
                .split(sensitivity::redact::WITHHELD)
                .all(|rest| rest.trim().is_empty());
            // A tool's result carries the task forward as a user's words would.
            if matches!(t.role, Role::User | Role::Tool) && !only_withheld {
                useful = true;
            }
            let tool_calls = t
                .tool_calls
                .iter()
                .map(|c| {
                    let mut c = c.clone();
                    c.function.arguments =
                        map_json_strings(&c.function.arguments, |s| clean(s, Provenance::Content));
                    c
                })
                .collect();
            messages.push(ChatMessage {
                tool_calls,
                tool_call_id: t.tool_call_id.clone(),
                ..ChatMessage::new(t.role, content)
            });
        }
        let mut tools = draft.tools.clone();
        for d in &mut tools.defs {
            if let Some(desc) = &d.description {
                d.description = Some(clean(desc, Provenance::Content));
            }
            map_descriptions(&mut d.parameters, &mut |s| clean(s, Provenance::Content));
        }
        (messages, tools, masked, withheld, useful)
    }
}

/// A call as the last-line check reads it: its name and arguments.
fn call_text(c: &ToolCall) -> String {
    format!("{} {}", c.function.name, c.function.arguments)
}

/// `json` (a call's arguments) with every string value passed through `f`; keys and the
/// structure stay. Text that is not JSON is passed through `f` whole.
pub(crate) fn map_json_strings(json: &str, mut f: impl FnMut(&str) -> String) -> String {
    fn walk(v: &mut serde_json::Value, f: &mut dyn FnMut(&str) -> String) {
        match v {
            serde_json::Value::String(s) => *s = f(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, f)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| walk(x, f)),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(mut v) => {
            walk(&mut v, &mut f);
            v.to_string()
        }
        Err(_) => f(json),
    }
}

/// A JSON Schema's `description` texts passed through `f` (the words a tool's author wrote;
/// names, types and enums are the schema and stay, and the last-line check reads them).
fn map_descriptions(v: &mut serde_json::Value, f: &mut dyn FnMut(&str) -> String) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x {
                    serde_json::Value::String(s) if k == "description" => *s = f(s),
                    _ => map_descriptions(x, f),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| map_descriptions(x, f)),
        _ => {}
    }
}

/// The last-line check over a sanitized payload: the reason to block, if any.
pub fn last_line_check(scanner: &Scanner, req: &SanitizedRequest) -> Option<String> {
    // Each message, then all of them together (a keyword in one turn, the value in the next).
    let joined = req.text();
    let mut texts: Vec<String> = Vec::new();
    for m in &req.request.messages {
        texts.push(m.content.clone());
        texts.extend(m.tool_calls.iter().map(call_text));
    }
    texts.push(joined);
    for text in &texts {
        let report = scanner.scan_with(text, Provenance::Content);
        // (What an exam question keeps on purpose does not count: the plan's own rule.)
        let (verdict, spans) = sensitivity::leaving_verdict(text, &report);
        if verdict != Verdict::Public {
            let what: Vec<&str> = spans
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
                verdict
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
    /// Pause devices: the user's own servers have their own switch.
    device_pause: Arc<PauseSwitch>,
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
            device_pause: Arc::new(PauseSwitch::memory()),
        }
    }

    /// Obeys `switch` for the user's devices (hosts pass the shared, persisted one).
    pub fn with_device_pause(mut self, switch: Arc<PauseSwitch>) -> Self {
        self.device_pause = switch;
        self
    }

    pub fn devices_paused(&self) -> bool {
        self.device_pause.is_paused()
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
        let outbound = outbound(
            &req.task,
            &req.agent,
            &req.request,
            &req.reasons,
            provider,
            crate::ledger::Destination::Cloud,
        );
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
        self.transmit(
            outbound,
            req.agent,
            provider,
            key,
            self.pause.clone(),
            EgressError::Paused,
        )
        .await
    }

    /// Sends a task to one of the user's own devices: unmasked (that is what a device is
    /// for), after Pause devices (Pause cloud does not stop it), recorded in the ledger as a
    /// device transmission before any byte goes.
    pub async fn send_device(
        &self,
        req: DeviceRequest,
        provider: &Reliable,
        key: &str,
    ) -> Result<EventStream, EgressError> {
        if provider.name() != req.agent.provider {
            return Err(EgressError::Blocked(format!(
                "{} is not the device this request was made for",
                provider.name()
            )));
        }
        let outbound = outbound(
            &req.task,
            &req.agent,
            &req.request,
            &req.reasons,
            provider,
            crate::ledger::Destination::Device,
        );
        if self.devices_paused() {
            self.record_block(outbound, "devices paused".into()).await?;
            return Err(EgressError::DevicesPaused);
        }
        self.transmit(
            outbound,
            req.agent,
            provider,
            key,
            self.device_pause.clone(),
            EgressError::DevicesPaused,
        )
        .await
    }

    /// Records `outbound`, sends its wire body (retries re-recorded, each re-checking
    /// `switch`) and completes the record when the reply ends.
    async fn transmit(
        &self,
        outbound: Outbound,
        agent: Agent,
        provider: &Reliable,
        key: &str,
        switch: Arc<PauseSwitch>,
        paused_error: EgressError,
    ) -> Result<EventStream, EgressError> {
        let id = match &self.ledger {
            Some(l) => Some(l.sent(outbound.clone()).await?),
            None => None,
        };
        // The switch may have been thrown while scanning and recording.
        if switch.is_paused() {
            if let (Some(l), Some(id)) = (&self.ledger, id) {
                let _ = l
                    .finish(id, None, None, None, Some("not sent: paused".into()))
                    .await;
            }
            return Err(paused_error);
        }
        // One ledger row per transmission: a retry finishes the failed attempt's row and opens
        // a new one (the same payload, sent again) just before it goes, unless Pause cloud
        // was switched on during the back-off.
        let current = Arc::new(std::sync::Mutex::new(id));
        let (ledger, cur, again, paused) = (
            self.ledger.clone(),
            current.clone(),
            outbound.clone(),
            switch.clone(),
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
                if switch.is_paused() {
                    return Err(paused_error);
                }
                return Err(e.into());
            }
        };
        let ledger = self.ledger.clone();
        // Pause stops a reply already streaming too: the connection is dropped within
        // `PAUSE_POLL` of the switch, and the reply ends with an error (a host then says so).
        // One timer for the whole reply (not one per event: a reply that streams faster than
        // the poll would never see it fire, and each event would pay a `stat`).
        let provider_name = agent.provider.clone();
        let mut poll =
            tokio::time::interval_at(tokio::time::Instant::now() + PAUSE_POLL, PAUSE_POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let stream = futures::stream::unfold(Some((stream, poll)), move |state| {
            let (switch, provider_name) = (switch.clone(), provider_name.clone());
            async move {
                let (mut s, mut tick) = state?;
                loop {
                    tokio::select! {
                        ev = s.next() => return ev.map(|e| (e, Some((s, tick)))),
                        _ = tick.tick() => {
                            if switch.is_paused() {
                                let cut = CloudError::StreamCut {
                                    provider: provider_name,
                                    message: "stopped: Pause was switched on".into(),
                                };
                                return Some((Err(cut), None));
                            }
                        }
                    }
                }
            }
        });
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

/// How often a streaming reply looks at the pause switch (a `stat` of its file).
const PAUSE_POLL: std::time::Duration = std::time::Duration::from_millis(200);

trait CodeString {
    fn code_string(&self) -> String;
}

impl CodeString for CloudError {
    fn code_string(&self) -> String {
        use crate::ErrorCode;
        format!("{}: {}", self.code(), self)
    }
}
