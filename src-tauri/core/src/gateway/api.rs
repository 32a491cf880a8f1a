//! The gateway's OpenAI wire shapes and handlers: a chat request becomes a task for the
//! orchestrator, its run events become a chat completion (whole, or SSE chunks), and every
//! failure becomes an OpenAI-shaped error with a status a client library understands.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio::task::JoinHandle;
use tokio::time::{timeout_at, Instant};

use super::Gateway;
use crate::cloud::{CloudError, ToolChoice, Tools};
use crate::local::{ChatMessage, LocalError, Role};
use crate::router::run::{RunError, RunEvent, RunOptions, Summary};
use crate::router::{Plan, Policy, Task};
use crate::ErrorCode;

mod messages;

/// The models every gateway offers besides the configured cloud agents.
pub const VIRTUAL_MODELS: [(&str, &str); 3] = [
    (
        "tandem-auto",
        "Tandem decides per task: local, cloud (masked) or split",
    ),
    ("tandem-local", "the local model only; nothing leaves"),
    (
        "tandem-private",
        "policy private: only public text may leave",
    ),
];

/// Largest `max_tokens` a request may ask for.
const MAX_TOKENS_CAP: u64 = 65_536;

pub(crate) fn router(gw: Arc<Gateway>) -> axum::Router {
    axum::Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/messages", post(messages::messages))
        .route("/v1/models", get(models))
        .route("/v1/models/{id}", get(model))
        .route("/v1/tandem/query", post(query))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(gw)
}

/// An error in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`, where `code`
/// is Tandem's stable code (`gateway.*`, `cloud.*`, `local.*`, ...).
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    fn bad(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    fn body(&self) -> Value {
        let kind = match self.status.as_u16() {
            401 => "authentication_error",
            403 => "permission_error",
            429 => "rate_limit_error",
            504 => "timeout",
            500..=599 => "api_error",
            _ => "invalid_request_error",
        };
        json!({"error": {"message": self.message, "type": kind, "param": null, "code": self.code}})
    }

    fn timeout() -> Self {
        Self::new(
            StatusCode::GATEWAY_TIMEOUT,
            "gateway.timeout",
            "the answer took longer than the gateway's request timeout",
        )
    }

    fn internal(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "gateway.internal",
            message,
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, axum::Json(self.body())).into_response();
        if self.status == StatusCode::TOO_MANY_REQUESTS {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

/// The status a failed run maps to: the local queue full is the client's cue to slow down
/// (429); a cloud failure with no local model to take over is the upstream's (502, 504 when
/// it timed out); no model at all is this service being unavailable (503).
impl From<RunError> for ApiError {
    fn from(e: RunError) -> Self {
        let status = match &e {
            RunError::Local(LocalError::QueueFull(_)) => StatusCode::TOO_MANY_REQUESTS,
            RunError::Local(LocalError::BadRequest(_)) => StatusCode::BAD_REQUEST,
            RunError::NoLocal(_) | RunError::Local(LocalError::Stopped) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            RunError::CloudFailed(step) if step.timed_out() => StatusCode::GATEWAY_TIMEOUT,
            RunError::Cloud(CloudError::Timeout { .. }) => StatusCode::GATEWAY_TIMEOUT,
            RunError::CloudFailed(_) | RunError::Cloud(_) => StatusCode::BAD_GATEWAY,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.code(), e.to_string())
    }
}

// ---- requests -------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
struct ChatRequest {
    model: String,
    messages: Vec<InMessage>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    max_tokens: Option<u64>,
    #[serde(default)]
    max_completion_tokens: Option<u64>,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    n: Option<u64>,
    /// Tool definitions (`{"type": "function", "function": {...}}`): the cloud may call them;
    /// calls come back with the real values for the client's tools to run here.
    #[serde(default)]
    tools: Option<Vec<InTool>>,
    #[serde(default)]
    tool_choice: Option<Value>,
    /// Accepted and ignored: calls come back together at the end of a step either way.
    #[serde(default)]
    #[allow(dead_code)]
    parallel_tool_calls: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct InTool {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    function: Option<crate::cloud::ToolDef>,
}

#[derive(Debug, Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct InMessage {
    role: String,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    tool_calls: Option<Vec<crate::cloud::ToolCall>>,
    #[serde(default)]
    tool_call_id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
struct QueryRequest {
    query: String,
    #[serde(default)]
    policy: Option<String>,
}

fn authorize(gw: &Gateway, headers: &HeaderMap) -> Result<(), ApiError> {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if gw.authorized(given) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "gateway.unauthorized",
            "missing or wrong bearer token (Authorization: Bearer <token>; `tandem serve` prints it at first start)",
        ))
    }
}

