//! What the gateway adds per request, and what it sustains. A small non-streaming chat request
//! (and the same question on Anthropic's Messages endpoint, and a tool round trip)
//! (no local model; rules scanner, real SQLite ledger, the loopback provider answering) sent
//! through the gateway vs the same request sent straight to the loopback provider, interleaved,
//! p50/p99 of 1000 each; then `wrk` (Debian package; skipped with a note when absent) against
//! both for 10 s at 8 connections.
//!
//!     cargo bench --profile dev --workspace --bench gateway

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_core::cloud::agents::{Agent, Catalog, ProviderConfig};
use tandem_core::cloud::loopback::Loopback;
use tandem_core::cloud::Wire;
use tandem_core::egress::{Egress, Sanitizer};
use tandem_core::gateway::{Gateway, Limits};
use tandem_core::ledger::Ledger;
use tandem_core::router::run::Orchestrator;
use tandem_core::router::{LocalClass, Policy};
use tandem_core::secrets::{ApiKey, Keys, MemoryStore, SecretStore};
use tandem_core::sensitivity::{Scanner, UserRules};

const KEY: &str = "sk-bench-gateway";
const TOKEN: &str = "tdm-bench-token";
const PROMPT: &str = "Write a two-line poem about the sea.";

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs wrk for 10 s with a POST of `body`; requests/s, and non-2xx + socket errors.
fn wrk(url: &str, auth: &str, body: &str, dir: &std::path::Path) -> Option<(f64, u64, String)> {
    let script = dir.join("post.lua");
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.body = {body:?}\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"Authorization\"] = \"Bearer {auth}\"\n"
        ),
    )
    .ok()?;
    let out = std::process::Command::new("wrk")
        .args(["-t1", "-c8", "-d10s", "--latency", "-s"])
        .arg(&script)
        .arg(url)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let rps = text
        .lines()
        .find(|l| l.starts_with("Requests/sec:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    let mut errors = 0u64;
    for l in text.lines() {
        if let Some(n) = l.trim().strip_prefix("Non-2xx or 3xx responses:") {
            errors += n.trim().parse::<u64>().unwrap_or(0);
        }
        if let Some(rest) = l.trim().strip_prefix("Socket errors:") {
            errors += rest
                .split(',')
                .filter_map(|p| p.split_whitespace().last()?.parse::<u64>().ok())
                .sum::<u64>();
        }
    }
    Some((rps, errors, text))
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return; // `cargo test --all-targets` smoke run: nothing to check here
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    rt.block_on(async {
        let lb = Loopback::start(KEY).await.expect("loopback");
        let scanner = Arc::new(Scanner::rules_only(&UserRules::default()).expect("scanner"));
        let store = Arc::new(MemoryStore::default());
        store.set("lb", &ApiKey::new(KEY).expect("key")).expect("store");
        let catalog = Catalog {
            default_role: "Answer briefly.".into(),
            providers: vec![ProviderConfig {
                name: "lb".into(),
                wire: Wire::Openai,
                base_url: lb.base_url(),
                needs_key: true,
                trust: Default::default(),
            }],
            agents: vec![Agent::new("lb", "lb", "echo"), Agent::new("lbt", "lb", "tools")],
        };
        let ledger = Ledger::open(&dir.path().join("ledger.sqlite3")).expect("ledger");
        let ledger_check = ledger.clone();
        let orch = Orchestrator::new(
            Sanitizer::new(scanner.clone()),
            Arc::new(Egress::new(scanner, Some(ledger))),
            None,
            catalog,
            Keys::new(store),
            LocalClass::Small,
        );
        let limits = Limits {
            max_concurrent: 64,
            ..Limits::default()
        };
        let gw = Gateway::new(
            Arc::new(orch),
            &ApiKey::new(TOKEN).expect("token"),
            Policy::Balanced,
            limits,
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let gw_url = format!("http://{}/v1/chat/completions", listener.local_addr().expect("addr"));
        tokio::spawn(gw.serve(listener, std::future::pending()));
        let direct_url = format!("{}/chat/completions", lb.base_url());
        let http = reqwest::Client::new();
        // A short question, and a 4 KB one with an address and a phone number to mask.
        let mut long = String::new();
        while long.len() < 4000 {
            long.push_str("Please draft a friendly reply to Maria Keller (maria.keller@posteo.de, +49 30 1234567) about moving the quarterly review to Thursday afternoon. ");
        }
        for (name, prompt) in [("short", PROMPT.to_string()), ("4 KB, masked", long)] {
            let via = json!({"model": "lb", "messages": [{"role": "user", "content": prompt}]});
            let direct = json!({"model": "echo", "messages": [{"role": "user", "content": prompt}]});
            let (mut g, mut d) = (Vec::new(), Vec::new());
            for i in 0..1100 {
                let t = Instant::now();
                let r = http.post(&gw_url).bearer_auth(TOKEN).json(&via).send().await.expect("gateway");
                assert_eq!(r.status(), 200);
                let v: serde_json::Value = r.json().await.expect("json");
                assert_eq!(v["choices"][0]["message"]["content"], prompt.as_str());
                let a = t.elapsed();
                let t = Instant::now();
                let r = http.post(&direct_url).bearer_auth(KEY).json(&direct).send().await.expect("direct");
                assert_eq!(r.status(), 200);
                std::hint::black_box(r.bytes().await.expect("body"));
                let b = t.elapsed();
                if i >= 100 {
                    g.push(a);
                    d.push(b);
                }
            }
            let (g50, g99, d50, d99) = (pct(&mut g, 0.5), pct(&mut g, 0.99), pct(&mut d, 0.5), pct(&mut d, 0.99));
            println!(
                "non-streaming chat ({name}), 1000 sequential: gateway p50 {:.2} ms p99 {:.2} ms; loopback provider direct p50 {:.2} ms p99 {:.2} ms; added p50 {:.2} ms (ratio {:.1}x)",
                ms(g50), ms(g99), ms(d50), ms(d99), ms(g50.saturating_sub(d50)), ms(g50) / ms(d50)
            );
        }
        // Anthropic's Messages endpoint: the same short question, the same agent and provider.
        let msg_url = gw_url.replace("/chat/completions", "/messages");
        let via = json!({"model": "lb", "max_tokens": 256, "messages": [{"role": "user", "content": PROMPT}]});
        let direct = json!({"model": "echo", "messages": [{"role": "user", "content": PROMPT}]});
        let (mut g, mut d) = (Vec::new(), Vec::new());
        for i in 0..1100 {
            let t = Instant::now();
            let r = http.post(&msg_url).header("x-api-key", TOKEN).header("anthropic-version", "2023-06-01").json(&via).send().await.expect("gateway");
            assert_eq!(r.status(), 200);
            let v: serde_json::Value = r.json().await.expect("json");
            assert_eq!(v["content"][0]["text"], PROMPT);
            let a = t.elapsed();
            let t = Instant::now();
            let r = http.post(&direct_url).bearer_auth(KEY).json(&direct).send().await.expect("direct");
            assert_eq!(r.status(), 200);
            std::hint::black_box(r.bytes().await.expect("body"));
            let b = t.elapsed();
            if i >= 100 {
                g.push(a);
                d.push(b);
            }
        }
        let (g50, g99, d50, d99) = (pct(&mut g, 0.5), pct(&mut g, 0.99), pct(&mut d, 0.5), pct(&mut d, 0.99));
        println!(
            "non-streaming Messages (short), 1000 sequential: gateway p50 {:.2} ms p99 {:.2} ms; loopback provider direct p50 {:.2} ms p99 {:.2} ms; added p50 {:.2} ms (ratio {:.1}x)",
            ms(g50), ms(g99), ms(d50), ms(d99), ms(g50.saturating_sub(d50)), ms(g50) / ms(d50)
        );
        // A tool round trip: the request with a tool (the cloud asks for a call, restored for
        // the client), then the tool's result sent back (masked like user text) and the answer;
        // against the same two requests sent straight to the provider.
        let tools = json!([{"type": "function", "function": {"name": "lookup", "description": "Looks a word up",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}]);
        let ask = json!({"role": "user", "content": PROMPT});
        let result = |id: &serde_json::Value| json!({"role": "tool", "tool_call_id": id, "content": "sea: a large body of salt water"});
        let (mut g, mut d) = (Vec::new(), Vec::new());
        for i in 0..550 {
            let mut pair = Vec::new();
            for (url, auth, model) in [(&gw_url, TOKEN, "lbt"), (&direct_url, KEY, "tools")] {
                let t = Instant::now();
                let first = json!({"model": model, "messages": [ask], "tools": tools});
                let v: serde_json::Value = http.post(url.as_str()).bearer_auth(auth).json(&first).send().await.expect("tools").json().await.expect("json");
                let msg = v["choices"][0]["message"].clone();
                let id = msg["tool_calls"][0]["id"].clone();
                assert!(id.is_string(), "{v}");
                let second = json!({"model": model, "messages": [ask, msg, result(&id)], "tools": tools});
                let v: serde_json::Value = http.post(url.as_str()).bearer_auth(auth).json(&second).send().await.expect("result").json().await.expect("json");
                assert!(v["choices"][0]["message"]["content"].as_str().is_some_and(|c| c.starts_with("Tool said")), "{v}");
                pair.push(t.elapsed());
            }
            if i >= 50 {
                g.push(pair[0]);
                d.push(pair[1]);
            }
        }
        let (g50, g99, d50, d99) = (pct(&mut g, 0.5), pct(&mut g, 0.99), pct(&mut d, 0.5), pct(&mut d, 0.99));
        println!(
            "tool round trip (call, then result and answer: 2 requests), 500 sequential: gateway p50 {:.2} ms p99 {:.2} ms; loopback provider direct p50 {:.2} ms p99 {:.2} ms; added p50 {:.2} ms (ratio {:.1}x)",
            ms(g50), ms(g99), ms(d50), ms(d99), ms(g50.saturating_sub(d50)), ms(g50) / ms(d50)
        );
        let via = json!({"model": "lb", "messages": [{"role": "user", "content": PROMPT}]});
        let direct = json!({"model": "echo", "messages": [{"role": "user", "content": PROMPT}]});

        let via_s = via.to_string();
        let direct_s = direct.to_string();
        let (gw_url2, direct_url2, path) = (gw_url.clone(), direct_url.clone(), dir.path().to_path_buf());
        let results = tokio::task::spawn_blocking(move || {
            (
                wrk(&gw_url2, TOKEN, &via_s, &path),
                wrk(&direct_url2, KEY, &direct_s, &path),
            )
        })
        .await
        .expect("wrk");
        match results {
            (Some((rps, errors, text)), Some((peer, peer_errors, _))) => {
                println!(
                    "wrk 10 s, 8 connections: gateway {rps:.0} req/s with {errors} errors; loopback provider direct {peer:.0} req/s with {peer_errors} errors (ratio {:.2})",
                    rps / peer
                );
                let lat: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("50%") || l.trim_start().starts_with("99%")).collect();
                println!("gateway latency under load: {}", lat.join(" ").split_whitespace().collect::<Vec<_>>().join(" "));
            }
            _ => println!("wrk not found or failed: install it (apt-get install wrk) for the throughput figure"),
        }
        let totals = ledger_check.totals(None).await.expect("totals");
        println!("ledger: {} requests recorded as sent, {} blocked", totals.sent, totals.blocked);
    });
}
