//! Anthropic's Messages API on the gateway (`POST /v1/messages`): a Messages request becomes the
//! same task as a chat completion (same orchestrator, vault, door, ledger and `x-tandem-route`
//! header), and the run's events become a Message (whole, or Anthropic's event stream); errors
//! take Anthropic's shape `{"type": "error", "error": {"type", "message"}}`.

use super::*;

#[derive(Debug, Deserialize)]
struct MessagesRequest {
    model: String,
    /// Required by Anthropic's API; the gateway's default when a client leaves it out.
    #[serde(default)]
    max_tokens: Option<u64>,
    messages: Vec<AMessage>,
    /// A string or a list of text blocks.
    #[serde(default)]
    system: Option<Content>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    temperature: Option<f64>,
    /// Tools the model may call (`name`, `description`, `input_schema`).
    #[serde(default)]
    tools: Option<Vec<ATool>>,
    #[serde(default)]
    tool_choice: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ATool {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    input_schema: Option<Value>,
    /// Anthropic's own server tools (`web_search_...`) have a type; client tools may not.
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

#[derive(Debug, Deserialize)]
struct AMessage {
    role: String,
    content: AContent,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum AContent {
    Text(String),
    Blocks(Vec<ABlock>),
}

/// A content block: text, a `tool_use` an assistant turn made, or a `tool_result` the client
/// sends back in a user turn.
#[derive(Debug, Deserialize)]
struct ABlock {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<Value>,
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    is_error: Option<bool>,
}

fn text_message(role: &str, text: String) -> InMessage {
    InMessage {
        role: role.into(),
        content: Some(Content::Text(text)),
        tool_calls: None,
        tool_call_id: None,
    }
}

/// One Messages turn as chat messages: an assistant's `tool_use` blocks become its calls, a
/// user's `tool_result` blocks become tool messages (before any words of the same turn).
fn turn_messages(i: usize, m: AMessage, out: &mut Vec<InMessage>) -> Result<(), ApiError> {
    let blocks = match m.content {
        AContent::Text(t) => {
            out.push(text_message(&m.role, t));
            return Ok(());
        }
        AContent::Blocks(b) => b,
    };
    let (mut text, mut calls) = (Vec::new(), Vec::new());
    for b in blocks {
        match (b.kind.as_str(), m.role.as_str()) {
            ("text", _) => text.push(b.text.unwrap_or_default()),
            ("tool_use", "assistant") => calls.push(crate::cloud::ToolCall::new(
                b.id.unwrap_or_default(),
                b.name.unwrap_or_default(),
                b.input.unwrap_or_else(|| json!({})).to_string(),
            )),
            ("tool_result", "user") => {
                let Some(id) = b.tool_use_id.filter(|i| !i.is_empty()) else {
                    return Err(ApiError::bad(
                        "gateway.bad_request",
                        format!("messages[{i}]: a tool_result needs its tool_use_id"),
                    ));
                };
                let result = match b.content {
                    None => String::new(),
                    Some(Content::Text(t)) => t,
                    Some(Content::Parts(parts)) => {
                        let mut t = Vec::new();
                        for p in parts {
                            match (p.kind.as_str(), p.text) {
                                ("text", Some(x)) => t.push(x),
                                (other, _) => {
                                    return Err(ApiError::bad(
                                        "gateway.bad_request",
                                        format!("messages[{i}]: only text tool results are supported (got {other:?})"),
                                    ))
                                }
                            }
                        }
                        t.join("\n")
                    }
                };
                out.push(InMessage {
                    role: "tool".into(),
                    content: Some(Content::Text(if b.is_error == Some(true) {
                        format!("Error: {result}")
                    } else {
                        result
                    })),
                    tool_calls: None,
                    tool_call_id: Some(id),
                });
            }
            (other, role) => {
                return Err(ApiError::bad(
                    "gateway.bad_request",
                    format!("messages[{i}]: {other:?} blocks are not supported in a {role} turn"),
                ))
            }
        }
    }
    if !calls.is_empty() || !text.is_empty() {
        out.push(InMessage {
            tool_calls: (!calls.is_empty()).then_some(calls),
            ..text_message(&m.role, text.join("\n"))
        });
    }
    Ok(())
}

/// An `ApiError` rendered the way Anthropic's clients read errors.
pub(super) struct AnthropicError(pub(super) ApiError);

impl AnthropicError {
    fn body(&self) -> Value {
        let e = &self.0;
        let kind = match e.status.as_u16() {
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            500..=599 => "api_error",
            _ => "invalid_request_error",
        };
        // Tandem's stable code travels beside Anthropic's fields (clients ignore extras).
        json!({"type": "error", "error": {"type": kind, "message": e.message, "code": e.code}})
    }
}

impl IntoResponse for AnthropicError {
    fn into_response(self) -> Response {
        let mut r = (self.0.status, axum::Json(self.body())).into_response();
        if self.0.status == StatusCode::TOO_MANY_REQUESTS {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        r
    }
}

/// `x-api-key: <token>` (what Anthropic's clients send) or `Authorization: Bearer <token>`.
fn authorize_messages(gw: &Gateway, headers: &HeaderMap) -> Result<(), ApiError> {
    match headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        Some(key) if gw.authorized(Some(&format!("Bearer {}", key.trim()))) => Ok(()),
        _ => authorize(gw, headers).map_err(|mut e| {
            e.message = "missing or wrong gateway token (x-api-key: <token> or Authorization: Bearer <token>; `tandem serve` prints it at first start)".into();
            e
        }),
    }
}

/// The Messages request as the chat request it stands for: the system prompt first, then the
/// turns; content blocks other than text are refused by the same check as chat parts.
fn to_chat(req: MessagesRequest) -> Result<ChatRequest, ApiError> {
    if req.max_tokens == Some(0) {
        return Err(ApiError::bad(
            "gateway.bad_request",
            "max_tokens must be at least 1",
        ));
    }
    let mut tools = Vec::new();
    for (i, t) in req.tools.unwrap_or_default().into_iter().enumerate() {
        if t.kind.as_deref().is_some_and(|k| k != "custom") {
            return Err(ApiError::bad(
                "gateway.tools_unsupported",
                format!(
                    "tools[{i}]: only client tools are supported (got {:?})",
                    t.kind
                ),
            ));
        }
        tools.push(InTool {
            kind: "function".into(),
            function: Some(crate::cloud::ToolDef {
                name: t.name,
                description: t.description,
                parameters: t
                    .input_schema
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            }),
        });
    }
    // Anthropic's choice in OpenAI's terms (`openai_tools` checks it).
    let tool_choice = match &req.tool_choice {
        None | Some(Value::Null) => None,
        Some(c) => Some(match c["type"].as_str() {
            Some("auto") => json!("auto"),
            Some("any") => json!("required"),
            Some("none") => json!("none"),
            Some("tool") => json!({"type": "function", "function": {"name": c["name"]}}),
            _ => {
                return Err(ApiError::bad(
                    "gateway.bad_request",
                    "tool_choice.type must be auto, any, tool or none",
                ))
            }
        }),
    };
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = req.system {
        messages.push(InMessage {
            role: "system".into(),
            content: Some(system),
            tool_calls: None,
            tool_call_id: None,
        });
    }
    for (i, m) in req.messages.into_iter().enumerate() {
        if m.role != "user" && m.role != "assistant" {
            return Err(ApiError::bad(
                "gateway.bad_request",
                format!(
                    "messages[{i}]: role {:?} is not allowed here (user or assistant; the system prompt is the top-level `system`)",
                    m.role
                ),
            ));
        }
        turn_messages(i, m, &mut messages)?;
    }
    Ok(ChatRequest {
        model: req.model,
        messages,
        stream: req.stream,
        stream_options: None,
        max_tokens: req.max_tokens,
        max_completion_tokens: None,
        temperature: req.temperature,
        n: None,
        tools: Some(tools),
        tool_choice,
        parallel_tool_calls: None,
    })
}

/// The answer's content blocks: its text, then a `tool_use` block per call.
fn content_blocks(s: &Summary) -> Vec<Value> {
    let mut blocks = Vec::new();
    if !s.text.is_empty() || s.tool_calls.is_empty() {
        blocks.push(json!({"type": "text", "text": s.text}));
    }
    blocks.extend(s.tool_calls.iter().map(|c| {
        json!({"type": "tool_use", "id": c.id, "name": c.function.name, "input": call_input(c)})
    }));
    blocks
}

/// A call's arguments as the object Anthropic's clients expect.
fn call_input(c: &crate::cloud::ToolCall) -> Value {
    serde_json::from_str::<Value>(&c.function.arguments)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}))
}