/// Reads a JSON body within the size cap and the body timeout.
async fn read_json<T: DeserializeOwned>(
    gw: &Gateway,
    headers: &HeaderMap,
    body: Body,
) -> Result<T, ApiError> {
    let mime = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if mime != "application/json" {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "gateway.content_type",
            format!(
                "the body must be application/json (got {})",
                if mime.is_empty() { "none" } else { &mime }
            ),
        ));
    }
    let max = gw.limits.max_body_bytes;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "gateway.too_large",
            format!("the body is larger than the gateway's limit of {max} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let limited = http_body_util::Limited::new(body, max);
    let collected = timeout_at(Instant::now() + gw.limits.body_timeout, limited.collect())
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "gateway.body_timeout",
                "the body did not arrive in time",
            )
        })?
        .map_err(|e| {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                too_large()
            } else {
                ApiError::bad("gateway.bad_body", format!("could not read the body: {e}"))
            }
        })?;
    serde_json::from_slice(&collected.to_bytes()).map_err(|e| {
        ApiError::bad(
            "gateway.bad_body",
            format!("the body is not a valid request: {e}"),
        )
    })
}

/// The task and options a chat request asks for, or why it cannot be run.
fn to_task(gw: &Gateway, req: &ChatRequest, id: &str) -> Result<(Task, RunOptions), ApiError> {
    if req.messages.is_empty() {
        return Err(ApiError::bad(
            "gateway.bad_request",
            "messages must not be empty",
        ));
    }
    let tools = openai_tools(req.tools.as_deref(), req.tool_choice.as_ref())?;
    if req.n.is_some_and(|n| n != 1) {
        return Err(ApiError::bad(
            "gateway.bad_request",
            "only n = 1 is supported",
        ));
    }
    let mut messages = Vec::with_capacity(req.messages.len());
    for (i, m) in req.messages.iter().enumerate() {
        let role = match m.role.as_str() {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            other => {
                return Err(ApiError::bad(
                    "gateway.bad_request",
                    format!("messages[{i}]: role {other:?} is not supported (system, developer, user, assistant, tool)"),
                ))
            }
        };
        if role == Role::Tool && m.tool_call_id.as_deref().is_none_or(str::is_empty) {
            return Err(ApiError::bad(
                "gateway.bad_request",
                format!("messages[{i}]: a tool message needs its tool_call_id"),
            ));
        }
        let content = match &m.content {
            None => String::new(),
            Some(Content::Text(t)) => t.clone(),
            Some(Content::Parts(parts)) => {
                let mut text = Vec::with_capacity(parts.len());
                for p in parts {
                    match (p.kind.as_str(), &p.text) {
                        ("text", Some(t)) => text.push(t.as_str()),
                        _ => {
                            return Err(ApiError::bad(
                                "gateway.bad_request",
                                format!(
                                    "messages[{i}]: only text content is supported (got {:?})",
                                    p.kind
                                ),
                            ))
                        }
                    }
                }
                text.join("\n")
            }
        };
        messages.push(ChatMessage {
            tool_calls: if role == Role::Assistant {
                m.tool_calls.clone().unwrap_or_default()
            } else {
                Vec::new()
            },
            tool_call_id: m.tool_call_id.clone().filter(|_| role == Role::Tool),
            ..ChatMessage::new(role, content)
        });
    }
    // The turn to answer: the user's words, or the results of the calls the cloud asked for
    // (they stay in the history, in order, and the step continues from them).
    let prompt = match messages.last().map(|m| m.role) {
        Some(Role::User) => messages.pop().map(|m| m.content).unwrap_or_default(),
        Some(Role::Tool) => String::new(),
        _ => {
            return Err(ApiError::bad(
                "gateway.bad_request",
                "the last message must come from the user (or be a tool's result)",
            ))
        }
    };
    let (policy, force_local, agent) = match req.model.as_str() {
        "tandem-auto" => (gw.policy, false, None),
        "tandem-local" => (gw.policy, true, None),
        "tandem-private" => (Policy::Private, false, None),
        name if gw.orch.catalog.agent(name).is_some() => (gw.policy, false, Some(name.to_string())),
        name => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "gateway.unknown_model",
                format!("the model {name:?} does not exist here (GET /v1/models lists them)"),
            ))
        }
    };
    let max_tokens = req
        .max_completion_tokens
        .or(req.max_tokens)
        .unwrap_or(gw.limits.default_max_tokens as u64);
    if max_tokens == 0 || max_tokens > MAX_TOKENS_CAP {
        return Err(ApiError::bad(
            "gateway.bad_request",
            format!("max_tokens must be between 1 and {MAX_TOKENS_CAP}"),
        ));
    }
    if req.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
        return Err(ApiError::bad(
            "gateway.bad_request",
            "temperature must be between 0 and 2",
        ));
    }
    let task = Task {
        prompt,
        attachments: Vec::new(),
        history: messages,
        policy,
    };
    let opts = RunOptions {
        task_id: id.to_string(),
        agent,
        force_local,
        max_tokens: max_tokens as usize,
        temperature: req.temperature,
        tools,
        ..RunOptions::default()
    };
    Ok((task, opts))
}

