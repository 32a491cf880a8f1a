//! The OpenAI-compatible Chat Completions wire format (OpenAI, OpenRouter, Groq, Mistral,
//! Together, DeepSeek, Perplexity, vLLM, llama.cpp, Ollama): streaming (SSE) and not, decoded
//! tolerantly (unknown fields, empty `finish_reason`, usage in the last chunk, keep-alive
//! comments, CRLF).

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::wire::{self, Step, WireDecoder};
use super::{
    CloudError, CloudEvent, CloudProvider, CloudRequest, EventStream, SendPermit, ToolCall, Usage,
};

/// A configured OpenAI-compatible endpoint.
#[derive(Clone)]
pub struct OpenAiCompatible {
    name: String,
    base: url::Url,
    endpoint: url::Url,
    client: reqwest::Client,
}

impl std::fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint.as_str())
            .finish()
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

/// A piece of a streamed tool call: the first piece of each index names it, the rest append
/// to its arguments.
#[derive(Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

impl OpenAiCompatible {
    /// `base_url` like `https://api.openai.com/v1` (with or without a trailing slash).
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
            .join("chat/completions")
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
        let mut body = json!({"model": req.model, "messages": req.messages, "stream": stream});
        if stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        if let Some(m) = req.max_tokens {
            body["max_tokens"] = json!(m);
        }
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        if !req.tools.is_empty() {
            body["tools"] = req.tools.openai();
            if let Some(c) = req.tools.openai_choice() {
                body["tool_choice"] = c;
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
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        // Local servers (llama.cpp, Ollama) need no key.
        if !key.is_empty() {
            builder = builder.bearer_auth(key);
        }
        if stream {
            // Compressed SSE would be buffered by the decoder: ask for it plain.
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

/// Reads `data:` payloads of Chat Completions chunks.
#[derive(Default)]
struct ChunkDecoder {
    finish: Option<String>,
    usage: Option<Usage>,
    /// Calls by their stream index, joined piece by piece.
    calls: std::collections::BTreeMap<usize, ToolCall>,
}

impl WireDecoder for ChunkDecoder {
    fn data(&mut self, provider: &str, data: &str) -> Result<Step, CloudError> {
        if data == "[DONE]" {
            return Ok(Step::End);
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                // One unreadable line does not lose the reply; it is logged.
                tracing::warn!(provider, error = %e, "skipping an unreadable SSE data line");
                return Ok(Step::Skip);
            }
        };
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        let mut text = String::new();
        for c in chunk.choices {
            if let Some(f) = c.finish_reason.filter(|f| !f.is_empty()) {
                self.finish = Some(f);
            }
            let Some(d) = c.delta else { continue };
            if let Some(t) = d.content {
                text.push_str(&t);
            }
            for (n, call) in d.tool_calls.into_iter().flatten().enumerate() {
                // Servers that send each call whole may leave out the index.
                let index = call.index.unwrap_or(n);
                let entry = self
                    .calls
                    .entry(index)
                    .or_insert_with(|| ToolCall::new("", "", ""));
                if let Some(id) = call.id.filter(|i| !i.is_empty()) {
                    entry.id = id;
                }
                if let Some(f) = call.function {
                    if let Some(name) = f.name.filter(|n| !n.is_empty()) {
                        entry.function.name = name;
                    }
                    if let Some(a) = f.arguments {
                        entry.function.arguments.push_str(&a);
                    }
                }
            }
        }
        Ok(Step::Text(text))
    }

    fn complete(&self) -> bool {
        self.finish.is_some()
    }

    fn done(&mut self) -> CloudEvent {
        let calls = std::mem::take(&mut self.calls);
        CloudEvent::Done {
            finish_reason: self.finish.take(),
            usage: self.usage.take(),
            tool_calls: calls
                .into_values()
                .enumerate()
                .map(|(n, mut c)| {
                    if c.id.is_empty() {
                        c.id = format!("call_{n}");
                    }
                    c
                })
                .collect(),
        }
    }
}

impl CloudProvider for OpenAiCompatible {
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
                ChunkDecoder::default(),
            ))
        })
    }
}
