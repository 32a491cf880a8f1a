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
    messages: Vec<InMessage>,
    /// A string or a list of text blocks.
    #[serde(default)]
    system: Option<Content>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    temperature: Option<f64>,
    /// Tool definitions: not supported yet, and refused plainly rather than dropped.
    #[serde(default)]
    tools: Option<Vec<Value>>,
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
    if req.tools.as_ref().is_some_and(|t| !t.is_empty()) {
        return Err(ApiError::bad(
            "gateway.tools_unsupported",
            "tool definitions are not supported by this gateway yet (send the request without tools)",
        ));
    }
    if req.max_tokens == Some(0) {
        return Err(ApiError::bad(
            "gateway.bad_request",
            "max_tokens must be at least 1",
        ));
    }
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = req.system {
        messages.push(InMessage {
            role: "system".into(),
            content: Some(system),
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
        messages.push(m);
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
        tools: None,
    })
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
        "content": [{"type": "text", "text": summary.text}],
        "stop_reason": "end_turn",
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
            Ok(summary) => vec![
                event(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": 0}),
                ),
                event(
                    "message_delta",
                    &json!({
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                        "usage": message_usage(&summary),
                        "tandem": extension(&s.plan, Some(&summary), notices),
                    }),
                ),
                event("message_stop", &json!({"type": "message_stop"})),
            ],
            Err(e) => vec![event("error", &AnthropicError(e).body())],
        }
    }
}