/// The tools of a Chat Completions request, or why they cannot be offered.
fn openai_tools(tools: Option<&[InTool]>, choice: Option<&Value>) -> Result<Tools, ApiError> {
    let mut defs = Vec::new();
    for (i, t) in tools.unwrap_or_default().iter().enumerate() {
        match (t.kind.as_str(), &t.function) {
            ("function", Some(f)) if valid_tool_name(&f.name) => defs.push(f.clone()),
            ("function", _) => {
                return Err(ApiError::bad(
                    "gateway.bad_request",
                    format!(
                    "tools[{i}]: a function needs a name of letters, digits, _ or - (at most 64)"
                ),
                ))
            }
            (other, _) => {
                return Err(ApiError::bad(
                    "gateway.tools_unsupported",
                    format!("tools[{i}]: only function tools are supported (got {other:?})"),
                ))
            }
        }
    }
    let choice = match choice {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(match s.as_str() {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" => ToolChoice::Required,
            other => {
                return Err(ApiError::bad(
                    "gateway.bad_request",
                    format!("tool_choice {other:?} is not one of auto, none, required"),
                ))
            }
        }),
        Some(v) => match v["function"]["name"].as_str() {
            Some(n) if defs.iter().any(|d| d.name == n) => Some(ToolChoice::Function(n.into())),
            _ => {
                return Err(ApiError::bad(
                    "gateway.bad_request",
                    "tool_choice must name one of the tools given",
                ))
            }
        },
    };
    Ok(Tools { defs, choice })
}

/// OpenAI's rule for function names (the names also reach the provider unmasked).
fn valid_tool_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Calls in Chat Completions' shape; streamed deltas carry their index.
fn openai_calls(calls: &[crate::cloud::ToolCall], indexed: bool) -> Value {
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut v = json!({
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            });
            if indexed {
                v["index"] = json!(i);
            }
            v
        })
        .collect()
}

