//! The gateway over real HTTP on 127.0.0.1: the OpenAI shapes (whole and streamed), the privacy
//! path (a planted IBAN reaches the loopback provider masked and comes back restored), and every
//! bad input and limit answered in OpenAI's error shape without leaking runs or connections.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_core::cloud::agents::{Agent, Catalog, ProviderConfig};
use tandem_core::cloud::loopback::Loopback;
use tandem_core::cloud::Wire;
use tandem_core::egress::{Egress, Sanitizer};
use tandem_core::gateway::{Gateway, Limits};
use tandem_core::ledger::Ledger;
use tandem_core::local::echo::EchoEngine;
use tandem_core::local::{GenerateRequest, LoadedModel, LocalEngine, LocalError, TokenStream};
use tandem_core::router::run::Orchestrator;
use tandem_core::router::{LocalClass, Policy};
use tandem_core::secrets::{ApiKey, Keys, MemoryStore, SecretStore};
use tandem_core::sensitivity::{Scanner, UserRules};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const KEY: &str = "sk-gateway-test-5678";
const TOKEN: &str = "tdm-test-token-0123456789";
const SECOND: Duration = Duration::from_secs(1);
const IBAN: &str = "DE89 3704 0044 0532 0130 00";

struct Rig {
    base: String,
    gw: Arc<Gateway>,
    cloud: Loopback,
    ledger_path: std::path::PathBuf,
    _dir: tempfile::TempDir,
    http: reqwest::Client,
}

/// A local engine whose queue is always full: the answer a busy MistralEngine gives.
struct FullEngine(LoadedModel);

impl LocalEngine for FullEngine {
    fn generate(&self, _: GenerateRequest) -> Result<TokenStream, LocalError> {
        Err(LocalError::QueueFull(8))
    }
    fn model(&self) -> &LoadedModel {
        &self.0
    }
}

enum Local {
    Echo,
    None,
    Full,
}

