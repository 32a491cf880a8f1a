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
pub use crate::local::{ChatMessage, FunctionCall, Role, ToolCall};

/// One chat request to a cloud model. Only this crate builds one (`egress::Sanitizer`): hosts
/// get it inside a `SanitizedRequest`, so no code outside the core can send unsanitized text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CloudRequest {
    pub(crate) model: String,
    pub(crate) messages: Vec<ChatMessage>,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) temperature: Option<f64>,
    /// Tools the model may call (an API client's own, passed through the sanitizer).
    #[serde(skip_serializing_if = "Tools::is_empty")]
    pub(crate) tools: Tools,
}

/// One function a model may call: its name, what it does and a JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default = "empty_schema")]
    pub parameters: serde_json::Value,
}

fn empty_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// Which tool the model must use, in terms both wire formats can say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    Auto,
    None,
    /// Some tool, the model picks which.
    Required,
    Function(String),
}

/// The tools a request offers and the choice it asks for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tools {
    pub defs: Vec<ToolDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<ToolChoice>,
}

impl Tools {
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// The definitions in OpenAI's wire shape.
    pub(crate) fn openai(&self) -> serde_json::Value {
        self.defs
            .iter()
            .map(|d| {
                let mut f = serde_json::json!({"name": d.name, "parameters": d.parameters});
                if let Some(desc) = &d.description {
                    f["description"] = serde_json::json!(desc);
                }
                serde_json::json!({"type": "function", "function": f})
            })
            .collect()
    }

    pub(crate) fn openai_choice(&self) -> Option<serde_json::Value> {
        Some(match self.choice.as_ref()? {
            ToolChoice::Auto => serde_json::json!("auto"),
            ToolChoice::None => serde_json::json!("none"),
            ToolChoice::Required => serde_json::json!("required"),
            ToolChoice::Function(n) => {
                serde_json::json!({"type": "function", "function": {"name": n}})
            }
        })
    }
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
    pub fn tools(&self) -> &Tools {
        &self.tools
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

/// A client for a configured provider (its trust decides which plain-http addresses pass).
pub fn connect_provider(p: &agents::ProviderConfig) -> Result<Arc<dyn CloudProvider>, CloudError> {
    base_url_for(&p.base_url, p.trust)?;
    Ok(match p.wire {
        Wire::Openai => Arc::new(openai::OpenAiCompatible::with_base(
            &p.name,
            &p.base_url,
            p.trust,
        )?),
        Wire::Anthropic => Arc::new(anthropic::Anthropic::with_base(
            &p.name,
            &p.base_url,
            p.trust,
        )?),
    })
}

/// Whether `host` is on this machine or in a private network range (RFC 1918, link-local,
/// IPv6 unique-local and link-local): where a device of the user's may answer over plain http.
pub fn private_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        url::Host::Ipv6(ip) => {
            ip.is_loopback()
                || (ip.segments()[0] & 0xfe00) == 0xfc00
                || (ip.segments()[0] & 0xffc0) == 0xfe80
        }
    }
}

/// The warning a device on plain http deserves (None for https or this machine).
pub fn plain_http_warning(base_url: &str) -> Option<String> {
    let url = url::Url::parse(base_url).ok()?;
    let local = match url.host()? {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    (url.scheme() == "http" && !local).then(|| {
        format!(
            "{base_url} is plain http: anyone on that network can read what Tandem sends your device; use https when the network is not yours alone"
        )
    })
}

/// A base URL checked for a provider of `trust`: https anywhere; plain http on this machine,
/// and for a device of the user's also on a private network (LAN) address.
pub(crate) fn base_url_for(base: &str, trust: agents::Trust) -> Result<url::Url, CloudError> {
    let base_url_str = base;
    if trust == agents::Trust::Device {
        if let Ok(url) = url::Url::parse(base_url_str) {
            if url.scheme() == "http" && url.host().is_some_and(|h| private_host(&h)) {
                let with_slash = if base_url_str.ends_with('/') {
                    base_url_str.to_string()
                } else {
                    format!("{base_url_str}/")
                };
                return url::Url::parse(&with_slash).map_err(|e| {
                    CloudError::Config(format!("bad base URL {base_url_str:?}: {e}"))
                });
            }
            if url.scheme() == "http" {
                return Err(CloudError::Config(format!(
                    "bad base URL {base_url_str:?}: plain http is only allowed for a device on this machine or a private network address (10.x, 172.16-31.x, 192.168.x, fd00::/8); use https"
                )));
            }
        }
    }
    base_url(base_url_str)
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
    let mut b = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        // A redirect would re-send the payload (and a key header) to a host the ledger never
        // names: providers do not redirect API calls, so none is followed.
        .redirect(reqwest::redirect::Policy::none())
        // A plain-http destination (a device on the LAN, a server on this machine) gets the
        // task unmasked and in the clear: never through a proxy the environment names
        // (`HTTP_PROXY`), which would read all of it. HTTPS goes through the user's HTTPS
        // proxy as before: it sees a CONNECT, not the payload.
        .no_proxy();
    let https_proxy = ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()));
    if let Some(p) = https_proxy {
        match reqwest::Proxy::https(p.as_str()) {
            Ok(proxy) => b = b.proxy(proxy.no_proxy(reqwest::NoProxy::from_env())),
            Err(e) => tracing::warn!(error = %e, "HTTPS_PROXY is not a proxy address; not used"),
        }
    }
    b.build().map_err(|e| CloudError::Config(e.to_string()))
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
        /// The function calls the reply asks for, complete (streamed arguments joined).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
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