// ---- runs -----------------------------------------------------------------------------------

/// A run that stops when its owner is dropped: a client that hangs up stops the work (the cloud
/// stream and the local generation are cancelled by dropping them).
struct RunHandle(Option<JoinHandle<Result<Summary, RunError>>>);

impl RunHandle {
    async fn join(&mut self) -> Result<Summary, ApiError> {
        let Some(h) = self.0.as_mut() else {
            return Err(ApiError::internal("the run was already joined"));
        };
        let out = h.await;
        self.0 = None;
        match out {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(e)) => Err(e.into()),
            Err(e) => Err(ApiError::internal(format!("the run failed: {e}"))),
        }
    }
}

impl Drop for RunHandle {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            h.abort();
        }
    }
}

/// A run that has planned: its events, its handle, its deadline and the slot it holds.
struct Started {
    id: String,
    plan: Plan,
    rx: mpsc::UnboundedReceiver<RunEvent>,
    run: RunHandle,
    deadline: Instant,
}

/// Takes a slot (429 when none is free), starts the run and waits for its plan.
async fn start(gw: &Arc<Gateway>, task: Task, opts: RunOptions) -> Result<Started, ApiError> {
    let slot = gw.slots.clone().try_acquire_owned().map_err(|_| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "gateway.busy",
            format!(
                "{} requests are being answered; try again shortly",
                gw.limits.max_concurrent
            ),
        )
    })?;
    let id = opts.task_id.clone();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let orch = gw.orch.clone();
    // The hosts' one driver runs the turn (no stored conversation: the client sends its own
    // history); the gateway only renders its events.
    let req = crate::host::TurnRequest {
        conversation: None,
        prompt: task.prompt,
        attachments: task.attachments,
        task: opts.task_id.clone(),
        policy: task.policy,
        max_tokens: opts.max_tokens,
        history: task.history,
        force_local: opts.force_local,
        agent: opts.agent,
        needs: opts.needs,
        temperature: opts.temperature,
        tools: opts.tools,
        self_check: opts.self_check,
    };
    // The run holds the slot: `in_flight` counts runs alive, so a run that outlived its client
    // would show (the hang-up tests watch for it).
    let mut run = RunHandle(Some(tokio::spawn(async move {
        let _slot: OwnedSemaphorePermit = slot;
        let out = crate::host::run_turn(
            &orch,
            None,
            req,
            |ev| tx.send(ev).is_ok(),
            std::future::pending(),
        )
        .await
        .map_err(|e| RunError::Internal(e.to_string()))?;
        match out.error {
            Some(e) => Err(e),
            None => Ok(out
                .turn
                .summary
                .and_then(|v| serde_json::from_value::<Summary>(v).ok())
                .unwrap_or_default()),
        }
    })));
    let deadline = Instant::now() + gw.limits.request_timeout;
    match timeout_at(deadline, rx.recv()).await {
        Err(_) => Err(ApiError::timeout()),
        Ok(Some(RunEvent::Plan { plan })) => Ok(Started {
            id,
            plan,
            rx,
            run,
            deadline,
        }),
        Ok(Some(_)) => Err(ApiError::internal("the run did not start with a plan")),
        Ok(None) => Err(run
            .join()
            .await
            .err()
            .unwrap_or_else(|| ApiError::internal("the run ended without a plan"))),
    }
}

/// Runs to the end; the answer, the notices the run gave, and the plan.
async fn finish(mut s: Started) -> Result<(Plan, Summary, Vec<String>), ApiError> {
    let mut notices = Vec::new();
    loop {
        match timeout_at(s.deadline, s.rx.recv()).await {
            Err(_) => return Err(ApiError::timeout()),
            Ok(Some(RunEvent::Notice { text })) => notices.push(text),
            Ok(Some(_)) => {}
            Ok(None) => break,
        }
    }
    let summary = timeout_at(s.deadline, s.run.join())
        .await
        .map_err(|_| ApiError::timeout())??;
    Ok((s.plan, summary, notices))
}

