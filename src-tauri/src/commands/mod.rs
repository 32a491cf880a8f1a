//! IPC commands, one file per area. Each returns `CommandError`, which carries a
//! stable code the UI keys on.

pub mod hardware;
pub mod local;

use serde::Serialize;
use tandem_core::ErrorCode;

#[derive(Debug, Serialize, PartialEq)]
pub struct CommandError {
    pub code: String,
    pub message: String,
}

impl<E: ErrorCode + std::fmt::Display> From<E> for CommandError {
    fn from(e: E) -> Self {
        Self { code: e.code().to_string(), message: e.to_string() }
    }
}
