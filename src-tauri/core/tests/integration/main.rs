//! tandem-core's integration tests, one binary (mistral.rs makes every extra test
//! binary an expensive link). Real parts only: the real small model, real files,
//! a real HTTP server on 127.0.0.1.

mod cloud;
mod common;
mod extract;
mod fetch;
mod gateway;
mod hardware;
mod index;
mod local_engine;
mod model_files;
mod network;
#[path = "../support/pdf.rs"]
mod pdf_support;
mod router;
mod sensitivity;
mod watcher;
