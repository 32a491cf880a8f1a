//! The local engine: a quantized GGUF model running on this machine. The
//! `LocalEngine` trait is the seam the rest of the core talks to; `MistralEngine`
//! is the real implementation (an actor thread owning a mistral.rs model).

pub mod echo;
mod metrics;
mod mistral;

use std::pin::Pin;
use std::task::{Context, Poll};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

pub use metrics::{GenerationMetrics, TokenLogprob, FINISHED_AT_LENGTH};
pub use mistral::{EngineOptions, MistralEngine};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ActivationDType {
    /// F32 on CPU (measured faster than F16 there), the model's choice on GPUs.
    #[default]
    Auto,
    F32,
    F16,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    /// A tool's result, sent back by an API client after the cloud asked for the call.
    Tool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    /// Written on this device from material the plan kept local (a sensitive file, a
    /// confidential block): the local model may read it again as history, the cloud never
    /// does. Provenance, not wire data: never serialized.
    #[serde(skip)]
    pub derived_private: bool,
    /// The calls an assistant turn asked for (OpenAI's wire shape, which the OpenAI-compatible
    /// body serializes as is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Which call a `Role::Tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// One function call a model asked for: `arguments` is JSON text, as on the wire.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FunctionCall {
    pub name: String,
    #[serde(default)]
    pub arguments: String,
}

fn function_kind() -> String {
    "function".into()
}

impl ToolCall {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            kind: function_kind(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            derived_private: false,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GenerateRequest {
    pub messages: Vec<ChatMessage>,
    pub max_tokens: usize,
    /// `None`: greedy decoding (deterministic, what tests and benchmarks use).
    pub temperature: Option<f64>,
    /// Report each generated token's probability (`GenerationMetrics::logprobs`) with this many
    /// alternatives (0 or 1: the chosen token's only; decoding stays greedy). More than one
    /// alternative samples among the top ones: meant for one-token answers whose alternatives
    /// are what matters (the letter of a multiple-choice option).
    #[serde(default)]
    pub logprobs: Option<usize>,
    /// The answer must be one of these strings (empty: free text). With `logprobs`, the
    /// probabilities are the model's belief split between them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// Continue the messages' text as it stands, without the model's chat template: for a
    /// prompt in a fixed format that a model continues best as plain text (a multiple-choice
    /// question ending "Answer:", where the next token is the letter). The contents are joined
    /// with blank lines; roles are not marked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plain: bool,
    /// The generation ends where one of these strings is written (empty: at the model's end of
    /// turn or `max_tokens`), with the finish reason "stop"; the text ends before it (a part of
    /// it that came with an earlier token may remain).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

impl GenerateRequest {
    pub fn prompt(text: impl Into<String>) -> Self {
        Self {
            messages: vec![ChatMessage::user(text)],
            max_tokens: 256,
            temperature: None,
            logprobs: None,
            choices: Vec::new(),
            plain: false,
            stop: Vec::new(),
        }
    }
}

/// What a stream yields: text pieces as they are decoded, then one `Done`.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    Token { text: String },
    Done { metrics: GenerationMetrics },
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct LoadedModel {
    pub name: String,
    pub path: String,
    pub architecture: String,
    pub device: String,
    pub dtype: String,
    pub threads: usize,
    pub load_seconds: f64,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum LocalError {
    #[error(transparent)]
    Model(#[from] ModelErrorInfo),
    #[error("the local model failed to load: {0}")]
    Load(String),
    #[error("the local engine is busy ({0} requests queued); try again shortly")]
    QueueFull(usize),
    #[error("the local engine has stopped")]
    Stopped,
    #[error("the request is invalid: {0}")]
    BadRequest(String),
    #[error("generation failed: {0}")]
    Generation(String),
}

/// A cloneable carrier for model-file errors (ModelError holds io::Error, which is
/// not Clone) that keeps the stable code.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{message}")]
pub struct ModelErrorInfo {
    pub code: &'static str,
    pub message: String,
}

impl From<crate::models::ModelError> for LocalError {
    fn from(e: crate::models::ModelError) -> Self {
        use crate::ErrorCode;
        LocalError::Model(ModelErrorInfo {
            code: e.code(),
            message: e.to_string(),
        })
    }
}

impl crate::ErrorCode for LocalError {
    fn code(&self) -> &'static str {
        match self {
            LocalError::Model(m) => m.code,
            LocalError::Load(_) => "local.load",
            LocalError::QueueFull(_) => "local.queue_full",
            LocalError::Stopped => "local.stopped",
            LocalError::BadRequest(_) => "local.bad_request",
            LocalError::Generation(_) => "local.generation",
        }
    }
}

/// Tokens of one generation. Dropping it cancels the generation.
pub struct TokenStream {
    rx: mpsc::Receiver<Result<StreamEvent, LocalError>>,
}

impl TokenStream {
    pub(crate) fn new(rx: mpsc::Receiver<Result<StreamEvent, LocalError>>) -> Self {
        Self { rx }
    }

    /// Drain the stream into the whole text and its metrics.
    pub async fn collect_text(mut self) -> Result<(String, GenerationMetrics), LocalError> {
        let mut text = String::new();
        while let Some(ev) = self.rx.recv().await {
            match ev? {
                StreamEvent::Token { text: t } => text.push_str(&t),
                StreamEvent::Done { metrics } => return Ok((text, metrics)),
            }
        }
        Err(LocalError::Stopped)
    }
}

impl futures::Stream for TokenStream {
    type Item = Result<StreamEvent, LocalError>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

/// The seam between the core and whatever runs the local model.
pub trait LocalEngine: Send + Sync {
    /// Queue a generation. Fails at once (no waiting) when the queue is full.
    fn generate(&self, request: GenerateRequest) -> Result<TokenStream, LocalError>;
    fn model(&self) -> &LoadedModel;
}

/// Load the model the settings name — with none named, the recommended model when it is
/// fetched, else the manifest's default — with the thread count from the settings or the
/// hardware recommendation.
pub async fn load_configured(
    settings: &crate::config::Settings,
    events: crate::events::EventBus,
) -> Result<MistralEngine, LocalError> {
    let manifest = crate::models::Manifest::load(&settings.models_dir)?;
    let rec = if settings.model.is_none() || settings.threads.is_none() {
        let hw = tokio::task::spawn_blocking(crate::hardware::probe)
            .await
            .map_err(|e| LocalError::Load(e.to_string()))?;
        Some(crate::hardware::recommend(
            &hw,
            &manifest,
            crate::hardware::BuildCaps::current(),
        ))
    } else {
        None
    };
    let name = settings.model.clone().or_else(|| {
        let picked = crate::models::recommended_if_installed(
            &settings.models_dir,
            &manifest,
            rec.as_ref()?.recommended_model.as_deref(),
        )?;
        tracing::info!("no model chosen: running on the recommended {picked}");
        Some(picked)
    });
    let (spec, path) = crate::models::resolve(&settings.models_dir, &manifest, name.as_deref())?;
    let threads = settings
        .threads
        .or(rec.as_ref().map(|r| r.threads))
        .unwrap_or(1);
    let mut opts = EngineOptions::new(spec.name, path);
    opts.threads = Some(threads);
    opts.dtype = settings.dtype;
    MistralEngine::load(opts, events).await
}
