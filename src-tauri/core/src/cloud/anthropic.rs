//! Anthropic's Messages API: `x-api-key` + `anthropic-version` headers, the system prompt as a
//! top-level field, `max_tokens` required, and a stream of typed events (`message_start`,
//! `content_block_delta`, `message_delta`, `message_stop`, `ping`, `error`). Unknown event types
//! and fields are ignored so new server features do not break old clients.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::wire::{self, Step, WireDecoder};
use super::{
    CloudError, CloudEvent, CloudProvider, CloudRequest, EventStream, Role, SendPermit, ToolCall,
    ToolChoice, Usage,
};

/// The API version Tandem speaks (the stable one the Messages API documents).
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is mandatory for this API; used when the request leaves it open.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

#[derive(Clone)]
pub struct Anthropic {
    name: String,
    base: url::Url,
    endpoint: url::Url,
    client: reqwest::Client,
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint.as_str())
            .finish()
    }
}

#[derive(Deserialize, Default)]
struct AUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

/// `message_start`'s message: only its usage is read (the text comes in deltas).
#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    usage: Option<AUsage>,
}

#[derive(Deserialize)]
struct Event {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    usage: Option<AUsage>,
    #[serde(default)]
    error: Option<ErrorDetail>,
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    content_block: Option<Block>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    partial_json: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
}

/// `content_block_start`'s block: a `tool_use` one names the call.
#[derive(Deserialize)]
struct Block {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ErrorDetail {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    message: String,
}

impl Anthropic {
    /// `base_url` like `https://api.anthropic.com/v1`.
    pub fn new(name: impl Into<String>, base_url: &str) -> Result<Self, CloudError> {
        Self::with_base(name, base_url, super::agents::Trust::Cloud)
    }

    /// For a provider of `trust` (a device of the user's may be on a LAN address over http).
    pub fn with_base(
        name: impl Into<String>,
        base_url: &str,
        trust: super::agents::Trust,
    ) -> Result<Self, CloudError> {
        let base = super::base_url_for(base_url, trust)?;
        let endpoint = base
            .join("messages")
            .map_err(|e| CloudError::Config(format!("bad base URL {base_url:?}: {e}")))?;
        Ok(Self {
            name: name.into(),
            base,
            endpoint,
            client: super::http_client()?,
        })
    }

    pub fn endpoint(&self) -> &url::Url {
        &self.endpoint
    }

    fn body(&self, req: &CloudRequest, stream: bool) -> serde_json::Value {
        // System turns become the top-level `system`; the rest keep their order.
        let system: Vec<&str> = req
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        let messages = messages(&req.messages);
        let mut body = json!({
            "model": req.model,
            "max_tokens": req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": messages,
            "stream": stream,
        });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        if !req.tools.is_empty() {
            body["tools"] = req
                .tools
                .defs
                .iter()
                .map(|d| {
                    let mut t = json!({"name": d.name, "input_schema": d.parameters});
                    if let Some(desc) = &d.description {
                        t["description"] = json!(desc);
                    }
                    t
                })
                .collect();
            if let Some(c) = &req.tools.choice {
                body["tool_choice"] = match c {
                    ToolChoice::Auto => json!({"type": "auto"}),
                    ToolChoice::None => json!({"type": "none"}),
                    ToolChoice::Required => json!({"type": "any"}),
                    ToolChoice::Function(n) => json!({"type": "tool", "name": n}),
                };
            }
        }
        body
    }

    /// Posts `body` (made by `wire_body`) exactly as given.
    async fn send_body(
        &self,
        body: Vec<u8>,
        key: &str,
        stream: bool,
    ) -> Result<reqwest::Response, CloudError> {
        let mut builder = self
            .client
            .post(self.endpoint.clone())
            .header("anthropic-version", API_VERSION)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if !key.is_empty() {
            builder = builder.header("x-api-key", key);
        }
        if stream {
            builder = builder
                .header(reqwest::header::ACCEPT_ENCODING, "identity")
                .header(reqwest::header::ACCEPT, "text/event-stream");
        }
        let resp = builder
            .send()
            .await
            .map_err(|e| wire::connect_error(&self.name, e))?;
        wire::check_status(&self.name, resp).await
    }
}

/// The conversation in Anthropic's shape: system turns left out (they become `system`), an
/// assistant's tool calls as `tool_use` blocks, and tool results as `tool_result` blocks of one
/// user message (consecutive results share it, as the API requires).
fn messages(all: &[crate::local::ChatMessage]) -> Vec<serde_json::Value> {
    let mut out: Vec<serde_json::Value> = Vec::new();
    for m in all.iter().filter(|m| m.role != Role::System) {
        match m.role {
            Role::Assistant if !m.tool_calls.is_empty() => {
                let mut blocks = Vec::new();
                if !m.content.is_empty() {
                    blocks.push(json!({"type": "text", "text": m.content}));
                }
                for c in &m.tool_calls {
                    // Arguments are JSON text on the OpenAI side, an object here.
                    let input = serde_json::from_str::<serde_json::Value>(&c.function.arguments)
                        .ok()
                        .filter(|v| v.is_object())
                        .unwrap_or_else(|| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.function.name, "input": input}));
                }
                out.push(json!({"role": "assistant", "content": blocks}));
            }
            Role::Tool => {
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                    "content": m.content,
                });
                match out.last_mut() {
                    Some(last)
                        if last["role"] == "user"
                            && last["content"]
                                .as_array()
                                .and_then(|b| b.first())
                                .is_some_and(|b| b["type"] == "tool_result") =>
                    {
                        if let Some(blocks) = last["content"].as_array_mut() {
                            blocks.push(block);
                        }
                    }
                    _ => out.push(json!({"role": "user", "content": [block]})),
                }
            }
            _ => out.push(json!({"role": m.role, "content": m.content})),
        }
    }
    out
}

