//! tandem-core: everything in Tandem that thinks, with no GUI. Hosted by the desktop
//! app (src-tauri) and the `tandem` CLI; both only translate between their users and
//! the types here.

pub mod cloud;
pub mod config;
pub mod conversations;
pub mod egress;
pub mod error;
pub mod events;
pub mod extract;
pub mod gateway;
pub mod hardware;
pub mod host;
pub mod index;
pub mod ledger;
pub mod local;
pub mod models;
pub mod network;
pub mod pause;
pub mod private_fs;
pub mod router;
pub mod secrets;
pub mod sensitivity;
pub mod watcher;

pub use error::ErrorCode;
