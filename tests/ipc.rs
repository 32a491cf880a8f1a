//! The app's commands through Tauri's mock runtime (no display needed), on the
//! real core and the real small model.

use tandem_app::AppState;
use tauri::test::get_ipc_response;
use tauri::Manager;

#[path = "support/mock.rs"]
mod mock;
use mock::{app_in, call, request, MockApp, MockWindow};

fn app() -> (MockApp, MockWindow) {
    // Leaked on purpose: the directory must outlive the app in these short tests.
    let dir = Box::leak(Box::new(tempfile::tempdir().unwrap()));
    app_in(dir.path())
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

#[test]
fn a_routed_question_streams_is_stored_and_nothing_left() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = app_in(dir.path());
    let asked = call(
        &window,
        "ask",
        serde_json::json!({ "prompt": "What is the capital of Germany?", "attachments": [],
            "task": "t-capital", "maxTokens": 16, "onEvent": "__CHANNEL__:9" }),
    );
    let turn = &asked["turn"];
    assert!(
        turn["answer"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("berlin"),
        "{asked}"
    );
    // No cloud agent has a key here: the plan says so and the answer is local.
    assert_eq!(turn["plan"]["route"], "local", "{turn}");
    assert!(turn["summary"]["local_tokens"].as_u64().unwrap() >= 1);
    assert_eq!(turn["stopped"], false);
    let conv = asked["conversation"].as_str().unwrap().to_string();

    // A follow-up in the same conversation, then both are stored, in order, across a restart.
    call(
        &window,
        "ask",
        serde_json::json!({ "conversation": conv, "prompt": "And of France?", "attachments": [],
            "task": "t-france", "maxTokens": 8, "onEvent": "__CHANNEL__:10" }),
    );
    drop((_app, window));
    let (_app, window) = app_in(dir.path());
    let list = call(&window, "conversations", serde_json::json!({}));
    assert_eq!(list[0]["id"], conv.as_str());
    assert_eq!(list[0]["turns"], 2);
    let turns = call(&window, "conversation", serde_json::json!({ "id": conv }));
    assert_eq!(turns[1]["question"], "And of France?");
    assert_eq!(
        call(
            &window,
            "what_left",
            serde_json::json!({ "task": "t-capital" })
        ),
        serde_json::json!([])
    );
    // Renamed, found by a local search, exported as Markdown (0600), then deleted for real.
    call(
        &window,
        "rename_conversation",
        serde_json::json!({ "id": conv, "title": "Capitals" }),
    );
    let found = call(
        &window,
        "search_conversations",
        serde_json::json!({ "query": "france" }),
    );
    assert_eq!(found[0]["title"], "Capitals", "{found}");
    assert_eq!(
        call(
            &window,
            "search_conversations",
            serde_json::json!({ "query": "zzqx" })
        ),
        serde_json::json!([])
    );
    let out = dir.path().join("capitals.md");
    _app.state::<AppState>()
        .dialog_answers
        .lock()
        .unwrap()
        .push_back(Some(out.clone()));
    let path = call(
        &window,
        "export_conversation",
        serde_json::json!({ "id": conv, "format": "markdown" }),
    );
    assert_eq!(path, serde_json::json!(out.display().to_string()));
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(
        md.starts_with("# Capitals\n") && md.contains("And of France?"),
        "{md}"
    );
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    assert_eq!(
        call(
            &window,
            "delete_conversation",
            serde_json::json!({ "id": conv })
        ),
        true
    );
    assert_eq!(
        call(&window, "conversations", serde_json::json!({})),
        serde_json::json!([])
    );
}

#[test]
fn stop_ends_an_answer_and_keeps_what_arrived() {
    let (_app, window) = app();
    let w = window.clone();
    let asking = std::thread::spawn(move || {
        call(
            &w,
            "ask",
            serde_json::json!({ "prompt": "Write a long story about a lighthouse keeper.",
                "attachments": [], "task": "t-long", "maxTokens": 2000, "onEvent": "__CHANNEL__:11" }),
        )
    });
    // Wait until the run is registered and has produced something, then stop it.
    let state = window.state::<AppState>().inner().clone();
    let start = std::time::Instant::now();
    while !state.runs.lock().unwrap().contains_key("t-long") {
        assert!(start.elapsed().as_secs() < 120, "the run never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(
        call(&window, "stop", serde_json::json!({ "task": "t-long" })),
        true
    );
    let asked = asking.join().unwrap();
    assert_eq!(asked["turn"]["stopped"], true, "{asked}");
    assert!(asked["turn"]["summary"].is_null());
    // Stopping twice is harmless.
    assert_eq!(
        call(&window, "stop", serde_json::json!({ "task": "t-long" })),
        false
    );
}

#[test]
fn dropped_files_become_chips_and_bad_input_is_refused_with_codes() {
    let (app, window) = app();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("statement.txt");
    std::fs::write(
        &file,
        "Account holder: Jane Doe\nIBAN GB82 WEST 1234 5698 7654 32\nIBAN DE89 3704 0044 0532 0130 00\n",
    )
    .unwrap();
    let state = app.state::<AppState>().inner().clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let chip = rt.block_on(tandem_app::stage(&state, &file)).unwrap();
    assert_eq!(chip.name, "statement.txt");
    assert_eq!(chip.counts.get("IBAN_CODE"), Some(&2), "{chip:?}");
    assert_ne!(chip.verdict, tandem_core::sensitivity::Verdict::Public);
    let missing = rt.block_on(tandem_app::stage(&state, &dir.path().join("nope.pdf")));
    assert_eq!(missing.unwrap_err().code, "extract.not_found");
    assert_eq!(
        call(&window, "detach_file", serde_json::json!({ "id": chip.id })),
        true
    );
    assert_eq!(
        call(&window, "detach_file", serde_json::json!({ "id": chip.id })),
        false
    );

    let err = |cmd: &str, body: serde_json::Value| {
        get_ipc_response(&window, request(cmd, body)).unwrap_err()
    };
    let e = err(
        "ask",
        serde_json::json!({ "prompt": "hi", "attachments": [chip.id], "task": "t1", "onEvent": "__CHANNEL__:12" }),
    );
    assert_eq!(e["code"], "app.bad_input", "{e}");
    let e = err(
        "ask",
        serde_json::json!({ "prompt": "hi", "attachments": [], "task": "../x", "onEvent": "__CHANNEL__:13" }),
    );
    assert_eq!(e["code"], "app.bad_input", "{e}");
    let e = err(
        "ask",
        serde_json::json!({ "prompt": " ", "attachments": [], "task": "t2", "onEvent": "__CHANNEL__:14" }),
    );
    assert_eq!(e["code"], "app.bad_input", "{e}");
    let e = err("conversation", serde_json::json!({ "id": "nope" }));
    assert_eq!(e["code"], "conversations.not_found", "{e}");
    let e = err(
        "set_key",
        serde_json::json!({ "provider": "../etc", "key": "sk-1" }),
    );
    assert_eq!(e["code"], "secrets.bad_name", "{e}");
    let e = err(
        "set_key",
        serde_json::json!({ "provider": "openai", "key": "a\nb" }),
    );
    assert_eq!(e["code"], "secrets.bad_key", "{e}");
    let e = err("set_policy", serde_json::json!({ "policy": "reckless" }));
    assert!(e.to_string().contains("reckless"), "{e}");
}

#[test]
fn settings_pause_and_policy_persist() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = app_in(dir.path());
    let s = call(&window, "get_settings", serde_json::json!({}));
    assert_eq!(s["cloud_paused"], false);
    assert_eq!(s["policy"], "balanced");
    // The first-run welcome shows until finished, and stays finished across a restart.
    assert_eq!(s["onboarded"], false);
    call(
        &window,
        "set_onboarded",
        serde_json::json!({ "done": true }),
    );
    drop((_app, window));
    let (_app, window) = app_in(dir.path());
    assert_eq!(
        call(&window, "get_settings", serde_json::json!({}))["onboarded"],
        true
    );
    assert_eq!(s["shortcut"], "CommandOrControl+Shift+Space");
    let openai = s["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "openai")
        .unwrap();
    assert!(openai["agents"].as_array().unwrap().len() >= 2, "{openai}");
    assert!(openai.get("key").is_some() && !openai.to_string().contains("sk-"));
    assert_eq!(
        call(
            &window,
            "set_cloud_paused",
            serde_json::json!({ "paused": true })
        ),
        true
    );
    assert_eq!(
        call(
            &window,
            "set_policy",
            serde_json::json!({ "policy": "private" })
        ),
        "private"
    );
    drop((_app, window));
    let (_app, window) = app_in(dir.path());
    let s = call(&window, "get_settings", serde_json::json!({}));
    assert_eq!(
        (s["cloud_paused"].clone(), s["policy"].clone()),
        (serde_json::json!(true), serde_json::json!("private"))
    );
    let l = call(&window, "ledger", serde_json::json!({}));
    assert_eq!(l["totals"]["sent"], 0);
    assert!(l["path"]
        .as_str()
        .unwrap()
        .starts_with(dir.path().to_str().unwrap()));
}

#[test]
fn watched_folders_are_added_indexed_marked_and_removed() {
    let (app, window) = app();
    let docs = tempfile::tempdir().unwrap();
    std::fs::write(
        docs.path().join("notes.md"),
        "Lunch with the team on Friday.",
    )
    .unwrap();
    std::fs::write(
        docs.path().join("bank.txt"),
        "IBAN GB82 WEST 1234 5698 7654 32",
    )
    .unwrap();
    let state = app.state::<AppState>().inner().clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let folder = rt
        .block_on(tandem_app::add_folder_path(
            &state,
            docs.path().to_path_buf(),
            false,
        ))
        .unwrap();
    let stats = call(&window, "index_now", serde_json::json!({}));
    assert_eq!(stats["indexed"], 2, "{stats}");
    let v = call(&window, "folders", serde_json::json!({}));
    assert_eq!(v["folders"][0]["sensitive"], false);
    assert_eq!(v["status"]["indexed"], 2, "{v}");
    let path = folder.path.display().to_string();
    let f = call(
        &window,
        "set_folder_sensitive",
        serde_json::json!({ "path": path, "sensitive": true }),
    );
    assert_eq!(f["sensitive"], true);
    // Only watched folders can be changed from the page.
    let e = get_ipc_response(
        &window,
        request(
            "set_folder_sensitive",
            serde_json::json!({ "path": "/etc", "sensitive": false }),
        ),
    )
    .unwrap_err();
    assert_eq!(e["code"], "app.bad_input", "{e}");
    assert_eq!(
        call(
            &window,
            "remove_folder",
            serde_json::json!({ "path": path })
        ),
        true
    );
    // Removing starts a pass that prunes the folder's files; index_now waits for it.
    call(&window, "index_now", serde_json::json!({}));
    let v = call(&window, "folders", serde_json::json!({}));
    assert_eq!(v["status"]["files"], 0, "{v}");
    assert_eq!(
        call(&window, "folders", serde_json::json!({}))["folders"],
        serde_json::json!([])
    );
}

#[test]
fn the_model_card_lists_the_manifest_and_remembers_a_choice() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = app_in(dir.path());
    let list = call(&window, "models", serde_json::json!({}));
    let smol = list
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "smollm2-135m-instruct")
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(smol["installed"], true);
    assert_eq!(smol["fits"], true);
    assert_eq!(
        smol["chosen"], true,
        "the manifest default is chosen: {smol}"
    );
    let e = get_ipc_response(
        &window,
        request(
            "choose_model",
            serde_json::json!({ "name": "no-such-model" }),
        ),
    )
    .unwrap_err();
    assert_eq!(e["code"], "app.bad_input", "{e}");
    let missing = list
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["installed"] == false);
    if let Some(m) = missing {
        let e = get_ipc_response(
            &window,
            request("choose_model", serde_json::json!({ "name": m["name"] })),
        )
        .unwrap_err();
        assert!(
            e["message"].as_str().unwrap().contains("not downloaded"),
            "{e}"
        );
    }
    call(
        &window,
        "choose_model",
        serde_json::json!({ "name": "smollm2-135m-instruct" }),
    );
    let prefs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("app-prefs.json")).unwrap())
            .unwrap();
    assert_eq!(prefs["model"], "smollm2-135m-instruct");
}