fn stop_reason(s: &Summary) -> &'static str {
    if s.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

fn message_id(id: &str) -> String {
    format!("msg_{}", id.trim_start_matches("chatcmpl-"))
}

fn message_usage(s: &Summary) -> Value {
    json!({"input_tokens": s.prompt_tokens, "output_tokens": s.completion_tokens})
}

pub(super) async fn messages(
    State(gw): State<Arc<Gateway>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match messages_inner(&gw, &headers, body).await {
        Ok(r) => r,
        Err(e) => AnthropicError(e).into_response(),
    }
}

async fn messages_inner(
    gw: &Arc<Gateway>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    authorize_messages(gw, headers)?;
    let req: MessagesRequest = read_json(gw, headers, body).await?;
    let chat = to_chat(req)?;
    let id = gw.request_id();
    let (task, opts) = to_task(gw, &chat, &id)?;
    let started = start(gw, task, opts).await?;
    if chat.stream.unwrap_or(false) {
        return stream_response(
            started,
            MessagesWire {
                model: chat.model.clone(),
            },
        );
    }
    let (plan, summary, notices) = finish(started).await?;
    let v = json!({
        "id": message_id(&id),
        "type": "message",
        "role": "assistant",
        "model": chat.model,
        "content": content_blocks(&summary),
        "stop_reason": stop_reason(&summary),
        "stop_sequence": null,
        "usage": message_usage(&summary),
        "tandem": extension(&plan, Some(&summary), &notices),
    });
    Ok(with_route_headers(
        axum::Json(v).into_response(),
        &id,
        &plan,
    ))
}

