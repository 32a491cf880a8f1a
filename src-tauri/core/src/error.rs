//! Stable error codes shared by every module's error enum, so hosts (CLI exit
//! messages, the UI) can key on a code that never changes with the wording.

/// Implemented by each module's `thiserror` enum. Codes are `area.kind` strings and
/// are part of the UI contract: never rename one, add new ones instead.
pub trait ErrorCode {
    fn code(&self) -> &'static str;
}

/// The serializable shape of an error as the hosts show it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct ErrorInfo {
    pub code: String,
    pub message: String,
}

impl ErrorInfo {
    pub fn from_error<E: ErrorCode + std::fmt::Display>(e: &E) -> Self {
        Self { code: e.code().to_string(), message: e.to_string() }
    }
}