/// Waits (up to 20 s) until `f` holds.
fn wait_until(what: &str, f: impl Fn() -> bool) {
    let t = std::time::Instant::now();
    while !f() {
        assert!(t.elapsed().as_secs() < 20, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The commands behind native dialogs, with the dialog's answer queued in advance (nothing
/// can click a native dialog here): picked files become chips, a picked folder is watched,
/// the export writes every ledger entry; a cancelled dialog changes nothing.
#[test]
fn dialog_commands_run_on_the_chosen_paths() {
    let (app, window) = app();
    let state = app.state::<AppState>().inner().clone();
    let answer = |p: Option<&std::path::Path>| {
        state
            .dialog_answers
            .lock()
            .unwrap()
            .push_back(p.map(|p| p.to_path_buf()));
    };
    let dir = tempfile::tempdir().unwrap();
    let statement = dir.path().join("statement.txt");
    std::fs::write(
        &statement,
        "Pay rent to DE89 3704 0044 0532 0130 00 by Friday.",
    )
    .unwrap();
    answer(Some(&statement));
    assert_eq!(call(&window, "pick_files", serde_json::json!({})), 1);
    wait_until("the picked file to be staged", || {
        state
            .staged
            .lock()
            .unwrap()
            .values()
            .any(|a| a.name == "statement.txt")
    });
    answer(None);
    assert_eq!(call(&window, "pick_files", serde_json::json!({})), 0);

    let docs = tempfile::tempdir().unwrap();
    std::fs::write(docs.path().join("lab.txt"), "Blood test results for March.").unwrap();
    answer(Some(docs.path()));
    let f = call(
        &window,
        "add_folder",
        serde_json::json!({ "sensitive": true }),
    );
    assert_eq!(f["sensitive"], true, "{f}");
    let listed = call(&window, "folders", serde_json::json!({}));
    assert!(
        listed["folders"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["path"] == f["path"]),
        "{listed}"
    );
    answer(None);
    assert!(call(
        &window,
        "add_folder",
        serde_json::json!({ "sensitive": false })
    )
    .is_null());

    let out = dir.path().join("ledger.json");
    answer(Some(&out));
    let path = call(&window, "export_ledger", serde_json::json!({}));
    assert_eq!(path, serde_json::json!(out.display().to_string()));
    let exported: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let entries = call(&window, "ledger", serde_json::json!({}))["entries"].clone();
    assert_eq!(
        exported.as_array().unwrap().len(),
        entries.as_array().unwrap().len()
    );
    answer(None);
    assert!(call(&window, "export_ledger", serde_json::json!({})).is_null());
}

/// Menu-bar-only is remembered; "Open in Tandem" brings the main window its conversation;
/// hide_quick is harmless before quick ask exists; ui_ready answers the time since launch.
#[test]
fn window_chores_and_the_menu_bar_switch() {
    use tauri::Listener;
    let dir = tempfile::tempdir().unwrap();
    {
        let (_app, window) = app_in(dir.path());
        assert_eq!(
            call(
                &window,
                "set_menu_bar_only",
                serde_json::json!({ "enabled": true })
            ),
            true
        );
        let (tx, rx) = std::sync::mpsc::channel();
        window.listen("tandem://open-conversation", move |e| {
            let _ = tx.send(e.payload().to_string());
        });
        assert!(call(
            &window,
            "open_main",
            serde_json::json!({ "conversation": "c-42" })
        )
        .is_null());
        assert_eq!(
            rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap(),
            "\"c-42\""
        );
        assert!(call(&window, "hide_quick", serde_json::json!({})).is_null());
        assert!(call(&window, "ui_ready", serde_json::json!({})).is_u64());
        // The quick-ask shortcut: a plain key or a made-up one is refused, a real one kept.
        for bad in ["K", "Shift+K", "Ctrl+Nope", ""] {
            let e = get_ipc_response(
                &window,
                request("set_shortcut", serde_json::json!({ "shortcut": bad })),
            )
            .unwrap_err();
            assert_eq!(e["code"], "app.bad_input", "{bad}: {e}");
        }
        assert_eq!(
            call(
                &window,
                "set_shortcut",
                serde_json::json!({ "shortcut": " Alt+Shift+K " })
            ),
            "Alt+Shift+K"
        );
    }
    let (_app, window) = app_in(dir.path());
    let settings = call(&window, "get_settings", serde_json::json!({}));
    assert_eq!(settings["menu_bar_only"], true);
    assert_eq!(settings["shortcut"], "Alt+Shift+K", "kept across restarts");
}

#[test]
fn a_dropped_file_from_a_sensitive_folder_is_local_only_by_its_real_path() {
    let dir = tempfile::tempdir().unwrap();
    let (app, _window) = app_in(dir.path());
    let health = dir.path().join("health");
    std::fs::create_dir_all(&health).unwrap();
    let inside = health.join("plain.txt");
    std::fs::write(&inside, "Lunch at noon, then a walk in the park.").unwrap();
    let outside = dir.path().join("elsewhere.txt");
    std::fs::write(&outside, "Lunch at noon, then a walk in the park.").unwrap();
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&inside, &link).unwrap();
    let mut folders = tandem_core::index::Folders::default();
    folders.add(&health, true).unwrap();
    folders.save(&dir.path().join("folders.toml")).unwrap();
    let state = app.state::<AppState>().inner().clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    use tandem_core::sensitivity::Verdict;
    for (path, want) in [
        (&inside, Verdict::LocalOnly),
        (&link, Verdict::LocalOnly),
        (&outside, Verdict::Public),
    ] {
        let chip = rt.block_on(tandem_app::stage(&state, path)).unwrap();
        assert_eq!(chip.verdict, want, "{}", path.display());
        let staged = state.staged_get(&chip.id).unwrap();
        assert_eq!(staged.sensitive_source, want == Verdict::LocalOnly);
    }
}
