//! The app's commands against a real cloud provider on 127.0.0.1 (core's loopback server,
//! OpenAI wire format) and the real small model: a dropped statement plus a question that
//! needs a frontier model goes Split, and "what left this device" shows exactly the masked
//! payload; Pause cloud keeps the next such question on the device; the gateway switch.
//! One test in its own binary: it sets process-wide environment variables.

use tandem_app::AppState;
use tandem_core::cloud::agents::{self, Agent, Capability, ProviderConfig};
use tandem_core::cloud::loopback::Loopback;
use tandem_core::cloud::Wire;
use tauri::Manager;

#[path = "support/mock.rs"]
mod mock;
use mock::call;

const KEY: &str = "sk-loopback-app";
const IBAN: &str = "GB82 WEST 1234 5698 7654 32";

#[test]
fn split_answer_shows_what_left_and_pause_keeps_it_local() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lb = rt.block_on(Loopback::start(KEY)).unwrap();
    std::env::set_var("TANDEM_CONFIG_DIR", dir.path().join("config"));
    std::env::set_var("TANDEM_KEY_LB", KEY);
    std::env::set_var("TANDEM_NER", "off");
    agents::add_to_user_file(
        &agents::user_file(),
        ProviderConfig {
            name: "lb".into(),
            wire: Wire::Openai,
            base_url: lb.base_url(),
            needs_key: true,
            trust: Default::default(),
        },
        Some(Agent {
            capabilities: [Capability::Reasoning, Capability::Code].into(),
            quality: 100,
            ..Agent::new("lb", "lb", "echo")
        }),
    )
    .unwrap();

    let (app, window) = mock::app_in(dir.path());

    let statement = dir.path().join("statement.txt");
    std::fs::write(
        &statement,
        format!("Monthly statement for account {IBAN}.\nClosing balance 2,340.17 GBP.\n"),
    )
    .unwrap();
    let state = app.state::<AppState>().inner().clone();
    let chip = rt.block_on(tandem_app::stage(&state, &statement)).unwrap();

    let question = "Using my statement, write a detailed multi-step plan with calculations for paying off a 12% credit card debt while investing, and prove the optimal split mathematically.";
    let asked = call(
        &window,
        "ask",
        serde_json::json!({ "prompt": question, "attachments": [chip.id],
        "task": "t-split", "maxTokens": 64, "onEvent": "__CHANNEL__:1" }),
    );
    let turn = &asked["turn"];
    assert_eq!(turn["plan"]["route"], "split", "{turn}");
    assert_eq!(turn["attachments"], serde_json::json!(["statement.txt"]));
    let sent = lb.received();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let wire = sent[0].to_string();
    assert!(!wire.contains(IBAN) && !wire.contains("GB82WEST"), "{wire}");

    let left = call(
        &window,
        "what_left",
        serde_json::json!({ "task": "t-split" }),
    );
    let rows = left.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{left}");
    assert_eq!(rows[0]["status"], "sent");
    assert_eq!(rows[0]["provider"], "lb");
    let payload = rows[0]["payload"].as_str().unwrap();
    assert!(!payload.contains(IBAN), "{payload}");
    // The ledger's payload is what went on the wire (the user's turn text, exactly).
    let user_turn = sent[0]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    let logged: serde_json::Value = serde_json::from_str(payload).unwrap();
    assert_eq!(
        logged["messages"].as_array().unwrap().last().unwrap()["content"],
        user_turn.as_str()
    );
    // The provider echoes what it got; the placeholder came back and was restored on the device.
    if turn["plan"]["strategy"] == "mask" {
        assert!(turn["answer"].as_str().unwrap().contains(IBAN), "{turn}");
    }
    // The chip was used up.
    assert_eq!(
        call(&window, "detach_file", serde_json::json!({ "id": chip.id })),
        false
    );

    // Pause cloud: the same kind of question stays on the device; the provider gets nothing.
    assert_eq!(
        call(
            &window,
            "set_cloud_paused",
            serde_json::json!({ "paused": true })
        ),
        true
    );
    let asked = call(
        &window,
        "ask",
        serde_json::json!({ "prompt": question, "attachments": [],
        "task": "t-paused", "maxTokens": 16, "onEvent": "__CHANNEL__:2" }),
    );
    assert_eq!(lb.received().len(), 1, "nothing may leave while paused");
    let turn = &asked["turn"];
    assert_eq!(turn["plan"]["route"], "local", "{turn}");
    assert!(
        turn["plan"]["reasons"]
            .to_string()
            .contains("Pause cloud is on"),
        "{turn}"
    );
    assert!(!turn["answer"].as_str().unwrap().is_empty());
    assert_eq!(
        call(
            &window,
            "what_left",
            serde_json::json!({ "task": "t-paused" })
        ),
        serde_json::json!([])
    );
    call(
        &window,
        "set_cloud_paused",
        serde_json::json!({ "paused": false }),
    );

    // The gateway switch: on (ephemeral port, token from TANDEM_GATEWAY_TOKEN), answers, off.
    std::env::set_var("TANDEM_GATEWAY_TOKEN", "tdm-app-test-token");
    let gw = call(
        &window,
        "set_gateway",
        serde_json::json!({ "enabled": true, "port": 0 }),
    );
    let port = gw["port"].as_u64().unwrap();
    assert!(
        gw["running"].as_bool().unwrap() && gw["new_token"].is_null(),
        "{gw}"
    );
    let status = |token: &str| {
        let out = std::process::Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "-H",
                &format!("Authorization: Bearer {token}"),
            ])
            .arg(format!("http://127.0.0.1:{port}/v1/models"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert_eq!(status("tdm-app-test-token"), "200");
    assert_eq!(status("wrong"), "401");
    let s = call(&window, "get_settings", serde_json::json!({}));
    assert_eq!(s["gateway"]["port"].as_u64(), Some(port));
    call(
        &window,
        "set_gateway",
        serde_json::json!({ "enabled": false }),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        status("tdm-app-test-token"),
        "000",
        "the gateway stopped listening"
    );

    // Settings → Add a provider (no key needed: a local server); it lists with its agent, and a
    // bad URL is refused without touching the file.
    call(
        &window,
        "add_provider",
        serde_json::json!({ "name": "lb-local", "wire": "openai", "baseUrl": lb.base_url(),
            "needsKey": false, "model": "echo", "key": null }),
    );
    let s = call(&window, "get_settings", serde_json::json!({}));
    let added = s["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "lb-local")
        .unwrap_or_else(|| panic!("{s}"));
    assert_eq!(added["agents"], serde_json::json!(["lb-local"]));
    assert_eq!(added["needs_key"], false);
    let bad = tauri::test::get_ipc_response(
        &window,
        mock::request(
            "add_provider",
            serde_json::json!({ "name": "bad", "wire": "openai", "baseUrl": "ftp://x",
                "needsKey": true, "model": null, "key": null }),
        ),
    )
    .unwrap_err();
    assert!(bad["code"].as_str().unwrap().starts_with("cloud."), "{bad}");
    let file = std::fs::read_to_string(agents::user_file()).unwrap();
    assert!(
        file.contains("lb-local") && !file.contains("ftp://"),
        "{file}"
    );
}
