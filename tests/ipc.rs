//! The app's commands through Tauri's mock runtime (no display needed), on the
//! real core and the real small model.

use tandem_app::AppState;
use tandem_core::config::RawConfig;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindowBuilder;

fn request(cmd: &str, body: serde_json::Value) -> InvokeRequest {
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

fn app() -> (
    tauri::App<tauri::test::MockRuntime>,
    tauri::WebviewWindow<tauri::test::MockRuntime>,
) {
    let raw = RawConfig {
        models_dir: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/models").into()),
        threads: Some(2),
        ..Default::default()
    };
    let state = AppState::new(raw.validate().unwrap());
    let app = tandem_app::build(mock_builder(), state)
        .build(mock_context(noop_assets()))
        .unwrap();
    let window = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, window)
}

#[test]
fn ask_local_streams_and_returns_the_answer() {
    let (_app, window) = app();
    let res = get_ipc_response(
        &window,
        request("ask_local", serde_json::json!({ "prompt": "What is the capital of Germany?", "maxTokens": 16, "onEvent": "__CHANNEL__:7" })),
    )
    .expect("ask_local succeeds");
    let v: serde_json::Value = res.deserialize().unwrap();
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("berlin"),
        "{v}"
    );
    assert_eq!(v["model"], "smollm2-135m-instruct");
    assert!(v["metrics"]["completion_tokens"].as_u64().unwrap() >= 1);
}

#[test]
fn model_status_and_probe() {
    let (_app, window) = app();
    let status: serde_json::Value = get_ipc_response(
        &window,
        request("local_model_status", serde_json::json!({})),
    )
    .unwrap()
    .deserialize()
    .unwrap();
    assert_eq!(status["architecture"], "llama");
    assert_eq!(status["threads"], 2);
    let probe: serde_json::Value =
        get_ipc_response(&window, request("probe_hardware", serde_json::json!({})))
            .unwrap()
            .deserialize()
            .unwrap();
    assert!(probe["hardware"]["cpu"]["logical_cores"].as_u64().unwrap() >= 1);
    assert!(probe["recommendation"]["recommended_model"].is_string());
}

#[test]
fn errors_carry_stable_codes() {
    let (_app, window) = app();
    let err = get_ipc_response(
        &window,
        request(
            "ask_local",
            serde_json::json!({ "prompt": "  ", "onEvent": "__CHANNEL__:3" }),
        ),
    )
    .unwrap_err();
    assert_eq!(err["code"], "local.bad_request", "{err}");
}
