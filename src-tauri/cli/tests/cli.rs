//! The `tandem` binary as users and scripts call it: the documented JSON of
//! `probe --json` and `ask --local --json`, and clear errors.

use std::process::Command;

mod cloud_cli;
mod gateway_cli;
mod privacy_e2e;

fn tandem() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tandem"));
    // Run from the repository root, where models/ lives.
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    // Nothing is loaded from the working directory: the checkout's models are named.
    c.env(
        "TANDEM_MODELS_DIR",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../models"),
    );
    // Tests run on the small model, whatever else this checkout has fetched (with no model
    // named, a fetched recommended model would run).
    c.env("TANDEM_MODEL", "smollm2-135m-instruct");
    c
}

#[test]
fn probe_json_has_the_documented_schema() {
    let out = tandem().args(["probe", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    let hw = &v["hardware"];
    for key in ["os", "arch"] {
        assert!(hw[key].is_string(), "{key}");
    }
    assert!(hw["cpu"]["physical_cores"].as_u64().unwrap() >= 1);
    assert!(hw["cpu"]["simd"]["avx2"].is_boolean());
    assert!(hw["memory"]["total_bytes"].as_u64().unwrap() > 0);
    assert!(hw["gpus"].is_array() && hw["npus"].is_array());
    assert!(["ac", "battery", "unknown"].contains(&hw["power"]["source"].as_str().unwrap()));
    let rec = &v["recommendation"];
    assert!(["cpu", "metal", "cuda"].contains(&rec["device"].as_str().unwrap()));
    assert!(rec["threads"].as_u64().unwrap() >= 1);
    assert!(["tiny", "small", "medium", "large"].contains(&rec["tier"].as_str().unwrap()));
    let models = rec["models"].as_array().unwrap();
    assert!(models
        .iter()
        .any(|m| m["name"] == "smollm2-135m-instruct" && m["fits"] == true));
}

#[test]
fn probe_text_is_for_people() {
    let out = tandem().arg("probe").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Cores") && text.contains("Recommend"),
        "{text}"
    );
}

#[test]
fn ask_local_json_ends_with_one_json_line() {
    let out = tandem()
        .args([
            "ask",
            "--local",
            "--json",
            "--max-tokens",
            "12",
            "What is 2 + 2?",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let last = stdout.trim_end().lines().last().unwrap();
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    let text = v["text"].as_str().unwrap();
    assert!(!text.is_empty());
    assert!(
        stdout.starts_with(text),
        "the text streamed before the JSON line"
    );
    let m = &v["metrics"];
    for key in [
        "prompt_tokens",
        "completion_tokens",
        "ttft_ms",
        "prompt_tok_per_s",
        "decode_tok_per_s",
        "wall_ms",
    ] {
        assert!(m[key].is_number(), "{key} in {m}");
    }
    assert!(m["completion_tokens"].as_u64().unwrap() <= 12);
}

#[test]
fn unknown_model_is_a_clear_error() {
    let out = tandem()
        .args(["ask", "--local", "--model", "no-such-model", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[models.unknown]") && err.contains("tandem models list"),
        "{err}"
    );
}

#[test]
fn models_path_points_at_the_converted_default() {
    let out = tandem().args(["models", "path"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = String::from_utf8(out.stdout).unwrap();
    assert!(
        path.trim().ends_with("SmolLM2-135M-Instruct.Q8_0.gguf"),
        "{path}"
    );
}

fn run_with_stdin(args: &[&str], input: &str) -> std::process::Output {
    run_with_stdin_env(args, input, &[])
}

fn run_with_stdin_env(args: &[&str], input: &str, env: &[(&str, &str)]) -> std::process::Output {
    output_with_stdin(tandem().envs(env.iter().copied()).args(args), input)
}

/// Runs `c` with `input` on its stdin; stdout and stderr captured.
fn output_with_stdin(c: &mut Command, input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = c
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The `scan --jsonl` contract: one line out per line in, same order, malformed lines answered
/// with {"id": null, "error"} without stopping, exit 0.
#[test]
fn scan_jsonl_keeps_its_contract() {
    let input = concat!(
        r#"{"id": "a", "text": "Card 4111 1111 1111 1111, thanks"}"#,
        "\n",
        "this is not json\n",
        r#"{"id": "b", "text": "What is the capital of Germany?"}"#,
        "\n",
        r#"{"text": "no id"}"#,
        "\n",
        r#"{"id": "c", "text": "Ich wurde mit Diabetes diagnostiziert. My doctor said I have diabetes."}"#,
        "\n",
    );
    let out = run_with_stdin(&["scan", "--jsonl"], input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["id"], "a");
    assert_eq!(lines[0]["sensitive"], true);
    assert_eq!(lines[0]["verdict"], "maskable");
    let span = &lines[0]["spans"][0];
    assert_eq!(
        (span["start"].as_u64(), span["end"].as_u64()),
        (Some(5), Some(24))
    );
    assert_eq!(span["label"], "CREDIT_CARD");
    assert_eq!(span["tier"], "financial");
    assert!(span["score"].as_f64().unwrap() > 0.5);
    let mut keys: Vec<&String> = span.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["end", "label", "score", "start", "tier"]);
    assert_eq!(lines[1]["id"], serde_json::Value::Null);
    assert!(lines[1]["error"].as_str().unwrap().contains("invalid JSON"));
    assert_eq!(
        lines[2],
        serde_json::json!({"id": "b", "sensitive": false, "verdict": "public", "spans": []})
    );
    assert_eq!(lines[3]["id"], serde_json::Value::Null);
    assert!(lines[3]["error"].as_str().unwrap().contains("id"));
    assert_eq!(lines[4]["verdict"], "local_only");
}

/// Values that identify nobody (a Gmail user name shorter than Gmail allows, an address that
/// says it is fake, AWS's documentation key) are no findings of the shipped binary; the same
/// shapes one letter off are, and those never reach a cloud payload. Mutation-checked with
/// `made_up_email` and `template_marks` disabled.
#[test]
fn values_that_identify_nobody_are_no_findings() {
    let line = |id: &str, text: &str| {
        serde_json::json!({ "id": id, "text": text, "prompt": text }).to_string() + "\n"
    };
    let made_up = "Why is mail from src@gmail.com rejected? author = \"james.fake@ymail.com\", \
                   key AKIAIOSFODNN7EXAMPLE";
    let real = "Why is mail from srcsrc7@gmail.com rejected? author = \"james.fako@ymail.com\", \
                key AKIAQ3EGRKZ7XPLJ4WMN";
    let input = line("made_up", made_up) + &line("real", real);
    let env = [("TANDEM_NER", "off")];
    let out = run_with_stdin_env(&["scan", "--jsonl"], &input, &env);
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["spans"], serde_json::json!([]), "{}", lines[0]);
    let labels: Vec<&str> = lines[1]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["EMAIL_ADDRESS", "EMAIL_ADDRESS", "SECRET"], "{}", lines[1]);
    let out = run_with_stdin_env(&["route", "--jsonl"], &line("real", real), &env);
    let routed = String::from_utf8(out.stdout).unwrap();
    for v in ["srcsrc7@gmail.com", "james.fako@ymail.com", "AKIAQ3EGRKZ7XPLJ4WMN"] {
        assert!(!routed.contains(v), "{v} left: {routed}");
    }
    assert!(routed.contains("cloud_payload"), "{routed}");
}

#[test]
fn redact_prints_what_the_cloud_would_see() {
    let out = run_with_stdin(
        &["redact"],
        "Send 50 EUR to DE89 3704 0044 0532 0130 00 and email bob@mailbox.org.\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text, "Send 50 EUR to [IBAN_1] and email [EMAIL_1].\n");
}

/// A user's own credential format in `sensitivity.toml` (`[[secrets]]`, the built-in table's
/// form) is found by the real binary and masked before anything could leave; a broken rule
/// is a clear error, not a silent skip.
#[test]
fn user_secret_rules_mask_a_credential_format_of_ones_own() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("sensitivity.toml");
    std::fs::write(
        &rules,
        "[[secrets]]\nid = 'acme-deploy-token'\nkeywords = ['acmedt_']\n\
         pattern = 'ACMEDT_[A-Za-z0-9]{24}'\nmin_entropy = 3.0\n",
    )
    .unwrap();
    let rules = rules.to_str().unwrap();
    let line = "Deploy with ACMEDT_q8Zr2LkP0wXv7NbT4sYc1HdF please.\n";
    let out = run_with_stdin(&["redact", "--rules", rules], line);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Deploy with [SECRET_1] please.\n"
    );
    // Without the rule it is no known secret (only a code-like word): the rule did it.
    let out = run_with_stdin(&["redact"], line);
    assert!(!String::from_utf8(out.stdout).unwrap().contains("[SECRET_"));
    std::fs::write(
        dir.path().join("bad.toml"),
        "[[secrets]]\nid = 'broken'\nkeywords = ['zz_']\npattern = '('\n",
    )
    .unwrap();
    let bad = dir.path().join("bad.toml");
    let out = run_with_stdin(&["scan", "--rules", bad.to_str().unwrap()], line);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("secret rule \"broken\""), "{err}");
}

#[test]
fn scan_marks_spans_for_people() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("note.txt");
    std::fs::write(&file, "SSN 078-05-1120? No: 536-22-8145 is the one.\n").unwrap();
    let out = tandem()
        .args(["scan", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("«536-22-8145»⟨US_SSN⟩"), "{text}");
    assert!(text.contains("verdict: maskable"), "{text}");
    let missing = tandem()
        .args(["scan", "/nonexistent/file.txt"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot open"));
}

/// The `route --jsonl` contract: one line out per line in, same order, the documented keys;
/// the policy comes from the settings file named by TANDEM_CONFIG.
#[test]
fn route_jsonl_keeps_its_contract() {
    let input = concat!(
        r#"{"id": "a", "prompt": "Write a Python function that emails jane.doe@posteo.de", "attachments": []}"#,
        "\n",
        r#"{"id": "b", "prompt": "Reply to this", "attachments": [{"name": "letter.txt", "text": "I was diagnosed with asthma. See you Friday."}]}"#,
        "\n",
        "not json\n",
        r#"{"id": "c", "prompt": "Summarize in one line: the meeting moved to Monday."}"#,
        "\n",
    );
    let run = |extra: &[(&str, &str)], args: &[&str]| {
        let mut env = vec![("TANDEM_NER", "off")];
        env.extend_from_slice(extra);
        let out = run_with_stdin_env(&[&["route", "--jsonl"][..], args].concat(), input, &env);
        assert!(out.status.success());
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let lines = run(&[], &["--local-class", "small"]);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2]["id"], serde_json::Value::Null);
    assert!(lines[2]["error"].is_string());
    let a = &lines[0];
    let keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
    for k in [
        "id",
        "route",
        "strategy",
        "fragments",
        "cloud_payload",
        "reasons",
        "complexity",
    ] {
        assert!(keys.contains(&k), "{k} missing in {a}");
    }
    assert_eq!(
        (a["route"].as_str(), a["strategy"].as_str()),
        (Some("split"), Some("mask"))
    );
    let payload = a["cloud_payload"].as_str().unwrap();
    assert!(payload.contains("[EMAIL_1]") && !payload.contains("posteo"));
    let f = &a["fragments"][0];
    assert_eq!(
        (
            f["source"].as_str(),
            f["start"].as_u64(),
            f["class"].as_str()
        ),
        (Some("prompt"), Some(0), Some("maskable"))
    );
    let b = &lines[1];
    assert_eq!(b["strategy"], "local_extract");
    assert!(b["fragments"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["source"] == "letter.txt" && f["class"] == "local_only"));
    assert!(!b["cloud_payload"].as_str().unwrap().contains("asthma"));
    assert!(lines[3]["complexity"].as_f64().unwrap() > 0.0);
    // Summarising stays local on a large model.
    assert_eq!(run(&[], &["--local-class", "large"])[3]["route"], "local");
    // Policy private from the settings file: nothing that is not public leaves.
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, "policy = \"private\"\n").unwrap();
    let private = run(&[("TANDEM_CONFIG", cfg.to_str().unwrap())], &[]);
    assert_eq!(
        (private[0]["route"].as_str(), &private[0]["cloud_payload"]),
        (Some("local"), &serde_json::Value::Null)
    );
    std::fs::write(&cfg, "policy = \"reckless\"\n").unwrap();
    let out = tandem()
        .env("TANDEM_CONFIG", &cfg)
        .args(["route", "--jsonl"])
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("reckless"));
}

/// An empty `TANDEM_WORDS` is unset: the system's word list still judges which words are
/// everyday ones. Mutation-checked: read as a path, the empty name leaves no list but Tandem's
/// own words, and "write my bio" goes as placeholders.
#[test]
fn an_empty_words_variable_is_unset() {
    let input = "{\"id\": \"a\", \"prompt\": \"I work at linkedin; write my bio\"}\n";
    let out = run_with_stdin_env(
        &["route", "--jsonl", "--local-class", "large"],
        input,
        &[("TANDEM_NER", "off"), ("TANDEM_WORDS", "")],
    );
    assert!(out.status.success());
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    let payload = line["cloud_payload"].as_str().unwrap();
    assert!(payload.contains("write my bio"), "{payload}");
    assert!(!payload.contains("linkedin"), "{payload}");
}

/// Without any word list, policy private says why nothing leaves: no word can be told to be an
/// everyday one. Mutation-checked: with Tandem's own few words counted as a list, the reason
/// was missing.
#[test]
fn no_word_list_is_the_reason_under_policy_private() {
    let input = "{\"id\": \"a\", \"prompt\": \"Summarise the history of the printing press\"}\n";
    let out = run_with_stdin_env(
        &["route", "--jsonl", "--policy", "private"],
        input,
        &[
            ("TANDEM_NER", "off"),
            ("TANDEM_WORDS", "/nonexistent/tandem-words"),
        ],
    );
    assert!(out.status.success());
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    assert_eq!(line["route"], "local", "{line}");
    assert!(line["cloud_payload"].is_null(), "{line}");
    let reasons = line["reasons"].to_string();
    assert!(reasons.contains("no word list on this device"), "{reasons}");
    // With the system's list the same request is public and goes.
    let out = run_with_stdin_env(
        &["route", "--jsonl", "--policy", "private"],
        input,
        &[("TANDEM_NER", "off")],
    );
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    assert!(
        !line["reasons"].to_string().contains("no word list"),
        "{line}"
    );
}

#[test]
fn extract_json_gives_text_and_its_classification() {
    let d = tempfile::tempdir().unwrap();
    let page = d.path().join("statement.html");
    std::fs::write(
        &page,
        "<html><body><h1>Statement</h1><p>Transfer to DE89 3704 0044 0532 0130 00 on Monday.</p><p>Thanks.</p></body></html>",
    )
    .unwrap();
    let out = tandem()
        .env("TANDEM_NER", "off")
        .arg("extract")
        .arg(&page)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "html");
    assert_eq!(v["verdict"], "maskable");
    assert!(
        v["text"].as_str().unwrap().contains("Transfer to DE89"),
        "{v}"
    );
    assert!(!v["text"].as_str().unwrap().contains("<p>"), "{v}");
    assert!(
        v["spans"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["label"] == "IBAN_CODE"),
        "{v}"
    );
    let frags = v["fragments"].as_array().unwrap();
    assert!(
        frags.iter().any(|f| f["class"] == "maskable")
            && frags.iter().all(|f| f["source"] == "statement.html"),
        "{v}"
    );
    // With --sensitive-source everything is local_only, whatever it says.
    let out = tandem()
        .env("TANDEM_NER", "off")
        .arg("extract")
        .arg(&page)
        .args(["--json", "--sensitive-source"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "local_only");

    // A broken file is a clear, coded error.
    let bad = d.path().join("scan.pdf");
    std::fs::write(&bad, "%PDF-1.7 nothing else").unwrap();
    let out = tandem().arg("extract").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[extract.corrupt]") && err.contains("scan.pdf"),
        "{err}"
    );
}