fn route_name(plan: &Plan) -> String {
    serde_json::to_value(plan.route)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// The documented extension: why the task went where it went, and what it cost.
fn extension(plan: &Plan, summary: Option<&Summary>, notices: &[String]) -> Value {
    let mut v = json!({
        "route": plan.route,
        "strategy": plan.strategy,
        "reasons": plan.reasons,
        "complexity": plan.complexity,
        "notices": notices,
    });
    if let Some(s) = summary {
        v["agent"] = json!(s.agent);
        v["fell_back"] = json!(s.fell_back);
        v["masked"] = json!(s.masked);
        v["withheld"] = json!(s.withheld);
        v["cloud_tokens"] = json!(s.cloud_tokens);
        v["local_tokens"] = json!(s.local_tokens);
        v["cost_usd"] = json!(s.cost_usd);
    }
    v
}

fn with_route_headers(mut r: Response, id: &str, plan: &Plan) -> Response {
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&route_name(plan)) {
        h.insert("x-tandem-route", v);
    }
    if let Ok(v) = HeaderValue::from_str(id) {
        h.insert("x-request-id", v);
    }
    r
}

fn usage(s: &Summary) -> Value {
    json!({
        "prompt_tokens": s.prompt_tokens,
        "completion_tokens": s.completion_tokens,
        "total_tokens": s.prompt_tokens + s.completion_tokens,
    })
}

// ---- handlers -------------------------------------------------------------------------------

async fn chat(State(gw): State<Arc<Gateway>>, headers: HeaderMap, body: Body) -> Response {
    match chat_inner(&gw, &headers, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn chat_inner(
    gw: &Arc<Gateway>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    authorize(gw, headers)?;
    let req: ChatRequest = read_json(gw, headers, body).await?;
    let id = gw.request_id();
    let (task, opts) = to_task(gw, &req, &id)?;
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let started = start(gw, task, opts).await?;
    if req.stream.unwrap_or(false) {
        let include_usage = req
            .stream_options
            .as_ref()
            .and_then(|o| o.include_usage)
            .unwrap_or(false);
        return stream_response(
            started,
            ChatWire {
                model: req.model.clone(),
                created,
                include_usage,
            },
        );
    }
    let (plan, summary, notices) = finish(started).await?;
    let mut message = json!({"role": "assistant", "content": summary.text, "refusal": null});
    let finish_reason = if summary.tool_calls.is_empty() {
        "stop"
    } else {
        message["tool_calls"] = openai_calls(&summary.tool_calls, false);
        if summary.text.is_empty() {
            message["content"] = Value::Null;
        }
        "tool_calls"
    };
    let v = json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": req.model,
        "system_fingerprint": null,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason,
        }],
        "usage": usage(&summary),
        "tandem": extension(&plan, Some(&summary), &notices),
    });
    Ok(with_route_headers(
        axum::Json(v).into_response(),
        &id,
        &plan,
    ))
}

/// How one wire format writes a streamed answer: its opening events, a piece of text, and the
/// end (the summary with the notices the run gave, or the error). `stream_events` is the one
/// pump for every format.
trait StreamWire: Send + 'static {
    fn open(&mut self, s: &Started) -> Vec<Bytes>;
    fn text(&mut self, s: &Started, text: &str) -> Bytes;
    fn end(
        &mut self,
        s: &Started,
        notices: &[String],
        result: Result<Summary, ApiError>,
    ) -> Vec<Bytes>;
}

/// The streamed response for a started run in `wire`'s format: SSE headers, the route and
/// request-id headers, and the body.
fn stream_response<W: StreamWire>(started: Started, wire: W) -> Result<Response, ApiError> {
    let (id, plan) = (started.id.clone(), started.plan.clone());
    let r = Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(stream_events(started, wire))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(with_route_headers(r, &id, &plan))
}

