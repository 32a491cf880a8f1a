//! The Tauri shell: windows, IPC commands and events around tandem-core. No logic
//! lives here; each command is a few lines that call the core.

mod commands;
mod state;

use tauri::{Emitter, Manager, Runtime};

pub use state::AppState;

/// Install the app's commands and state on any runtime (the mock runtime in tests).
pub fn build<R: Runtime>(builder: tauri::Builder<R>, state: AppState) -> tauri::Builder<R> {
    builder
        .manage(state)
        .invoke_handler(tauri::generate_handler![
            commands::local::ask_local,
            commands::local::local_model_status,
            commands::hardware::probe_hardware,
        ])
        .setup(|app| {
            let handle = app.handle().clone();
            let state = app.state::<AppState>().inner().clone();
            // Forward core events to the windows, and start loading the model now so
            // the first question does not wait for it.
            let mut rx = state.events.subscribe();
            tauri::async_runtime::spawn(async move {
                while let Ok(ev) = rx.recv().await {
                    let _ = handle.emit("tandem://event", &ev);
                }
            });
            tauri::async_runtime::spawn(async move {
                let _ = state.engine().await;
            });
            Ok(())
        })
}

fn init_logging() {
    let filter = std::env::var("TANDEM_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "info".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .try_init();
}

pub fn run() {
    init_logging();
    let state = match AppState::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Tandem cannot start: {e}");
            std::process::exit(2);
        }
    };
    let result = build(tauri::Builder::default(), state).run(tauri::generate_context!());
    if let Err(e) = result {
        eprintln!("Tandem stopped with an error: {e}");
        std::process::exit(1);
    }
}
