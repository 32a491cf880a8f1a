//! Cloud agents: the `CloudProvider` seam and its two wire formats (OpenAI-compatible Chat
//! Completions, Anthropic Messages), requests, streamed events, typed failures, reliability
//! around each provider, and the catalog of agents. Keys are passed per call, never held.

pub mod agents;
pub mod anthropic;
pub mod loopback;
pub mod openai;
pub mod reliable;
pub mod sse;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

pub use crate::egress::SendPermit;
pub use crate::local::{ChatMessage, Role};

/// One chat request to a cloud model. Only this crate builds one (`egress::Sanitizer`): hosts
/// get it inside a `SanitizedRequest`, so no code outside the core can send unsanitized text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CloudRequest {
    pub(crate) model: String,
    pub(crate) messages: Vec<ChatMessage>,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) temperature: Option<f64>,
}

impl CloudRequest {
    pub fn model(&self) -> &str {
        &self.model
    }
    pub fn messages(&self) -> &[ChatMessage] {
        &self.messages
    }
    pub fn max_tokens(&self) -> Option<u32> {
        self.max_tokens
    }
    pub fn temperature(&self) -> Option<f64> {
        self.temperature
    }
}

/// A streamed reply: deltas, then one `Done` or one error.
pub type EventStream = BoxStream<'static, Result<CloudEvent, CloudError>>;

/// One provider's wire client. Tests swap in the real clients pointed at a loopback server.
pub trait CloudProvider: Send + Sync {
    fn name(&self) -> &str;
    /// The configured base URL (the network monitor probes it).
    fn base(&self) -> &url::Url;
    /// The exact request body `stream` / `complete` write for `req` (the egress ledger hashes
    /// these bytes; serialization is deterministic, so they are the bytes sent).
    fn wire_body(&self, req: &CloudRequest, stream: bool) -> Vec<u8>;
    /// Streams a request whose body `wire_body` already made: egress sends exactly the bytes it
    /// hashed into the ledger, and a retry sends them again. Only the egress guard holds a
    /// `SendPermit`, so nothing else can call this: hosts, tests and benchmarks send through
    /// `Egress::send` (pause switch, last-line check, ledger) like everything else.
    fn stream_body<'a>(
        &'a self,
        body: Vec<u8>,
        key: &'a str,
        permit: &'a SendPermit,
    ) -> BoxFuture<'a, Result<EventStream, CloudError>>;
}

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// OpenAI Chat Completions and the many servers compatible with it.
    Openai,
    Anthropic,
}

impl std::str::FromStr for Wire {
    type Err = CloudError;
    fn from_str(s: &str) -> Result<Self, CloudError> {
        match s.to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" | "openai_compatible" => Ok(Wire::Openai),
            "anthropic" => Ok(Wire::Anthropic),
            other => Err(CloudError::Config(format!(
                "unknown wire format {other:?} (expected openai or anthropic)"
            ))),
        }
    }
}

/// A client for `name` at `base_url` speaking `wire`.
pub fn connect(
    wire: Wire,
    name: &str,
    base_url: &str,
) -> Result<Arc<dyn CloudProvider>, CloudError> {
    Ok(match wire {
        Wire::Openai => Arc::new(openai::OpenAiCompatible::new(name, base_url)?),
        Wire::Anthropic => Arc::new(anthropic::Anthropic::new(name, base_url)?),
    })
}

/// Parses a base URL so that `join` keeps its last segment: `Url::join` drops "/v1" unless the
/// base ends with a slash.
pub(crate) fn base_url(base_url: &str) -> Result<url::Url, CloudError> {
    let with_slash = if base_url.ends_with('/') {
        base_url.to_string()
    } else {
        format!("{base_url}/")
    };
    let url = url::Url::parse(&with_slash)
        .map_err(|e| CloudError::Config(format!("bad base URL {base_url:?}: {e}")))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(url),
        // Plain HTTP would show the payload and key to the network: only on this machine.
        "http" if loopback => Ok(url),
        "http" => Err(CloudError::Config(format!(
            "bad base URL {base_url:?}: plain http is only allowed for servers on this machine (127.0.0.1, localhost); use https"
        ))),
        _ => Err(CloudError::Config(format!(
            "bad base URL {base_url:?}: only https (or http on this machine) is supported"
        ))),
    }
}

