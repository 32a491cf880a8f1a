//! IPC commands, one file per area. Each returns tandem-core's `ErrorInfo`, which
//! carries a stable code the UI keys on.

pub mod hardware;
pub mod local;

pub use tandem_core::error::ErrorInfo as CommandError;
