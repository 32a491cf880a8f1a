//! IPC commands, one file per area. Each returns tandem-core's `ErrorInfo`, which
//! carries a stable code the UI keys on.

pub mod attach;
pub mod chat;
pub mod folders;
pub mod hardware;
pub mod ledger;
pub mod local;
pub mod models;
pub mod settings;
pub mod windows;

pub use tandem_core::error::ErrorInfo as CommandError;

pub(crate) fn internal(e: impl std::fmt::Display) -> CommandError {
    CommandError {
        code: "app.internal".into(),
        message: e.to_string(),
    }
}

pub(crate) fn bad_input(message: impl Into<String>) -> CommandError {
    CommandError {
        code: "app.bad_input".into(),
        message: message.into(),
    }
}

/// An id for chips and tasks: random, plus a counter so ids stay unique even if the OS
/// random source were to fail.
pub(crate) fn new_id() -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let mut b = [0u8; 8];
    let _ = getrandom::fill(&mut b);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{:016x}{n:04x}", u64::from_le_bytes(b))
}
