//! The `tandem` binary as users and scripts call it: the documented JSON of
//! `probe --json` and `ask --local --json`, and clear errors.

use std::process::Command;

fn tandem() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tandem"));
    // Run from the repository root, where models/ lives.
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c.env_remove("TANDEM_MODEL");
    c
}

#[test]
fn probe_json_has_the_documented_schema() {
    let out = tandem().args(["probe", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
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
    assert!(models.iter().any(|m| m["name"] == "smollm2-135m-instruct" && m["fits"] == true));
}

#[test]
fn probe_text_is_for_people() {
    let out = tandem().arg("probe").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Cores") && text.contains("Recommend"), "{text}");
}

#[test]
fn ask_local_json_ends_with_one_json_line() {
    let out = tandem()
        .args(["ask", "--local", "--json", "--max-tokens", "12", "What is 2 + 2?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let last = stdout.trim_end().lines().last().unwrap();
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    let text = v["text"].as_str().unwrap();
    assert!(!text.is_empty());
    assert!(stdout.starts_with(text), "the text streamed before the JSON line");
    let m = &v["metrics"];
    for key in ["prompt_tokens", "completion_tokens", "ttft_ms", "prompt_tok_per_s", "decode_tok_per_s", "wall_ms"] {
        assert!(m[key].is_number(), "{key} in {m}");
    }
    assert!(m["completion_tokens"].as_u64().unwrap() <= 12);
}

#[test]
fn unknown_model_is_a_clear_error() {
    let out = tandem().args(["ask", "--local", "--model", "no-such-model", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[models.unknown]") && err.contains("tandem models list"), "{err}");
}

#[test]
fn models_path_points_at_the_converted_default() {
    let out = tandem().args(["models", "path"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let path = String::from_utf8(out.stdout).unwrap();
    assert!(path.trim().ends_with("SmolLM2-135M-Instruct.Q8_0.gguf"), "{path}");
}