/// One HTTP client setup for every provider: a connect timeout here, first-byte and idle
/// timeouts in `reliable`.
pub(crate) fn http_client() -> Result<reqwest::Client, CloudError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        // A redirect would re-send the payload (and a key header) to a host the ledger never
        // names: providers do not redirect API calls, so none is followed.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| CloudError::Config(e.to_string()))
}

/// Token counts as the provider reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// What a streamed reply yields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CloudEvent {
    Delta {
        text: String,
    },
    Done {
        finish_reason: Option<String>,
        usage: Option<Usage>,
    },
}

/// Failures the orchestrator acts on (fall back to another agent or to local). Messages name the
/// provider and never contain a key.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum CloudError {
    #[error("key rejected by {provider} (HTTP {status}): check the key stored for it")]
    KeyRejected { provider: String, status: u16 },
    #[error("{provider} is rate limiting requests{}", retry_after.map(|d| format!(" (retry after {} s)", d.as_secs())).unwrap_or_default())]
    RateLimited {
        provider: String,
        retry_after: Option<Duration>,
    },
    #[error("{provider} failed with HTTP {status}")]
    Server { provider: String, status: u16 },
    #[error("{provider} refused the request (HTTP {status}): {message}")]
    BadRequest {
        provider: String,
        status: u16,
        message: String,
    },
    #[error("cannot reach {provider}: {message}")]
    Connect { provider: String, message: String },
    #[error("{provider} sent something Tandem cannot read: {message}")]
    Protocol { provider: String, message: String },
    #[error("the reply from {provider} stopped before it was complete: {message}")]
    StreamCut { provider: String, message: String },
    #[error("{provider} did not answer within {} ms ({phase})", after.as_millis())]
    Timeout {
        provider: String,
        phase: &'static str,
        after: Duration,
    },
    #[error("{provider} is failing; not asking it again for {} s", retry_in.as_secs())]
    Unavailable {
        provider: String,
        retry_in: Duration,
    },
    #[error("bad provider configuration: {0}")]
    Config(String),
    #[error("no cloud agent fits: {0}")]
    NoAgent(String),
}

impl CloudError {
    /// Worth trying the same provider again (after a pause): connection trouble, timeouts,
    /// rate limits and 500/502/503/504. A rejected key or a bad request never is.
    pub fn retryable(&self) -> bool {
        match self {
            CloudError::Connect { .. }
            | CloudError::Timeout { .. }
            | CloudError::RateLimited { .. } => true,
            // 529: Anthropic's "overloaded".
            CloudError::Server { status, .. } => matches!(status, 500 | 502 | 503 | 504 | 529),
            _ => false,
        }
    }
}

impl crate::ErrorCode for CloudError {
    fn code(&self) -> &'static str {
        match self {
            CloudError::KeyRejected { .. } => "cloud.key_rejected",
            CloudError::RateLimited { .. } => "cloud.rate_limited",
            CloudError::Server { .. } => "cloud.server_error",
            CloudError::BadRequest { .. } => "cloud.bad_request",
            CloudError::Connect { .. } => "cloud.unreachable",
            CloudError::Protocol { .. } => "cloud.protocol",
            CloudError::StreamCut { .. } => "cloud.stream_cut",
            CloudError::Timeout { .. } => "cloud.timeout",
            CloudError::Unavailable { .. } => "cloud.unavailable",
            CloudError::Config(_) => "cloud.config",
            CloudError::NoAgent(_) => "cloud.no_agent",
        }
    }
}
