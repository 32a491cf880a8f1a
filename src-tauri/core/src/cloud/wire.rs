//! What both wire formats share: HTTP status → typed failure, and the loop that turns an SSE
//! byte stream into `CloudEvent`s (each format only interprets one `data` payload at a time).

use std::collections::VecDeque;
use std::time::Duration;

use futures::stream::StreamExt;
use serde::Deserialize;

use super::sse::SseDecoder;
use super::{CloudError, CloudEvent, EventStream};

/// Both OpenAI and Anthropic put a human-readable reason at `error.message`.
#[derive(Deserialize)]
struct ErrorBody {
    error: Option<ErrorDetail>,
}

#[derive(Deserialize)]
struct ErrorDetail {
    #[serde(default)]
    message: Option<String>,
}

/// The provider's `error.message` from a JSON body, else the first 200 characters of the body.
pub(crate) fn error_message(body: &str) -> String {
    serde_json::from_str::<ErrorBody>(body)
        .ok()
        .and_then(|b| b.error)
        .and_then(|e| e.message)
        .unwrap_or_else(|| body.chars().take(200).collect())
}

/// Passes a successful response through; turns any other into the failure the orchestrator acts
/// on (401/403 key, 429 rate limit with `Retry-After`, 5xx and Anthropic's 529 server trouble).
pub(crate) async fn check_status(
    provider: &str,
    resp: reqwest::Response,
) -> Result<reqwest::Response, CloudError> {
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
    let provider = provider.to_string();
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
            message: error_message(&text),
        },
    })
}

/// reqwest errors print the URL; keep messages short and free of query strings.
pub(crate) fn without_url(e: reqwest::Error) -> String {
    e.without_url().to_string()
}

pub(crate) fn connect_error(provider: &str, e: reqwest::Error) -> CloudError {
    CloudError::Connect {
        provider: provider.to_string(),
        message: without_url(e),
    }
}

/// What one SSE `data` payload means.
pub(crate) enum Step {
    /// Nothing for the caller (role headers, pings, usage-only chunks, unreadable lines).
    Skip,
    Text(String),
    /// The format's terminator (`[DONE]`, `message_stop`).
    End,
}

/// A wire format's reading of its stream; it keeps the finish reason and usage it has seen.
pub(crate) trait WireDecoder: Send + 'static {
    fn data(&mut self, provider: &str, data: &str) -> Result<Step, CloudError>;
    /// Whether the reply is complete even without a terminator (a finish reason arrived):
    /// some servers close the connection right after it.
    fn complete(&self) -> bool;
    fn done(&mut self) -> CloudEvent;
}

struct State<D> {
    bytes: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    sse: SseDecoder,
    wire: D,
    pending: VecDeque<String>,
    ended: bool,
    done: bool,
    provider: String,
}

/// The reply as it arrives: deltas, then exactly one `Done` or one error (`StreamCut` when the
/// connection ends early).
pub(crate) fn event_stream<D: WireDecoder>(
    provider: &str,
    resp: reqwest::Response,
    wire: D,
) -> EventStream {
    let st = State {
        bytes: resp.bytes_stream().boxed(),
        sse: SseDecoder::new(),
        wire,
        pending: VecDeque::new(),
        ended: false,
        done: false,
        provider: provider.to_string(),
    };
    futures::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        loop {
            let Some(data) = st.pending.pop_front() else {
                if st.ended {
                    st.done = true;
                    if st.wire.complete() {
                        return Some((Ok(st.wire.done()), st));
                    }
                    let err = CloudError::StreamCut {
                        provider: st.provider.clone(),
                        message: "connection closed before the end of the reply".into(),
                    };
                    return Some((Err(err), st));
                }
                let mut out = Vec::new();
                match st.bytes.next().await {
                    Some(Ok(chunk)) => st.sse.push(&chunk, &mut out),
                    Some(Err(e)) => {
                        st.done = true;
                        let err = CloudError::StreamCut {
                            provider: st.provider.clone(),
                            message: without_url(e),
                        };
                        return Some((Err(err), st));
                    }
                    None => {
                        st.sse.finish(&mut out);
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
            match st.wire.data(&st.provider, data) {
                Ok(Step::Skip) => {}
                Ok(Step::Text(t)) if t.is_empty() => {}
                Ok(Step::Text(text)) => return Some((Ok(CloudEvent::Delta { text }), st)),
                Ok(Step::End) => {
                    st.done = true;
                    return Some((Ok(st.wire.done()), st));
                }
                Err(e) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
            }
        }
    })
    .boxed()
}
