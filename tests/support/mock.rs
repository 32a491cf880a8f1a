//! Calling the app's commands through Tauri's mock runtime, shared by the app's test files.
#![allow(dead_code)] // each test file uses a different part

use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, INVOKE_KEY};
use tauri::webview::InvokeRequest;

pub type MockApp = tauri::App<tauri::test::MockRuntime>;
pub type MockWindow = tauri::WebviewWindow<tauri::test::MockRuntime>;

/// The app on the mock runtime with the real small model and every data file in `dir`.
pub fn app_in(dir: &std::path::Path) -> (MockApp, MockWindow) {
    app_with(state_in(dir, &models_dir()))
}

/// Where the test command put the models: `TANDEM_MODELS_DIR` (the Makefile exports it, and
/// keeps a developer's own), else this checkout's `models/`.
pub fn models_dir() -> std::path::PathBuf {
    std::env::var_os("TANDEM_MODELS_DIR")
        .filter(|p| !p.is_empty())
        .map(Into::into)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/models").into())
}

/// The app's state with the models (manifest and weights) in `models` and data files in `dir`.
pub fn state_in(dir: &std::path::Path, models: &std::path::Path) -> tandem_app::AppState {
    let raw = tandem_core::config::RawConfig {
        models_dir: Some(models.into()),
        // Tests run on the small model, whatever else a developer's checkout has fetched.
        model: Some("smollm2-135m-instruct".into()),
        threads: Some(2),
        ..Default::default()
    };
    tandem_app::AppState::new(raw.validate().unwrap(), tandem_app::DataPaths::under(dir))
}

/// The app on the mock runtime around `state`, with its main window.
pub fn app_with(state: tandem_app::AppState) -> (MockApp, MockWindow) {
    let app = tandem_app::build(tauri::test::mock_builder(), state)
        .build(tauri::test::mock_context(tauri::test::noop_assets()))
        .unwrap();
    let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, window)
}

pub fn request(cmd: &str, body: serde_json::Value) -> InvokeRequest {
    InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(body),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    }
}

/// The command's answer, or a panic naming the command and its error.
pub fn call(window: &MockWindow, cmd: &str, body: serde_json::Value) -> serde_json::Value {
    get_ipc_response(window, request(cmd, body))
        .unwrap_or_else(|e| panic!("{cmd} failed: {e}"))
        .deserialize()
        .unwrap()
}
