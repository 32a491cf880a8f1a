//! Stable error codes shared by every module's error enum, so hosts (CLI exit
//! messages, the UI) can key on a code that never changes with the wording.

/// Implemented by each module's `thiserror` enum. Codes are `area.kind` strings and
/// are part of the UI contract: never rename one, add new ones instead.
pub trait ErrorCode {
    fn code(&self) -> &'static str;
}

/// The serializable shape of an error as the hosts show it (the app's IPC commands
/// return it as their error).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq, Eq, ts_rs::TS)]
#[ts(rename = "CommandError")]
pub struct ErrorInfo {
    pub code: String,
    pub message: String,
}

impl ErrorInfo {
    pub fn from_error<E: ErrorCode + std::fmt::Display>(e: &E) -> Self {
        Self {
            code: e.code().to_string(),
            message: e.to_string(),
        }
    }
}

// One impl per module error (a blanket impl would overlap with `From<T> for T`).
macro_rules! into_error_info {
    ($($t:ty),*) => {$(
        impl From<$t> for ErrorInfo {
            fn from(e: $t) -> Self {
                Self::from_error(&e)
            }
        }
    )*};
}

into_error_info!(
    crate::local::LocalError,
    crate::models::ModelError,
    crate::config::ConfigError,
    crate::sensitivity::SensitivityError,
    crate::cloud::CloudError,
    crate::secrets::SecretsError,
    crate::ledger::LedgerError,
    crate::egress::EgressError,
    crate::router::run::RunError,
    crate::host::HostError,
    crate::conversations::ConversationError,
    crate::extract::ExtractError,
    crate::gateway::GatewayError,
    crate::index::IndexError
);