/// `first_byte`: how long the orchestrator waits for the provider's headers (the `slow` model
/// sends them after 3 s).
async fn rig(local: Local, limits: Limits, first_byte: Duration) -> Rig {
    let cloud = Loopback::start(KEY).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger_path = dir.path().join("ledger.sqlite3");
    let scanner = Arc::new(Scanner::rules_only(&UserRules::default()).unwrap());
    let store = Arc::new(MemoryStore::default());
    store.set("lb", &ApiKey::new(KEY).unwrap()).unwrap();
    let catalog = Catalog {
        default_role: "Keep placeholders as written.".into(),
        providers: vec![
            ProviderConfig {
                name: "lb".into(),
                wire: Wire::Openai,
                base_url: cloud.base_url(),
                needs_key: true,
                trust: Default::default(),
            },
            // Configured but without a key: not listed by /v1/models.
            ProviderConfig {
                name: "nokey".into(),
                wire: Wire::Openai,
                base_url: cloud.base_url(),
                needs_key: true,
                trust: Default::default(),
            },
        ],
        agents: vec![
            Agent::new("lb", "lb", "echo"),
            Agent::new("lb-slow", "lb", "slow"),
            Agent::new("lb-broken", "lb", "broken"),
            Agent::new("lb-other", "nokey", "echo"),
        ],
    };
    let local: Option<Arc<dyn LocalEngine>> = match local {
        Local::Echo => Some(Arc::new(EchoEngine::default())),
        Local::None => None,
        Local::Full => Some(Arc::new(FullEngine(EchoEngine::default().model().clone()))),
    };
    let ledger = Ledger::open(&ledger_path).unwrap();
    let mut orch = Orchestrator::new(
        Sanitizer::new(scanner.clone()),
        Arc::new(Egress::new(scanner, Some(ledger))),
        local,
        catalog,
        Keys::new(store),
        LocalClass::Small,
    );
    orch.reliability.base_delay = Duration::from_millis(5);
    orch.reliability.max_attempts = 1;
    orch.reliability.first_byte_timeout = first_byte;
    let gw = Gateway::new(
        Arc::new(orch),
        &ApiKey::new(TOKEN).unwrap(),
        Policy::Balanced,
        limits,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(gw.clone().serve(listener, std::future::pending()));
    Rig {
        base,
        gw,
        cloud,
        ledger_path,
        _dir: dir,
        http: reqwest::Client::new(),
    }
}

impl Rig {
    async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    async fn chat(&self, model: &str, prompt: &str, stream: bool) -> reqwest::Response {
        self.post(
            "/v1/chat/completions",
            json!({
                "model": model,
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": prompt}
                ],
                "stream": stream,
                "stream_options": {"include_usage": true},
            }),
        )
        .await
    }

    /// Waits until no request is in flight (runs of hung-up clients must stop).
    async fn settles(&self, within: Duration) -> bool {
        let t = Instant::now();
        while t.elapsed() < within {
            if self.gw.in_flight() == 0 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}

/// The `data:` payloads of an SSE body.
fn events(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .map(String::from)
        .collect()
}

async fn error_of(r: reqwest::Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let v: Value = r.json().await.unwrap();
    assert!(v["error"]["message"].is_string(), "{v}");
    assert!(v["error"]["type"].is_string(), "{v}");
    (status, v["error"].clone())
}

#[tokio::test]
async fn whole_and_streamed_completions_have_openai_shapes() {
    let r = rig(Local::Echo, Limits::default(), SECOND).await;
    let res = r.chat("lb", "Say the words back to me", false).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["x-tandem-route"], "cloud");
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["model"], "lb");
    assert_eq!(v["choices"][0]["message"]["role"], "assistant");
    assert_eq!(
        v["choices"][0]["message"]["content"],
        "Say the words back to me"
    );
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    let u = &v["usage"];
    assert!(u["completion_tokens"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(
        u["total_tokens"].as_u64(),
        Some(u["prompt_tokens"].as_u64().unwrap() + u["completion_tokens"].as_u64().unwrap())
    );
    assert_eq!(v["tandem"]["route"], "cloud");
    assert_eq!(v["tandem"]["agent"], "lb");
    assert!(!v["tandem"]["reasons"].as_array().unwrap().is_empty());
    // The client's system message reached the provider after Tandem's own.
    let sent = r.cloud.received();
    let msgs = sent[0]["messages"].as_array().unwrap();
    assert!(msgs.iter().any(|m| m["content"] == "Be brief."), "{msgs:?}");

    let res = r.chat("lb", "Stream these five words please", true).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    assert_eq!(res.headers()["x-tandem-route"], "cloud");
    let body = res.text().await.unwrap();
    let ev = events(&body);
    assert_eq!(ev.last().map(String::as_str), Some("[DONE]"), "{body}");
    let chunks: Vec<Value> = ev[..ev.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "Stream these five words please");
    let last = chunks
        .iter()
        .rev()
        .find(|c| !c["choices"].as_array().unwrap().is_empty())
        .unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["tandem"]["route"], "cloud");
    let usage = chunks.last().unwrap();
    assert!(usage["choices"].as_array().unwrap().is_empty());
    assert!(usage["usage"]["total_tokens"].as_u64().unwrap() > 0);
    assert!(chunks
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk"));
    assert!(r.settles(Duration::from_secs(2)).await);
}

#[tokio::test]
async fn a_planted_iban_leaves_masked_and_comes_back_restored() {
    let r = rig(Local::Echo, Limits::default(), SECOND).await;
    let prompt = format!("Please check the transfer to {IBAN} for the rent.");
    for stream in [false, true] {
        let res = r.chat("lb", &prompt, stream).await;
        assert_eq!(res.status(), 200);
        let answer = if stream {
            events(&res.text().await.unwrap())
                .iter()
                .filter_map(|e| serde_json::from_str::<Value>(e).ok())
                .filter_map(|c| {
                    c["choices"][0]["delta"]["content"]
                        .as_str()
                        .map(String::from)
                })
                .collect::<String>()
        } else {
            let v: Value = res.json().await.unwrap();
            assert_eq!(v["tandem"]["masked"], 1, "{v}");
            v["choices"][0]["message"]["content"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert!(answer.contains(IBAN), "{answer}");
    }
    let sent = r.cloud.received();
    assert_eq!(sent.len(), 2);
    for body in &sent {
        let raw = body.to_string();
        assert!(
            !raw.contains(IBAN) && !raw.contains("DE89370400440532013000"),
            "{raw}"
        );
        assert!(raw.contains("[IBAN_1]"), "{raw}");
    }
    // Both requests are in the ledger, as sent, with the masked payload.
    let ledger = Ledger::open(&r.ledger_path).unwrap();
    let rows = ledger.list(10).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|e| e
        .payload
        .as_deref()
        .is_some_and(|p| p.contains("[IBAN_1]") && !p.contains(IBAN))));
}

#[tokio::test]
async fn virtual_models_route_as_named() {
    let r = rig(Local::Echo, Limits::default(), SECOND).await;
    // tandem-local never leaves, even for a task the router would send out.
    let res = r
        .chat(
            "tandem-local",
            "Write a Rust function that parses dates",
            false,
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["x-tandem-route"], "local");
    // tandem-private with a private passage: the cloud sees nothing of it.
    let res = r
        .chat(
            "tandem-private",
            "I was diagnosed with diabetes in May; what should I eat?",
            false,
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["x-tandem-route"], "local");
    // tandem-auto decides: code for a small local model goes to the cloud.
    let res = r
        .chat(
            "tandem-auto",
            "Write a Rust function that parses RFC 3339 dates",
            false,
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["x-tandem-route"], "cloud");
    assert_eq!(r.cloud.received().len(), 1);

    let res = r
        .post(
            "/v1/tandem/query",
            json!({"query": "Write a Rust function that parses RFC 3339 dates"}),
        )
        .await;
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["route"], "cloud");
    assert_eq!(
        v["response"],
        "Write a Rust function that parses RFC 3339 dates"
    );
    assert!(v["reasons"].as_array().is_some_and(|r| !r.is_empty()));

    let res = r
        .http
        .get(format!("{}/v1/models", r.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let v: Value = res.json().await.unwrap();
    let ids: Vec<&str> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "tandem-auto",
            "tandem-local",
            "tandem-private",
            "lb",
            "lb-slow",
            "lb-broken"
        ]
    );
    let res = r
        .http
        .get(format!("{}/v1/models/lb-slow", r.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["owned_by"], "lb");
    let res = r
        .http
        .get(format!("{}/v1/models/lb-other", r.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn bad_input_gets_openai_errors() {
    let limits = Limits {
        max_body_bytes: 2048,
        ..Limits::default()
    };
    let r = rig(Local::Echo, limits, SECOND).await;
    let url = format!("{}/v1/chat/completions", r.base);
    let ok = json!({"model": "tandem-local", "messages": [{"role": "user", "content": "hi"}]});

    let res = r.http.post(&url).json(&ok).send().await.unwrap();
    let (s, e) = error_of(res).await;
    assert_eq!((s, e["code"].as_str()), (401, Some("gateway.unauthorized")));
    let res = r
        .http
        .post(&url)
        .bearer_auth("tdm-wrong")
        .json(&ok)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(res.headers()["www-authenticate"], "Bearer");
    let res = r
        .http
        .get(format!("{}/v1/models", r.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);

    let res = r
        .http
        .post(&url)
        .bearer_auth(TOKEN)
        .header("content-type", "text/plain")
        .body(ok.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(res).await.0, 415);
    let res = r
        .http
        .post(&url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body("{\"model\": \"tandem-local\", \"messages\": [")
        .send()
        .await
        .unwrap();
    let (s, e) = error_of(res).await;
    assert_eq!((s, e["code"].as_str()), (400, Some("gateway.bad_body")));
    let huge = json!({"model": "tandem-local", "messages": [{"role": "user", "content": "x".repeat(10_000)}]});
    let res = r.post("/v1/chat/completions", huge).await;
    assert_eq!(error_of(res).await.0, 413);
    // A chunked body (no Content-Length) over the cap is refused too.
    let chunks = futures::stream::iter((0..10).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1000])));
    let res = r
        .http
        .post(&url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(res).await.0, 413);

    for (body, status) in [
        (json!({"model": "tandem-local", "messages": []}), 400),
        (json!({"model": "tandem-local"}), 400),
        (
            json!({"model": "gpt-9", "messages": [{"role": "user", "content": "hi"}]}),
            404,
        ),
        (
            json!({"model": "tandem-local", "messages": [{"role": "assistant", "content": "hi"}]}),
            400,
        ),
        (
            json!({"model": "tandem-local", "messages": [{"role": "tool", "content": "hi"}]}),
            400,
        ),
        (
            json!({"model": "tandem-local", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}),
            400,
        ),
        (
            json!({"model": "tandem-local", "n": 2, "messages": [{"role": "user", "content": "hi"}]}),
            400,
        ),
        (
            json!({"model": "tandem-local", "max_tokens": 0, "messages": [{"role": "user", "content": "hi"}]}),
            400,
        ),
        (
            json!({"model": "tandem-local", "temperature": 7, "messages": [{"role": "user", "content": "hi"}]}),
            400,
        ),
        (json!({"query": ""}), 400),
    ] {
        let path = if body.get("query").is_some() {
            "/v1/tandem/query"
        } else {
            "/v1/chat/completions"
        };
        let res = r.post(path, body.clone()).await;
        assert_eq!(error_of(res).await.0, status, "{body}");
    }
    // Text parts are joined; unknown fields are ignored.
    let res = r
        .post(
            "/v1/chat/completions",
            json!({"model": "tandem-local", "user": "x", "tools": [], "messages": [{"role": "user", "content": [{"type": "text", "text": "two"}, {"type": "text", "text": "parts"}]}]}),
        )
        .await;
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "two\nparts");

    let res = r.http.get(&url).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(error_of(res).await.0, 405);
    let res = r
        .http
        .get(format!("{}/v2/nothing", r.base))
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(res).await.0, 404);
    assert!(r.settles(Duration::from_secs(1)).await);
}

#[tokio::test]
async fn full_queues_are_429_and_cloud_failures_502_504() {
    // The gateway's own cap: one request at a time, the second is told to retry.
    let limits = Limits {
        max_concurrent: 1,
        ..Limits::default()
    };
    let r = Arc::new(rig(Local::None, limits, SECOND).await);
    let slow = {
        let r = r.clone();
        tokio::spawn(async move {
            r.chat("lb-slow", "take your time", false)
                .await
                .status()
                .as_u16()
        })
    };
    let t = Instant::now();
    while r.gw.in_flight() == 0 && t.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let res = r.chat("lb", "me too", false).await;
    assert_eq!(res.headers()["retry-after"], "1");
    let (s, e) = error_of(res).await;
    assert_eq!(
        (s, e["code"].as_str(), e["type"].as_str()),
        (429, Some("gateway.busy"), Some("rate_limit_error"))
    );
    // The slow provider misses the 1 s first-byte timeout and no local model can take over.
    assert_eq!(slow.await.unwrap(), 504);
    let (s, e) = error_of(r.chat("lb-broken", "hello", false).await).await;
    assert_eq!((s, e["code"].as_str()), (502, Some("cloud.server_error")));
    // A streamed request that fails after the headers ends with an error event and [DONE].
    let body = r
        .chat("lb-broken", "hello", true)
        .await
        .text()
        .await
        .unwrap();
    let ev = events(&body);
    assert!(ev.iter().any(|e| e.contains("\"error\"")), "{body}");
    assert_eq!(ev.last().map(String::as_str), Some("[DONE]"));
    // Local only with no local model: 503.
    assert_eq!(
        error_of(r.chat("tandem-local", "hi", false).await).await.0,
        503
    );

    // The local engine's queue full is the client's 429 too.
    let r = rig(Local::Full, Limits::default(), SECOND).await;
    let (s, e) = error_of(r.chat("tandem-local", "hi", false).await).await;
    assert_eq!((s, e["code"].as_str()), (429, Some("local.queue_full")));
    assert!(r.settles(Duration::from_secs(1)).await);
}

#[tokio::test]
async fn slow_clients_and_hang_ups_free_everything() {
    let limits = Limits {
        header_timeout: Duration::from_millis(300),
        body_timeout: Duration::from_millis(300),
        max_connections: 3,
        ..Limits::default()
    };
    let r = rig(Local::Echo, limits, Duration::from_secs(10)).await;
    let addr = r.base.trim_start_matches("http://").to_string();

    // Slowloris: half the headers, then nothing. The connection is closed.
    let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
    s.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(3), s.read_to_end(&mut buf)).await;
    assert!(
        read.is_ok(),
        "a client that never finished its headers kept its connection"
    );

    // Headers promise a body that never comes: 408.
    let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"model\"");
    s.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(3), s.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&buf[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    drop(s);

    // A client that hangs up mid-stream: the run stops and its slot comes back before the slow
    // provider would have answered (3 s).
    let res = r.chat("lb-slow", "wait for me", true).await;
    assert_eq!(res.status(), 200);
    let mut body = res.bytes_stream();
    use futures::StreamExt;
    let first = body.next().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("\"role\":\"assistant\""));
    assert_eq!(r.gw.in_flight(), 1);
    let t = Instant::now();
    drop(body);
    assert!(
        r.settles(Duration::from_secs(2)).await,
        "the run outlived its client"
    );
    assert!(t.elapsed() < Duration::from_millis(2500));

    // A non-streamed request whose client gives up: the same.
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let gone = client
        .post(format!("{}/v1/chat/completions", r.base))
        .bearer_auth(TOKEN)
        .json(&json!({"model": "lb-slow", "messages": [{"role": "user", "content": "x"}]}))
        .send()
        .await;
    assert!(gone.is_err());
    assert!(
        r.settles(Duration::from_secs(2)).await,
        "the run outlived its client"
    );

    // The connection cap: idle sockets beyond it are closed at once, and the gateway serves
    // again when they go.
    let t = Instant::now();
    while r.gw.connections() > 0 && t.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _idle: Vec<_> =
        futures::future::join_all((0..3).map(|_| tokio::net::TcpStream::connect(&addr))).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut extra = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut one = [0u8; 1];
    let n = tokio::time::timeout(Duration::from_secs(2), extra.read(&mut one)).await;
    assert!(
        matches!(n, Ok(Ok(0)) | Ok(Err(_))),
        "a connection over the cap was kept: {n:?}"
    );
    drop(_idle);
    // Idle sockets are dropped by the header timeout as well; then requests work again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let res = r.chat("tandem-local", "still here", false).await;
    assert_eq!(res.status(), 200);
}