#[test]
fn folders_index_and_search_from_the_cli() {
    let d = tempfile::tempdir().unwrap();
    let health = d.path().join("health");
    std::fs::create_dir_all(&health).unwrap();
    std::fs::write(health.join("lab.txt"), "Lab report: HbA1c 7.1 percent.").unwrap();
    std::fs::write(health.join("scan.pdf"), "%PDF-1.7 broken").unwrap();
    let run = |args: &[&str]| {
        let out = tandem()
            .env("TANDEM_CONFIG_DIR", d.path().join("config"))
            .env("TANDEM_INDEX", d.path().join("index.sqlite3"))
            .env("TANDEM_NER", "off")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let h = health.to_str().unwrap();
    let (ok, _, err) = run(&["folders", "add", h]);
    assert!(!ok && err.contains("--sensitive"), "{err}");
    let (ok, out, err) = run(&["folders", "add", h, "--sensitive"]);
    assert!(ok && out.contains("sensitive"), "{err}");
    let (_, out, _) = run(&["folders", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v[0]["sensitive"], true);
    let (ok, out, err) = run(&["index", "run", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (v["indexed"].as_u64(), v["failed"].as_u64()),
        (Some(1), Some(1)),
        "{v}"
    );
    let (_, out, _) = run(&["search", "hba1c", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{v}");
    assert_eq!(
        (
            hits[0]["sensitive_source"].as_bool(),
            hits[0]["verdict"].as_str()
        ),
        (Some(true), Some("local_only"))
    );
    let (_, out, _) = run(&["index", "status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (v["indexed"].as_u64(), v["failed"].as_u64()),
        (Some(1), Some(1)),
        "{v}"
    );
    assert!(v["failures"][0][1].as_str().unwrap().contains("PDF"), "{v}");
    let (ok, _, _) = run(&["folders", "remove", h]);
    assert!(ok);
    let (_, out, _) = run(&["index", "run", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["removed"].as_u64(), Some(2), "{v}");
}

/// An indexing pass with the real names model files, the int8 copy `make test` derives
/// included: notes that name people only the model finds (the rules alone leave these
/// public) come out maskable, everyday notes public, on as many threads as the machine has.
#[test]
fn the_index_finds_names_with_the_bulk_names_model() {
    let ner = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/ner");
    assert!(
        std::path::Path::new(ner).join("model_int8.onnx").is_file(),
        "scripts/fetch-ner.sh derives models/ner/model_int8.onnx"
    );
    let d = tempfile::tempdir().unwrap();
    let notes = d.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    let everyday = "The committee reviewed the quarterly figures and agreed to revisit the budget next spring. Please keep the tone friendly but precise. ";
    for i in 0..12 {
        let text = if i % 2 == 0 {
            let who = ["Rosalind", "Bongani"][i % 4 / 2];
            format!("{everyday}Yesterday {who} phoned about the boiler. {everyday}")
        } else {
            everyday.repeat(3)
        };
        std::fs::write(notes.join(format!("note{i:02}.txt")), text).unwrap();
    }
    let run = |args: &[&str]| {
        let out = tandem()
            .env("TANDEM_CONFIG_DIR", d.path().join("config"))
            .env("TANDEM_INDEX", d.path().join("index.sqlite3"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!err.contains("rules only"), "{err}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    run(&["folders", "add", notes.to_str().unwrap(), "--normal"]);
    let v: serde_json::Value =
        serde_json::from_str(run(&["index", "run", "--json"]).trim()).unwrap();
    assert_eq!(v["indexed"].as_u64(), Some(12), "{v}");
    let v: serde_json::Value =
        serde_json::from_str(run(&["index", "status", "--json"]).trim()).unwrap();
    assert_eq!(v["by_verdict"]["maskable"].as_u64(), Some(6), "{v}");
    assert_eq!(v["by_verdict"]["public"].as_u64(), Some(6), "{v}");
}
