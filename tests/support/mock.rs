//! Calling the app's commands through Tauri's mock runtime, shared by the app's test files.
#![allow(dead_code)] // each test file uses a different part

use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, INVOKE_KEY};
use tauri::webview::InvokeRequest;

pub type MockWindow = tauri::WebviewWindow<tauri::test::MockRuntime>;

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
