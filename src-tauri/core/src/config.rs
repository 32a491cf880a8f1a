//! Where Tandem keeps its files, and the user's settings. A raw serde struct with
//! optional fields is validated once into `Settings` with defaults.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Environment variable that points at the models directory (weights + manifest).
pub const MODELS_DIR_ENV: &str = "TANDEM_MODELS_DIR";
/// Environment variable that replaces the user's configuration directory (`<config>/tandem`).
pub const CONFIG_DIR_ENV: &str = "TANDEM_CONFIG_DIR";
/// Environment variable that overrides the default local model by name.
pub const MODEL_ENV: &str = "TANDEM_MODEL";

/// Environment variable naming the settings file (default `<config dir>/tandem/config.toml`).
pub const CONFIG_ENV: &str = "TANDEM_CONFIG";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub models_dir: Option<PathBuf>,
    pub model: Option<String>,
    pub threads: Option<usize>,
    pub dtype: Option<String>,
    /// private, balanced or performance.
    pub policy: Option<String>,
    /// Conversations not touched for this many days are deleted (turns and vault); unset: kept.
    pub keep_conversations_days: Option<u64>,
    /// The index drops the text of files not modified for this many days; unset: kept.
    pub keep_index_days: Option<u64>,
    /// `tandem mcp`'s `search_files` returns excerpts of files in sensitive folders (the agent
    /// may pass them to its cloud model): off unless the user turns it on.
    pub mcp_sensitive_excerpts: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub models_dir: PathBuf,
    /// `None`: the manifest's default (or the hardware recommendation).
    pub model: Option<String>,
    /// `None`: from the hardware recommendation.
    pub threads: Option<usize>,
    pub dtype: crate::local::ActivationDType,
    pub policy: crate::router::Policy,
    /// Retention of conversations, in days (`None`: kept until deleted).
    pub keep_conversations_days: Option<u64>,
    /// Retention of indexed file text, in days of the file's age (`None`: kept).
    pub keep_index_days: Option<u64>,
    /// Whether MCP clients may read excerpts of files in sensitive folders (default: no).
    pub mcp_sensitive_excerpts: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("unknown activation dtype {0:?} (expected auto, f32 or f16)")]
    BadDType(String),
    #[error("threads must be at least 1")]
    BadThreads,
    #[error("unknown policy {0:?} (expected private, balanced or performance)")]
    BadPolicy(String),
    #[error("cannot read the settings file {path}: {message}")]
    File { path: String, message: String },
}

impl crate::ErrorCode for ConfigError {
    fn code(&self) -> &'static str {
        match self {
            ConfigError::BadDType(_) => "config.bad_dtype",
            ConfigError::BadThreads => "config.bad_threads",
            ConfigError::BadPolicy(_) => "config.bad_policy",
            ConfigError::File { .. } => "config.file",
        }
    }
}

impl RawConfig {
    /// The settings file (`TANDEM_CONFIG`, else `<config dir>/tandem/config.toml`; a missing
    /// default file is no error), with environment variables on top.
    pub fn load() -> Result<Self, ConfigError> {
        let explicit = std::env::var_os(CONFIG_ENV)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from);
        let path = explicit
            .clone()
            .unwrap_or_else(|| config_dir().join("config.toml"));
        let file = match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str::<RawConfig>(&text).map_err(|e| ConfigError::File {
                path: path.display().to_string(),
                message: e.message().to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => {
                RawConfig::default()
            }
            Err(e) => {
                return Err(ConfigError::File {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })
            }
        };
        let env = Self::from_env();
        Ok(Self {
            models_dir: env.models_dir.or(file.models_dir),
            model: env.model.or(file.model),
            threads: env.threads.or(file.threads),
            dtype: env.dtype.or(file.dtype),
            policy: env.policy.or(file.policy),
            keep_conversations_days: env.keep_conversations_days.or(file.keep_conversations_days),
            keep_index_days: env.keep_index_days.or(file.keep_index_days),
            mcp_sensitive_excerpts: env.mcp_sensitive_excerpts.or(file.mcp_sensitive_excerpts),
        })
    }

    /// Environment variables only.
    pub fn from_env() -> Self {
        Self {
            models_dir: std::env::var_os(MODELS_DIR_ENV).map(PathBuf::from),
            model: std::env::var(MODEL_ENV).ok().filter(|s| !s.is_empty()),
            threads: std::env::var("TANDEM_THREADS")
                .ok()
                .and_then(|s| s.parse().ok()),
            dtype: std::env::var("TANDEM_DTYPE").ok(),
            policy: std::env::var("TANDEM_POLICY")
                .ok()
                .filter(|s| !s.is_empty()),
            keep_conversations_days: std::env::var("TANDEM_KEEP_CONVERSATIONS_DAYS")
                .ok()
                .and_then(|s| s.parse().ok()),
            keep_index_days: std::env::var("TANDEM_KEEP_INDEX_DAYS")
                .ok()
                .and_then(|s| s.parse().ok()),
            mcp_sensitive_excerpts: std::env::var("TANDEM_MCP_SENSITIVE_EXCERPTS")
                .ok()
                .map(|s| matches!(s.trim(), "1" | "true" | "yes")),
        }
    }

    pub fn validate(self) -> Result<Settings, ConfigError> {
        let dtype = match self
            .dtype
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("") | Some("auto") => crate::local::ActivationDType::Auto,
            Some("f32") => crate::local::ActivationDType::F32,
            Some("f16") => crate::local::ActivationDType::F16,
            Some(other) => return Err(ConfigError::BadDType(other.to_string())),
        };
        if self.threads == Some(0) {
            return Err(ConfigError::BadThreads);
        }
        let policy = match self.policy.as_deref() {
            None => crate::router::Policy::default(),
            Some(p) => p
                .parse()
                .map_err(|_| ConfigError::BadPolicy(p.to_string()))?,
        };
        Ok(Settings {
            models_dir: self.models_dir.unwrap_or_else(default_models_dir),
            model: self.model,
            threads: self.threads,
            dtype,
            policy,
            keep_conversations_days: self.keep_conversations_days,
            keep_index_days: self.keep_index_days,
            mcp_sensitive_excerpts: self.mcp_sensitive_excerpts.unwrap_or(false),
        })
    }
}

/// The user's data dir (`<data dir>/tandem/models`). Never the working directory: a cloned
/// repository holding `models/` (with an ONNX Runtime library of its author's choosing) must
/// not be loaded by running `tandem` inside it. A checkout sets `TANDEM_MODELS_DIR` (the
/// Makefile does).
pub fn default_models_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("tandem")
        .join("models")
}

/// A file in Tandem's data directory (`<user data dir>/tandem/NAME`), unless the environment
/// variable `env` names another path: where the ledger and the index live.
pub fn data_file(env: &str, name: &str) -> PathBuf {
    std::env::var_os(env)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            dirs::data_dir()
                .unwrap_or_else(|| PathBuf::from("."))
                .join("tandem")
                .join(name)
        })
}

/// Tandem's configuration directory: `$TANDEM_CONFIG_DIR`, else `<user config dir>/tandem`
/// (`~/.config/tandem` on Linux).
pub fn config_dir() -> PathBuf {
    if let Some(p) = std::env::var_os(CONFIG_DIR_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    dirs::config_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("tandem")
}
