//! Cloud client speed on loopback, through the one door (`Egress::send`: pause switch,
//! last-line scan, the provider's client; no ledger): SSE decoding throughput (events/s, one
//! reply of 200,000 events), the latency the door and client add over a raw reqwest request
//! (p50 of 500 small streamed requests), and the Anthropic event stream's throughput. Peers
//! measured in the same run: reqwest reading the same bytes, and reqwest posting the same JSON.
//!
//!     cargo bench --profile dev --workspace --bench cloud

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Response;
use axum::routing::post;
use futures::StreamExt;
use std::sync::Arc;
use tandem_core::cloud::openai::OpenAiCompatible;

use tandem_core::cloud::agents::Agent;
use tandem_core::cloud::reliable::{Policy, Reliable};
use tandem_core::cloud::{CloudProvider, EventStream, Role};
use tandem_core::egress::{Draft, Egress, SanitizedRequest, Sanitizer, Turn};
use tandem_core::sensitivity::{Pseudonymizer, Scanner, UserRules};

/// A request built the only way hosts can: through the sanitizer.
fn request(model: &str) -> SanitizedRequest {
    let agent = Agent::new("loopback", "loopback", model);
    let draft = Draft {
        task: "bench".into(),
        agent,
        system: None,
        turns: vec![Turn::new(Role::User, "hi")],
        max_tokens: None,
        temperature: None,
        tools: Default::default(),
        reasons: vec![],
        decisions: Default::default(),
    };
    let scanner = Arc::new(Scanner::rules_only(&UserRules::default()).expect("scanner"));
    Sanitizer::new(scanner)
        .sanitize(draft, &mut Pseudonymizer::new())
        .expect("sanitize")
}

/// Sends `req` the only way anything can: through the egress guard.
async fn send(egress: &Egress, r: &Reliable, req: SanitizedRequest) -> EventStream {
    egress.send(req, r, "k").await.expect("send")
}

const EVENTS: usize = 200_000;

const SMALL: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

fn sse_body() -> String {
    let mut s = String::with_capacity(EVENTS * 64);
    for i in 0..EVENTS {
        s.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"t{i} \"}}}}]}}\n\n"
        ));
    }
    s.push_str(
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    );
    s
}

async fn chat(body: String) -> Response<Body> {
    let req: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    if req["model"] == "small" {
        return Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from(SMALL))
            .unwrap();
    }
    if req["stream"].as_bool() == Some(true) {
        static BODY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let b = BODY.get_or_init(sse_body).clone();
        return Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from(b))
            .unwrap();
    }
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#))
        .unwrap()
}

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
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
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, axum::Router::new().route("/v1/chat/completions", post(chat))).await });
        let base = format!("http://{addr}/v1");
        let url = format!("{base}/chat/completions");
        let p: Arc<dyn CloudProvider> = Arc::new(OpenAiCompatible::new("loopback", &base).expect("provider"));
        let p = Reliable::new(p, Policy::default());
        let scanner = Arc::new(Scanner::rules_only(&UserRules::default()).expect("scanner"));
        let egress = Egress::new(scanner, None);
        let raw = reqwest::Client::new();

        // Warm-up, then SSE throughput through Tandem's decoder vs reqwest reading the bytes.
        let _ = raw.post(&url).body(r#"{"stream":true}"#).send().await.expect("warm").bytes().await;
        let t = Instant::now();
        let mut s = send(&egress, &p, request("m")).await;
        let mut n = 0usize;
        while let Some(ev) = s.next().await {
            ev.expect("event");
            n += 1;
        }
        let tandem = t.elapsed();
        let t = Instant::now();
        let mut b = raw.post(&url).body(r#"{"stream":true}"#).send().await.expect("raw").bytes_stream();
        let mut bytes = 0usize;
        while let Some(c) = b.next().await {
            bytes += c.expect("chunk").len();
        }
        let peer = t.elapsed();
        println!(
            "SSE: {} events in {:.0} ms = {:.0} events/s through Tandem's client; reqwest reading the same {} MB: {:.0} ms (ratio {:.2})",
            n - 1,
            tandem.as_secs_f64() * 1e3,
            (n - 1) as f64 / tandem.as_secs_f64(),
            bytes / 1_000_000,
            peer.as_secs_f64() * 1e3,
            peer.as_secs_f64() / tandem.as_secs_f64()
        );

        // Added latency: a short streamed reply through the door vs a raw reqwest post of the
        // same JSON reading the same bytes. The sanitized request is made outside the timing
        // (the plan makes it before sending).
        let body = serde_json::json!({"model": "small", "messages": [{"role": "user", "content": "hi"}], "stream": true});
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for i in 0..1000 {
            let req = request("small");
            let t = Instant::now();
            let mut s = send(&egress, &p, req).await;
            while let Some(ev) = s.next().await {
                ev.expect("event");
            }
            let a = t.elapsed();
            let t = Instant::now();
            let v = raw.post(&url).json(&body).send().await.expect("raw").bytes().await.expect("bytes");
            std::hint::black_box(v);
            let b = t.elapsed();
            if i >= 500 {
                ours.push(a);
                theirs.push(b);
            }
        }
        let (a, b) = (p50(ours), p50(theirs));
        println!(
            "short streamed request on loopback: through Tandem's door p50 {:?}, raw reqwest p50 {:?}, added {:?}",
            a,
            b,
            a.saturating_sub(b)
        );

        // The Anthropic wire format: typed events (two SSE fields each) from the loopback
        // provider's 20,000-delta reply, ten times.
        let lb = tandem_core::cloud::loopback::Loopback::start("k").await.expect("loopback");
        let a: Arc<dyn CloudProvider> = Arc::new(tandem_core::cloud::anthropic::Anthropic::new("loopback", &lb.base_url()).expect("provider"));
        let a = Reliable::new(a, Policy::default());
        let t = Instant::now();
        let mut n = 0usize;
        for _ in 0..10 {
            let mut s = send(&egress, &a, request("big")).await;
            while let Some(ev) = s.next().await {
                ev.expect("event");
                n += 1;
            }
        }
        let took = t.elapsed();
        println!(
            "SSE (Anthropic events): {} deltas in {:.0} ms = {:.0} deltas/s",
            n - 10,
            took.as_secs_f64() * 1e3,
            (n - 10) as f64 / took.as_secs_f64()
        );
    });
}
