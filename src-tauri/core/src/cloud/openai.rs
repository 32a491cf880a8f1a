//! The OpenAI-compatible Chat Completions wire format (OpenAI, OpenRouter, Groq, Mistral,
//! Together, DeepSeek, Perplexity, vLLM, llama.cpp, Ollama): streaming (SSE) and not, decoded
//! tolerantly (unknown fields, empty `finish_reason`, usage in the last chunk, keep-alive
//! comments, CRLF).

use std::time::Duration;

use futures::stream::{BoxStream, StreamExt};
use serde::Deserialize;
use serde_json::json;

use super::sse::SseDecoder;
use super::{CloudError, CloudEvent, CloudRequest, Usage};

/// A configured OpenAI-compatible endpoint.
#[derive(Clone)]
pub struct OpenAiCompatible {
    name: String,
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
    message: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: Option<ErrorDetail>,
}

#[derive(Deserialize)]
struct ErrorDetail {
    #[serde(default)]
    message: Option<String>,
}

impl OpenAiCompatible {
    /// `base_url` like `https://api.openai.com/v1` (with or without a trailing slash).
    pub fn new(name: impl Into<String>, base_url: &str) -> Result<Self, CloudError> {
        // `Url::join` drops the last path segment ("/v1") unless the base ends with a slash.
        let base = if base_url.ends_with('/') {
            base_url.to_string()
        } else {
            format!("{base_url}/")
        };
        let endpoint = url::Url::parse(&base)
            .and_then(|u| u.join("chat/completions"))
            .map_err(|e| CloudError::Config(format!("bad base URL {base_url:?}: {e}")))?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| CloudError::Config(e.to_string()))?;
        Ok(Self {
            name: name.into(),
            endpoint,
            client,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
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
        body
    }

    async fn send(
        &self,
        req: &CloudRequest,
        key: &str,
        stream: bool,
    ) -> Result<reqwest::Response, CloudError> {
        let mut builder = self
            .client
            .post(self.endpoint.clone())
            .json(&self.body(req, stream));
        if !key.is_empty() {
            builder = builder.bearer_auth(key);
        }
        if stream {
            // Compressed SSE would be buffered by the decoder: ask for it plain.
            builder = builder
                .header(reqwest::header::ACCEPT_ENCODING, "identity")
                .header(reqwest::header::ACCEPT, "text/event-stream");
        }
        let resp = builder.send().await.map_err(|e| CloudError::Connect {
            provider: self.name.clone(),
            message: without_url(e),
        })?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = resp.text().await.unwrap_or_default();
        let message = serde_json::from_str::<ErrorBody>(&text)
            .ok()
            .and_then(|b| b.error)
            .and_then(|e| e.message)
            .unwrap_or_else(|| text.chars().take(200).collect());
        let provider = self.name.clone();
        Err(match status.as_u16() {
            401 | 403 => CloudError::KeyRejected {
                provider,
                status: status.as_u16(),
            },
            429 => CloudError::RateLimited {
                provider,
                retry_after,
            },
            s @ 500..=599 => CloudError::Server {
                provider,
                status: s,
            },
            s => CloudError::BadRequest {
                provider,
                status: s,
                message,
            },
        })
    }

    /// The whole reply at once.
    pub async fn complete(
        &self,
        req: &CloudRequest,
        key: &str,
    ) -> Result<(String, Option<String>, Option<Usage>), CloudError> {
        let resp = self.send(req, key, false).await?;
        let bytes = resp.bytes().await.map_err(|e| CloudError::StreamCut {
            provider: self.name.clone(),
            message: without_url(e),
        })?;
        let chunk: Chunk = serde_json::from_slice(&bytes).map_err(|e| CloudError::Protocol {
            provider: self.name.clone(),
            message: e.to_string(),
        })?;
        let choice = chunk.choices.into_iter().next();
        let finish = choice
            .as_ref()
            .and_then(|c| c.finish_reason.clone())
            .filter(|f| !f.is_empty());
        let text = choice
            .and_then(|c| c.message.or(c.delta))
            .and_then(|m| m.content)
            .unwrap_or_default();
        Ok((text, finish, chunk.usage))
    }

    /// The reply as it arrives. Ends with one `Done`, or an error (`StreamCut` when the
    /// connection ends without `[DONE]` or a finish reason).
    pub async fn stream(
        &self,
        req: &CloudRequest,
        key: &str,
    ) -> Result<BoxStream<'static, Result<CloudEvent, CloudError>>, CloudError> {
        let resp = self.send(req, key, true).await?;
        let provider = self.name.clone();
        struct St<S> {
            bytes: S,
            decoder: SseDecoder,
            pending: std::collections::VecDeque<String>,
            ended: bool,
            provider: String,
            finish: Option<String>,
            usage: Option<Usage>,
            done: bool,
        }
        let st = St {
            bytes: resp.bytes_stream(),
            decoder: SseDecoder::new(),
            pending: Default::default(),
            ended: false,
            provider,
            finish: None,
            usage: None,
            done: false,
        };
        Ok(futures::stream::unfold(st, |mut st| async move {
            if st.done {
                return None;
            }
            loop {
                let Some(data) = st.pending.pop_front() else {
                    if st.ended {
                        st.done = true;
                        // Some servers close without `[DONE]` after a finish reason: that is complete.
                        if st.finish.is_some() {
                            let done = CloudEvent::Done { finish_reason: st.finish.take(), usage: st.usage.take() };
                            return Some((Ok(done), st));
                        }
                        let err = CloudError::StreamCut {
                            provider: st.provider.clone(),
                            message: "connection closed before the end of the reply".into(),
                        };
                        return Some((Err(err), st));
                    }
                    let mut out = Vec::new();
                    match st.bytes.next().await {
                        Some(Ok(chunk)) => st.decoder.push(&chunk, &mut out),
                        Some(Err(e)) => {
                            st.done = true;
                            let err = CloudError::StreamCut { provider: st.provider.clone(), message: without_url(e) };
                            return Some((Err(err), st));
                        }
                        None => {
                            st.decoder.finish(&mut out);
                            st.ended = true;
                        }
                    }
                    st.pending.extend(out);
                    continue;
                };
                let data = data.trim();
                if data.is_empty() {
                    continue;
                }
                if data == "[DONE]" {
                    st.done = true;
                    let done = CloudEvent::Done { finish_reason: st.finish.take(), usage: st.usage.take() };
                    return Some((Ok(done), st));
                }
                let chunk: Chunk = match serde_json::from_str(data) {
                    Ok(c) => c,
                    Err(e) => {
                        // One unreadable line does not lose the reply; it is logged.
                        tracing::warn!(provider = %st.provider, error = %e, "skipping an unreadable SSE data line");
                        continue;
                    }
                };
                if chunk.usage.is_some() {
                    st.usage = chunk.usage;
                }
                let mut text = String::new();
                for c in chunk.choices {
                    if let Some(f) = c.finish_reason.filter(|f| !f.is_empty()) {
                        st.finish = Some(f);
                    }
                    if let Some(t) = c.delta.and_then(|d| d.content) {
                        text.push_str(&t);
                    }
                }
                if !text.is_empty() {
                    return Some((Ok(CloudEvent::Delta { text }), st));
                }
            }
        })
        .boxed())
    }
}

/// reqwest errors print the URL; keep messages short and free of query strings.
fn without_url(e: reqwest::Error) -> String {
    e.without_url().to_string()
}