/// A started run's events as a streamed body in `wire`'s format, within the run's deadline.
/// Dropping the body (the client hung up) drops the run and its slot.
fn stream_events<W: StreamWire>(started: Started, mut wire: W) -> Body {
    struct St<W> {
        s: Started,
        w: W,
        notices: Vec<String>,
        queue: VecDeque<Bytes>,
        done: bool,
    }
    let queue = wire.open(&started).into();
    let st = St {
        s: started,
        w: wire,
        notices: Vec::new(),
        queue,
        done: false,
    };
    let stream = futures::stream::unfold(st, |mut st| async move {
        loop {
            if let Some(b) = st.queue.pop_front() {
                return Some((Ok::<_, Infallible>(b), st));
            }
            if st.done {
                return None;
            }
            let end = match timeout_at(st.s.deadline, st.s.rx.recv()).await {
                Err(_) => Some(Err(ApiError::timeout())),
                Ok(Some(RunEvent::Text { text })) if !text.is_empty() => {
                    let b = st.w.text(&st.s, &text);
                    st.queue.push_back(b);
                    None
                }
                Ok(Some(RunEvent::Notice { text })) => {
                    st.notices.push(text);
                    None
                }
                Ok(Some(_)) => None,
                Ok(None) => {
                    let deadline = st.s.deadline;
                    Some(match timeout_at(deadline, st.s.run.join()).await {
                        Ok(r) => r,
                        Err(_) => Err(ApiError::timeout()),
                    })
                }
            };
            if let Some(result) = end {
                let out = st.w.end(&st.s, &st.notices, result);
                st.queue.extend(out);
                st.done = true;
            }
        }
    });
    Body::from_stream(stream)
}

fn sse(v: &Value) -> Bytes {
    Bytes::from(format!("data: {v}\n\n"))
}

/// Chat completions' SSE: a role chunk, content chunks as the run writes, a final chunk with
/// `finish_reason` and the extension, a usage chunk when asked, then `[DONE]`. An error after
/// the headers went out is an `{"error": ...}` event (what OpenAI sends).
struct ChatWire {
    model: String,
    created: u64,
    include_usage: bool,
}

impl ChatWire {
    fn chunk(
        &self,
        s: &Started,
        delta: Value,
        finish: Value,
        extra: Option<(&str, Value)>,
    ) -> Bytes {
        let mut v = json!({
            "id": s.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": null,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if let Some((k, x)) = extra {
            v[k] = x;
        }
        sse(&v)
    }
}

impl StreamWire for ChatWire {
    fn open(&mut self, s: &Started) -> Vec<Bytes> {
        vec![self.chunk(
            s,
            json!({"role": "assistant", "content": ""}),
            Value::Null,
            None,
        )]
    }

    fn text(&mut self, s: &Started, text: &str) -> Bytes {
        self.chunk(s, json!({"content": text}), Value::Null, None)
    }