/// An `error` event in the middle of a stream, as the typed failure it stands for.
fn stream_error(provider: &str, e: ErrorDetail) -> CloudError {
    let provider = provider.to_string();
    match e.kind.as_str() {
        "overloaded_error" => CloudError::Server {
            provider,
            status: 529,
        },
        "api_error" => CloudError::Server {
            provider,
            status: 500,
        },
        "rate_limit_error" => CloudError::RateLimited {
            provider,
            retry_after: None,
        },
        "authentication_error" | "permission_error" => CloudError::KeyRejected {
            provider,
            status: 401,
        },
        _ => CloudError::Protocol {
            provider,
            message: format!("{}: {}", e.kind, e.message),
        },
    }
}

#[derive(Default)]
struct EventDecoder {
    stop: Option<String>,
    input: Option<u64>,
    output: Option<u64>,
    /// `tool_use` blocks by content index; their input arrives as JSON text in pieces.
    calls: std::collections::BTreeMap<usize, ToolCall>,
}

impl EventDecoder {
    fn note_usage(&mut self, u: Option<AUsage>) {
        if let Some(u) = u {
            self.input = u.input_tokens.or(self.input);
            // `message_delta` carries the running total of output tokens.
            self.output = u.output_tokens.or(self.output);
        }
    }
}

impl WireDecoder for EventDecoder {
    fn data(&mut self, provider: &str, data: &str) -> Result<Step, CloudError> {
        let ev: Event = match serde_json::from_str(data) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(provider, error = %e, "skipping an unreadable SSE data line");
                return Ok(Step::Skip);
            }
        };
        Ok(match ev.kind.as_str() {
            "message_start" => {
                self.note_usage(ev.message.and_then(|m| m.usage));
                Step::Skip
            }
            "content_block_start" => {
                if let (Some(i), Some(b)) = (ev.index, ev.content_block) {
                    if b.kind == "tool_use" {
                        // A whole input given at the start (non-empty) is kept unless deltas follow.
                        let input = b
                            .input
                            .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
                            .map(|v| v.to_string())
                            .unwrap_or_default();
                        self.calls.insert(
                            i,
                            ToolCall::new(
                                b.id.unwrap_or_default(),
                                b.name.unwrap_or_default(),
                                input,
                            ),
                        );
                    }
                }
                Step::Skip
            }
            "content_block_delta" => match ev.delta {
                Some(d) if d.kind.as_deref() == Some("input_json_delta") => {
                    if let Some(c) = ev.index.and_then(|i| self.calls.get_mut(&i)) {
                        c.function
                            .arguments
                            .push_str(d.partial_json.as_deref().unwrap_or_default());
                    }
                    Step::Skip
                }
                // Thinking deltas are not part of the answer text.
                Some(d) if d.kind.as_deref().is_none_or(|k| k == "text_delta") => {
                    Step::Text(d.text.unwrap_or_default())
                }
                _ => Step::Skip,
            },
            "message_delta" => {
                if let Some(s) = ev
                    .delta
                    .and_then(|d| d.stop_reason)
                    .filter(|s| !s.is_empty())
                {
                    self.stop = Some(s);
                }
                self.note_usage(ev.usage);
                Step::Skip
            }
            "message_stop" => Step::End,
            "error" => {
                let detail = ev.error.unwrap_or(ErrorDetail {
                    kind: "error".into(),
                    message: String::new(),
                });
                return Err(stream_error(provider, detail));
            }
            // ping, content_block_start/stop and anything newer.
            _ => Step::Skip,
        })
    }

    fn complete(&self) -> bool {
        self.stop.is_some()
    }

    fn done(&mut self) -> CloudEvent {
        let usage = (self.input.is_some() || self.output.is_some()).then(|| Usage {
            prompt_tokens: self.input.unwrap_or(0),
            completion_tokens: self.output.unwrap_or(0),
        });
        let calls = std::mem::take(&mut self.calls);
        CloudEvent::Done {
            finish_reason: self.stop.take(),
            usage,
            tool_calls: calls
                .into_values()
                .map(|mut c| {
                    if c.function.arguments.is_empty() {
                        c.function.arguments = "{}".into();
                    }
                    c
                })
                .collect(),
        }
    }
}

impl CloudProvider for Anthropic {
    fn name(&self) -> &str {
        &self.name
    }

    fn base(&self) -> &url::Url {
        &self.base
    }

    fn wire_body(&self, req: &CloudRequest, stream: bool) -> Vec<u8> {
        serde_json::to_vec(&self.body(req, stream)).unwrap_or_default()
    }

    fn stream_body<'a>(
        &'a self,
        body: Vec<u8>,
        key: &'a str,
        _permit: &'a SendPermit,
    ) -> BoxFuture<'a, Result<EventStream, CloudError>> {
        Box::pin(async move {
            let resp = self.send_body(body, key, true).await?;
            Ok(wire::event_stream(
                &self.name,
                resp,
                EventDecoder::default(),
            ))
        })
    }
}
