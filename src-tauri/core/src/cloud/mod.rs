//! Cloud agents' wire formats: requests, streamed events and typed failures for providers that
//! speak the OpenAI-compatible Chat Completions API. (The only caller will be the egress path;
//! retries, circuit breaking, Anthropic's Messages API and keys in the keychain arrive with the
//! rest of issue 4.)

pub mod openai;
pub mod reliable;
pub mod sse;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::local::{ChatMessage, Role};

/// One chat request to a cloud model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CloudRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
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
}

impl CloudError {
    /// Worth trying the same provider again (after a pause): connection trouble, timeouts,
    /// rate limits and 500/502/503/504. A rejected key or a bad request never is.
    pub fn retryable(&self) -> bool {
        match self {
            CloudError::Connect { .. }
            | CloudError::Timeout { .. }
            | CloudError::RateLimited { .. } => true,
            CloudError::Server { status, .. } => matches!(status, 500 | 502 | 503 | 504),
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
        }
    }
}