    fn end(
        &mut self,
        s: &Started,
        notices: &[String],
        result: Result<Summary, ApiError>,
    ) -> Vec<Bytes> {
        let mut out = Vec::new();
        match result {
            Ok(summary) => {
                let ext = extension(&s.plan, Some(&summary), notices);
                // Calls arrive whole at the end of the step (placeholders are restored in
                // complete arguments only): one delta per call, each with its index.
                let finish = if summary.tool_calls.is_empty() {
                    "stop"
                } else {
                    out.push(self.chunk(
                        s,
                        json!({"tool_calls": openai_calls(&summary.tool_calls, true)}),
                        Value::Null,
                        None,
                    ));
                    "tool_calls"
                };
                out.push(self.chunk(s, json!({}), json!(finish), Some(("tandem", ext))));
                if self.include_usage {
                    out.push(sse(&json!({
                        "id": s.id,
                        "object": "chat.completion.chunk",
                        "created": self.created,
                        "model": self.model,
                        "system_fingerprint": null,
                        "choices": [],
                        "usage": usage(&summary),
                    })));
                }
            }
            Err(e) => out.push(sse(&e.body())),
        }
        out.push(Bytes::from_static(b"data: [DONE]\n\n"));
        out
    }
}

async fn query(State(gw): State<Arc<Gateway>>, headers: HeaderMap, body: Body) -> Response {
    let inner = async {
        authorize(&gw, &headers)?;
        let q: QueryRequest = read_json(&gw, &headers, body).await?;
        if q.query.trim().is_empty() {
            return Err(ApiError::bad(
                "gateway.bad_request",
                "query must not be empty",
            ));
        }
        // A client may ask for a stricter policy than the gateway's, never a looser one: the
        // gateway's policy is the user's choice for everything that comes through it.
        let policy = match q.policy.as_deref() {
            None => gw.policy,
            Some(p) => gw.policy.strictest(
                p.parse::<Policy>()
                    .map_err(|e| ApiError::bad("gateway.bad_request", e))?,
            ),
        };
        let id = gw.request_id();
        let task = Task {
            prompt: q.query,
            attachments: Vec::new(),
            history: Vec::new(),
            policy,
        };
        let opts = RunOptions {
            task_id: id.clone(),
            max_tokens: gw.limits.default_max_tokens,
            ..RunOptions::default()
        };
        let (plan, summary, notices) = finish(start(&gw, task, opts).await?).await?;
        let mut v = extension(&plan, Some(&summary), &notices);
        v["response"] = json!(summary.text);
        Ok(with_route_headers(
            axum::Json(v).into_response(),
            &id,
            &plan,
        ))
    };
    inner.await.unwrap_or_else(|e: ApiError| e.into_response())
}

/// The virtual models and the cloud agents this machine can use (key stored or not needed).
async fn model_list(gw: &Arc<Gateway>) -> Result<Vec<Value>, ApiError> {
    let orch = gw.orch.clone();
    let agents = tokio::task::spawn_blocking(move || {
        let mut usable = std::collections::HashMap::new();
        let mut out = Vec::new();
        for a in &orch.catalog.agents {
            let ok = *usable.entry(a.provider.clone()).or_insert_with(|| {
                orch.catalog
                    .provider(&a.provider)
                    .is_some_and(|p| !p.needs_key || matches!(orch.keys.get(&p.name), Ok(Some(_))))
            });
            if ok {
                out.push((a.name.clone(), a.provider.clone()));
            }
        }
        out
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?;
    let model = |id: &str, owner: &str| json!({"id": id, "object": "model", "created": gw.started, "owned_by": owner});
    let mut data: Vec<Value> = VIRTUAL_MODELS
        .iter()
        .map(|(id, _)| model(id, "tandem"))
        .collect();
    data.extend(agents.iter().map(|(id, provider)| model(id, provider)));
    Ok(data)
}

async fn models(State(gw): State<Arc<Gateway>>, headers: HeaderMap) -> Response {
    let inner = async {
        authorize(&gw, &headers)?;
        Ok(axum::Json(json!({"object": "list", "data": model_list(&gw).await?})).into_response())
    };
    inner.await.unwrap_or_else(|e: ApiError| e.into_response())
}

async fn model(
    State(gw): State<Arc<Gateway>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let inner = async {
        authorize(&gw, &headers)?;
        let found = model_list(&gw)
            .await?
            .into_iter()
            .find(|m| m["id"] == id.as_str())
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::NOT_FOUND,
                    "gateway.unknown_model",
                    format!("the model {id:?} does not exist here"),
                )
            })?;
        Ok(axum::Json(found).into_response())
    };
    inner.await.unwrap_or_else(|e: ApiError| e.into_response())
}

async fn not_found(method: Method, uri: Uri) -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "gateway.not_found",
        format!("no such endpoint: {method} {}", uri.path()),
    )
    .into_response()
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "gateway.method_not_allowed",
        format!("{method} is not allowed on {}", uri.path()),
    )
    .into_response()
}