/// Anthropic's event sequence: `message_start`, `content_block_start`, `ping`, a
/// `content_block_delta` per piece of text as the run writes it, `content_block_stop`,
/// `message_delta` (stop reason, usage and Tandem's extension), `message_stop`. An error after
/// the headers went out is an `error` event.
struct MessagesWire {
    model: String,
}

fn event(name: &str, v: &Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {v}\n\n"))
}

impl StreamWire for MessagesWire {
    fn open(&mut self, s: &Started) -> Vec<Bytes> {
        let start = json!({
            "type": "message_start",
            "message": {
                "id": message_id(&s.id),
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        });
        vec![
            event("message_start", &start),
            event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            event("ping", &json!({"type": "ping"})),
        ]
    }

    fn text(&mut self, _s: &Started, text: &str) -> Bytes {
        event(
            "content_block_delta",
            &json!({
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            }),
        )
    }

    fn end(
        &mut self,
        s: &Started,
        notices: &[String],
        result: Result<Summary, ApiError>,
    ) -> Vec<Bytes> {
        match result {
            Ok(summary) => {
                let mut out = vec![event(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": 0}),
                )];
                // Each call as its own block after the text, its input in one delta (calls
                // arrive whole: placeholders are restored in complete arguments only).
                for (n, c) in summary.tool_calls.iter().enumerate() {
                    let index = n + 1;
                    out.push(event(
                        "content_block_start",
                        &json!({"type": "content_block_start", "index": index,
                                "content_block": {"type": "tool_use", "id": c.id, "name": c.function.name, "input": {}}}),
                    ));
                    out.push(event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": call_input(c).to_string()}}),
                    ));
                    out.push(event(
                        "content_block_stop",
                        &json!({"type": "content_block_stop", "index": index}),
                    ));
                }
                out.push(event(
                    "message_delta",
                    &json!({
                        "type": "message_delta",
                        "delta": {"stop_reason": stop_reason(&summary), "stop_sequence": null},
                        "usage": message_usage(&summary),
                        "tandem": extension(&s.plan, Some(&summary), notices),
                    }),
                ));
                out.push(event("message_stop", &json!({"type": "message_stop"})));
                out
            }
            Err(e) => vec![event("error", &AnthropicError(e).body())],
        }
    }
}
