//! `tandem serve` as users run it: the official `openai` Python package (installed by the test
//! setup, written by nobody here) against the gateway, a planted IBAN that must reach the
//! loopback provider masked and come back restored, and the token's life in the keychain.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;
use tandem_core::cloud::loopback::Loopback;

use super::cloud_cli::Keychain;

const KEY: &str = "sk-gateway-cli-1a2b3c4d";
const TOKEN: &str = "tdm-cli-test-token-42";
const IBAN: &str = "DE89 3704 0044 0532 0130 00";

pub(super) fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The virtual environment `scripts/setup.sh test` makes, or TANDEM_TEST_PYTHON.
fn python_with_openai() -> PathBuf {
    python_with("openai")
}

/// The test Python, checked to import `package` (the official SDKs setup installs).
pub(super) fn python_with(package: &str) -> PathBuf {
    let p = std::env::var_os("TANDEM_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv/bin/python"));
    let ok = Command::new(&p)
        .args(["-c", &format!("import {package}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{} cannot import {package}: run scripts/setup.sh test (it makes .venv with the official SDKs)",
        p.display()
    );
    p
}

/// Runs an official-SDK client script from `tests/` with `envs`, insists it succeeded and
/// returns the one JSON object it prints.
pub(super) fn run_client(python: &std::path::Path, script: &str, envs: &[(&str, &str)]) -> Value {
    let mut c = Command::new(python);
    c.arg(repo().join(script));
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A temporary config and ledger with a loopback provider added as the agent `lb` (model
/// `echo`): what both SDK tests start from.
struct LoopbackWorld {
    tmp: tempfile::TempDir,
    _rt: tokio::runtime::Runtime,
    lb: Loopback,
}

impl LoopbackWorld {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        let lb = rt.block_on(Loopback::start(KEY)).unwrap();
        let w = Self { tmp, _rt: rt, lb };
        let mut add = super::tandem();
        w.env(&mut add);
        let out = add
            .args(["cloud", "add", "lb", "--wire", "openai", "--base-url"])
            .arg(w.lb.base_url())
            .args(["--model", "echo"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        w
    }

    fn env(&self, c: &mut Command) {
        c.env("TANDEM_CONFIG_DIR", self.tmp.path().join("config"))
            .env("TANDEM_LEDGER", self.tmp.path().join("ledger.sqlite3"))
            .env("TANDEM_NER", "off")
            .env("TANDEM_GATEWAY_TOKEN", TOKEN)
            .env("TANDEM_KEY_LB", KEY);
    }
}

/// A running `tandem serve --port 0`, killed on drop; `url` is what it printed.
pub(super) struct Server {
    child: Child,
    pub(super) url: String,
    stderr: String,
}

impl Server {
    pub(super) fn start(c: &mut Command, extra: &[&str]) -> Self {
        c.args(["serve", "--port", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = String::new();
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(180))
                .unwrap_or_else(|_| panic!("tandem serve did not start: {stderr}"));
            stderr.push_str(&line);
            stderr.push('\n');
            if let Some(at) = line.find("listening on ") {
                let url = line[at + 13..]
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .to_string();
                return Self { child, url, stderr };
            }
        }
    }

    /// The status of `GET /v1/models` with this bearer token (a raw HTTP/1.1 request).
    fn models_status(&self, token: &str) -> u16 {
        let addr = self
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/v1");
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET /v1/models HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        answer
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_openai_python_client_works_against_tandem_serve_unchanged() {
    let python = python_with_openai();
    let w = LoopbackWorld::new();
    let (lb, env) = (&w.lb, |c: &mut Command| w.env(c));

    let mut c = super::tandem();
    env(&mut c);
    let server = Server::start(&mut c, &[]);
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    assert!(server.stderr.contains("TANDEM_GATEWAY_TOKEN") && !server.stderr.contains(TOKEN));

    let v = run_client(
        &python,
        "tests/gateway/openai_client.py",
        &[
            ("TANDEM_GATEWAY_URL", &server.url),
            ("TANDEM_GATEWAY_TOKEN", TOKEN),
            ("AGENT", "lb"),
        ],
    );
    let models: Vec<&str> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for m in ["tandem-auto", "tandem-local", "tandem-private", "lb"] {
        assert!(models.contains(&m), "{models:?}");
    }
    let whole = &v["whole"];
    assert!(whole["content"].as_str().unwrap().contains(IBAN), "{v}");
    assert_eq!(whole["finish_reason"], "stop");
    assert!(whole["total_tokens"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(whole["tandem"]["masked"], 1, "{v}");
    assert_eq!(whole["route_header"], whole["tandem"]["route"]);
    assert_ne!(whole["route_header"], "local", "{v}");
    let stream = &v["stream"];
    assert!(stream["content"].as_str().unwrap().contains(IBAN), "{v}");
    assert!(stream["chunks"].as_u64().unwrap() > 1, "{v}");
    assert_eq!(stream["finish_reason"], "stop");
    assert!(stream["total_tokens"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["local"]["route"], "local");
    assert!(!v["local"]["content"].as_str().unwrap().is_empty(), "{v}");
    assert_eq!(
        (v["bad_token"].as_u64(), v["unknown_model"].as_u64()),
        (Some(401), Some(404))
    );

    // What reached the provider: two requests, the IBAN masked in both.
    let sent = lb.received();
    assert_eq!(sent.len(), 2, "tandem-local and the errors sent nothing");
    for body in &sent {
        let raw = body.to_string();
        assert!(
            !raw.contains(IBAN) && !raw.contains("DE8937040044"),
            "{raw}"
        );
        assert!(raw.contains("[IBAN_1]"), "{raw}");
    }
    // And the ledger has both, as sent.
    let mut l = super::tandem();
    env(&mut l);
    let out = l.args(["ledger", "--json"]).output().unwrap();
    let ledger: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ledger["totals"]["sent"], 2, "{ledger}");
    drop(server);
    drop(w);
}

#[test]
fn the_gateway_token_is_made_once_kept_in_the_keychain_and_rotated() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(keychain) = Keychain::start(tmp.path()) else {
        return;
    };
    let serve = |extra: &[&str]| {
        let mut c = super::tandem();
        keychain.env(&mut c);
        c.env("TANDEM_CONFIG_DIR", tmp.path().join("config"))
            .env("TANDEM_NER", "off")
            .env_remove("TANDEM_GATEWAY_TOKEN");
        Server::start(&mut c, extra)
    };
    let token_in = |s: &Server| -> Option<String> {
        s.stderr
            .lines()
            .find(|l| l.starts_with("token (shown once"))
            .and_then(|l| l.split_whitespace().last())
            .map(String::from)
    };
    // The keychain may need a moment after its daemon started.
    let mut first = None;
    for _ in 0..20 {
        let s = serve(&[]);
        if token_in(&s).is_some() {
            first = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let s = first.expect("the first start printed no token");
    let t1 = token_in(&s).unwrap();
    assert!(t1.starts_with("tdm-") && t1.len() == 68, "{t1}");
    assert_eq!(s.models_status(&t1), 200);
    assert_eq!(s.models_status("tdm-guess"), 401);
    drop(s);

    // Kept: a second start shows no token and accepts the first.
    let s = serve(&[]);
    assert_eq!(token_in(&s), None, "{}", s.stderr);
    assert!(!s.stderr.contains(&t1));
    assert_eq!(s.models_status(&t1), 200);
    drop(s);

    // Rotated: a new token, printed once; the old one stops working.
    let s = serve(&["--rotate-token"]);
    let t2 = token_in(&s).expect("rotation printed no token");
    assert_ne!(t1, t2);
    assert_eq!(s.models_status(&t2), 200);
    assert_eq!(s.models_status(&t1), 401);
}

/// Issue 6's promise end to end: a file in a sensitive folder, indexed, found by the question,
/// used by the task, and never sent, even to an agent the user named.
#[test]
fn a_task_that_uses_a_sensitive_folder_never_sends_its_content() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lb = rt.block_on(Loopback::start(KEY)).unwrap();
    let health = tmp.path().join("health");
    std::fs::create_dir_all(&health).unwrap();
    std::fs::write(
        health.join("lab.txt"),
        "Lab report for the patient: HbA1c 7.1 percent, marker quetzalcoatl.",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut c = super::tandem();
        c.env("TANDEM_CONFIG_DIR", tmp.path().join("config"))
            .env("TANDEM_LEDGER", tmp.path().join("ledger.sqlite3"))
            .env("TANDEM_INDEX", tmp.path().join("index.sqlite3"))
            .env("TANDEM_NER", "off")
            .env("TANDEM_KEY_LB", KEY)
            .args(args);
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "tandem {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    run(&[
        "cloud",
        "add",
        "lb",
        "--wire",
        "openai",
        "--base-url",
        &lb.base_url(),
        "--model",
        "echo",
    ]);
    run(&["folders", "add", health.to_str().unwrap(), "--sensitive"]);
    run(&["index", "run"]);
    let (_, err) = run(&[
        "ask",
        "--from-folders",
        "--agent",
        "lb",
        "--explain",
        "--max-tokens",
        "16",
        "What did my lab report say about HbA1c?",
    ]);
    assert!(
        err.contains("excerpt of lab.txt (sensitive folder"),
        "{err}"
    );
    for body in lb.received() {
        let raw = body.to_string();
        assert!(
            !raw.contains("quetzalcoatl") && !raw.contains("7.1"),
            "{raw}"
        );
    }
    drop(rt);
}

#[test]
fn the_anthropic_python_client_works_against_tandem_serve_unchanged() {
    let python = python_with("anthropic");
    let w = LoopbackWorld::new();
    let (lb, env) = (&w.lb, |c: &mut Command| w.env(c));
    let mut c = super::tandem();
    env(&mut c);
    let server = Server::start(&mut c, &[]);
    let v = run_client(
        &python,
        "tests/gateway/anthropic_client.py",
        &[
            ("TANDEM_GATEWAY_BASE", server.url.trim_end_matches("/v1")),
            ("TANDEM_GATEWAY_TOKEN", TOKEN),
            ("AGENT", "lb"),
        ],
    );
    let whole = &v["whole"];
    assert_eq!(
        (whole["type"].as_str(), whole["role"].as_str()),
        (Some("message"), Some("assistant")),
        "{v}"
    );
    assert!(whole["text"].as_str().unwrap().contains(IBAN), "{v}");
    assert_eq!(whole["stop_reason"], "end_turn");
    assert!(whole["output_tokens"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(whole["tandem"]["masked"], 1, "{v}");
    assert_eq!(whole["route_header"], whole["tandem"]["route"]);
    assert_ne!(whole["route_header"], "local", "{v}");
    let stream = &v["stream"];
    assert!(stream["text"].as_str().unwrap().contains(IBAN), "{v}");
    assert_eq!(stream["stop_reason"], "end_turn");
    assert!(stream["output_tokens"].as_u64().unwrap() > 0, "{v}");
    let events: Vec<&str> = stream["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(events.first(), Some(&"message_start"), "{events:?}");
    assert_eq!(events.last(), Some(&"message_stop"), "{events:?}");
    assert!(
        events
            .iter()
            .filter(|e| **e == "content_block_delta" || **e == "text")
            .count()
            > 1,
        "{events:?}"
    );
    assert_eq!(v["local"]["route"], "local");
    assert!(!v["local"]["text"].as_str().unwrap().is_empty(), "{v}");
    assert_eq!(
        v["bad_token"],
        serde_json::json!([401, "authentication_error"]),
        "{v}"
    );
    assert_eq!(
        v["unknown_model"],
        serde_json::json!([404, "not_found_error"]),
        "{v}"
    );
    assert_eq!(
        v["tools"],
        serde_json::json!([400, "gateway.tools_unsupported"]),
        "{v}"
    );

    // What reached the provider: the two cloud requests, the IBAN masked, the system prompt
    // and the earlier turns with it.
    let sent = lb.received();
    assert_eq!(
        sent.len(),
        2,
        "tandem-local and the errors sent nothing: {sent:?}"
    );
    for body in &sent {
        let raw = body.to_string();
        assert!(
            !raw.contains(IBAN) && !raw.contains("DE8937040044"),
            "{raw}"
        );
        assert!(raw.contains("[IBAN_1]"), "{raw}");
        assert!(
            raw.contains("Be brief.") && raw.contains("I pay my rent"),
            "{raw}"
        );
    }
    drop(server);
    drop(w);
}

#[test]
fn the_official_clients_call_tools_through_the_privacy_layer() {
    let python = python_with("anthropic");
    let w = LoopbackWorld::new();
    // Two more agents on the same loopback provider, its `tools` scenario, one per wire.
    for (name, wire) in [("lbt", "openai"), ("lbta", "anthropic")] {
        let mut add = super::tandem();
        w.env(&mut add);
        let out = add
            .args(["cloud", "add", name, "--wire", wire, "--base-url"])
            .arg(w.lb.base_url())
            .args(["--model", "tools"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let env = |c: &mut Command| {
        w.env(c);
        c.env("TANDEM_KEY_LBT", KEY).env("TANDEM_KEY_LBTA", KEY);
    };
    let mut c = super::tandem();
    env(&mut c);
    let server = Server::start(&mut c, &[]);
    let v = run_client(
        &python,
        "tests/gateway/tools_client.py",
        &[
            ("TANDEM_GATEWAY_URL", &server.url),
            ("TANDEM_GATEWAY_TOKEN", TOKEN),
            ("AGENT", "lbt"),
            ("AGENT_ANTHROPIC", "lbta"),
        ],
    );
    let args = |call: &Value| -> Value {
        match &call["arguments"] {
            Value::String(s) => serde_json::from_str(s).unwrap(),
            _ => call["input"].clone(),
        }
    };
    // Each way of asking: the lookup gets the real IBAN (the client's tool runs here), the
    // page fetch keeps the placeholder (a link would send the value to whoever wrote it).
    for (name, stop) in [
        ("openai_whole", "tool_calls"),
        ("openai_stream", "tool_calls"),
        ("anthropic_whole", "tool_use"),
        ("anthropic_stream", "tool_use"),
    ] {
        let r = &v[name];
        let got = r["finish_reason"].as_str().or(r["stop_reason"].as_str());
        assert_eq!(got, Some(stop), "{name}: {v}");
        let calls = r["calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2, "{name}: {v}");
        assert_eq!(calls[0]["name"], "lookup_account", "{name}: {v}");
        assert!(
            args(&calls[0])["text"].as_str().unwrap().contains(IBAN),
            "{name}: {v}"
        );
        let link = args(&calls[1])["url"].as_str().unwrap().to_string();
        assert!(
            link.contains("[IBAN_1]") && !link.contains("DE89"),
            "{name}: {link}"
        );
        assert!(!calls[0]["id"].as_str().unwrap_or("").is_empty(), "{name}");
    }
    let notices = v["openai_whole"]["tandem"]["notices"].to_string();
    assert!(notices.contains("left as placeholders"), "{v}");
    // The tool's result repeated the IBAN: it left masked and came back restored.
    for (name, text) in [("openai_result", "content"), ("anthropic_result", "text")] {
        let t = v[name][text].as_str().unwrap();
        assert!(
            t.starts_with("Tool said: Account ") && t.contains(IBAN),
            "{name}: {v}"
        );
    }
    assert_eq!(v["openai_result"]["finish_reason"], "stop");
    assert_eq!(v["anthropic_result"]["stop_reason"], "end_turn");
    assert_eq!(
        v["server_tool"],
        serde_json::json!([400, "gateway.tools_unsupported"]),
        "{v}"
    );

    // Every byte that reached the provider: six requests, the IBAN masked in the prompt, in
    // the calls sent back as history and in the tools' results; the tools offered each time.
    let sent = w.lb.received();
    assert_eq!(sent.len(), 6, "{sent:?}");
    for body in &sent {
        let raw = body.to_string();
        assert!(
            !raw.contains(IBAN) && !raw.contains("DE8937040044") && !raw.contains("0532 0130"),
            "{raw}"
        );
        assert!(raw.contains("lookup_account"), "{raw}");
    }
    let results: Vec<String> = sent
        .iter()
        .map(Value::to_string)
        .filter(|r| r.contains("belongs to the rent office"))
        .collect();
    assert_eq!(results.len(), 2, "{sent:?}");
    for r in &results {
        // The same placeholder as in the prompt: one vault for the request.
        assert!(r.contains(" [IBAN_1] belongs"), "{r}");
    }
    // The call the client sends back keeps the placeholder it got (never masked again).
    for r in &results {
        assert!(
            !r.contains("[[") && r.contains("account [IBAN_1] and"),
            "{r}"
        );
    }
    // The Anthropic wire got Anthropic's shapes.
    let a = sent
        .iter()
        .find(|b| b.to_string().contains("tool_result"))
        .unwrap();
    assert!(a["tools"][0]["input_schema"].is_object(), "{a}");
    // And the ledger has all six, as sent.
    let mut l = super::tandem();
    env(&mut l);
    let out = l.args(["ledger", "--json"]).output().unwrap();
    let ledger: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ledger["totals"]["sent"], 6, "{ledger}");
    drop(server);
    drop(w);
}

/// The `answer --jsonl` contract with the real small model: one line out per line in, same
/// order, the documented keys; `--local` answers here with the model's confidence on short
/// tasks (null on open ones) and sends nothing; a malformed line gets {"id": null, "error"};
/// without `--local` a task the plan sends away reaches the loopback agent masked and the line
/// says the cloud answered.
#[test]
fn answer_jsonl_keeps_its_contract() {
    let w = LoopbackWorld::new();
    let input = concat!(
        r#"{"id": "mc", "prompt": "Which of these is a prime number?\nA. 4\nB. 5\nC. 6\nD. 8\nAnswer:"}"#,
        "\n",
        "not json\n",
        r#"{"id": "open", "prompt": "Write a short poem about the sea."}"#,
        "\n",
    );
    let answer = |args: &[&str], input: &str| -> Vec<Value> {
        let mut c = super::tandem();
        w.env(&mut c);
        let out = super::output_with_stdin(
            c.args(["answer", "--jsonl", "--max-tokens", "24"])
                .args(args),
            input,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let lines = answer(&["--local"], input);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(
        (&lines[1]["id"], lines[1]["error"].is_string()),
        (&Value::Null, true)
    );
    for (l, id) in [(&lines[0], "mc"), (&lines[2], "open")] {
        assert_eq!(l["id"], id);
        for k in [
            "route",
            "answered_by",
            "text",
            "confidence",
            "keep",
            "escalated",
            "local_tokens",
            "cloud_tokens",
        ] {
            assert!(l.get(k).is_some(), "{k} missing in {l}");
        }
        assert_eq!(
            (l["route"].as_str(), l["answered_by"].as_str()),
            (Some("local"), Some("local"))
        );
        assert_eq!(
            (l["escalated"].as_bool(), l["cloud_tokens"].as_u64()),
            (Some(false), Some(0))
        );
        assert!(l["local_tokens"].as_u64().unwrap() > 0);
    }
    // The multiple-choice answer is held to the options and carries the model's belief.
    let mc = &lines[0];
    let c = mc["confidence"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&c) && c > 0.0, "{mc}");
    assert!(
        ["A. 4", "B. 5", "C. 6", "D. 8"].contains(&mc["text"].as_str().unwrap()),
        "{mc}"
    );
    // ... and how far it cleared the bar for keeping it (the gain rule of router/keep.rs).
    assert!(mc["keep"].is_f64(), "{mc}");
    assert_eq!(lines[2]["confidence"], Value::Null);
    assert_eq!(lines[2]["keep"], Value::Null);
    assert!(w.lb.received().is_empty(), "--local sends nothing");
    // Routed: a small local model makes no attempt; the plan sends the task, masked.
    let routed = answer(
        &[],
        &format!(
            "{}\n",
            serde_json::json!({"id": "r", "prompt": format!("Why might my bank reject a transfer to {IBAN}?")})
        ),
    );
    assert_eq!(routed.len(), 1);
    let r = &routed[0];
    assert_eq!(
        (r["route"].as_str(), r["answered_by"].as_str()),
        (Some("split"), Some("cloud")),
        "{r}"
    );
    assert!(r["cloud_tokens"].as_u64().unwrap() > 0, "{r}");
    // The loopback model echoes what it got: the answer comes back restored on the device.
    assert!(r["text"].as_str().unwrap().contains(IBAN), "{r}");
    let sent = w.lb.received();
    assert_eq!(sent.len(), 1);
    assert!(!sent[0].to_string().contains("3704"), "{}", sent[0]);
}

/// The network monitor every host runs probes the cloud providers (a HEAD, no key, no
/// content), but nothing at all while Pause cloud is on: a provider that counts connections
/// sees none from a paused `tandem answer`, and sees the probe once resumed.
#[test]
fn a_paused_tandem_does_not_even_probe_the_cloud() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = connections.clone();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { break };
            seen.fetch_add(1, Ordering::SeqCst);
            let _ = s.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    let tmp = tempfile::tempdir().unwrap();
    let cmd = |args: &[&str]| {
        let mut c = super::tandem();
        c.env("TANDEM_CONFIG_DIR", tmp.path().join("config"))
            .env("TANDEM_LEDGER", tmp.path().join("ledger.sqlite3"))
            .env("TANDEM_NER", "off")
            .env("TANDEM_KEY_COUNTER", KEY)
            .args(args);
        c
    };
    let ok = |mut c: Command, input: &str| {
        let out = super::output_with_stdin(&mut c, input);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let base = format!("http://127.0.0.1:{port}/v1");
    ok(
        cmd(&[
            "cloud",
            "add",
            "counter",
            "--wire",
            "openai",
            "--base-url",
            &base,
            "--model",
            "m",
        ]),
        "",
    );
    ok(cmd(&["cloud", "pause"]), "");
    let line = r#"{"id": 1, "prompt": "Say hello."}"#.to_string() + "\n";
    ok(
        cmd(&["answer", "--jsonl", "--local", "--max-tokens", "16"]),
        &line,
    );
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "a paused Tandem probed the cloud"
    );
    ok(cmd(&["cloud", "resume"]), "");
    ok(
        cmd(&["answer", "--jsonl", "--local", "--max-tokens", "16"]),
        &line,
    );
    assert!(
        connections.load(Ordering::SeqCst) >= 1,
        "the monitor probes once resumed (the test can see probes)"
    );
}
