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

impl CommandError {
    fn of<E: ErrorCode + std::fmt::Display>(e: &E) -> Self {
        Self { code: e.code().to_string(), message: e.to_string() }
    }
}

// One impl per core error type (a blanket impl would overlap with `From<T> for T`).
macro_rules! from_core_error {
    ($($t:ty),*) => {$(
        impl From<$t> for CommandError {
            fn from(e: $t) -> Self {
                Self::of(&e)
            }
        }
    )*};
}

from_core_error!(
    tandem_core::local::LocalError,
    tandem_core::models::ModelError,
    tandem_core::config::ConfigError
);
