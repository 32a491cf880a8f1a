//! The OpenAI-compatible client against a real HTTP server on 127.0.0.1 that speaks the wire
//! format, streaming included: what real providers send (keep-alive comments, CRLF, empty
//! finish reasons, usage in the last chunk, unknown fields) and how they fail.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, Response, StatusCode};
use axum::routing::post;
use futures::StreamExt;
use tandem_core::cloud::openai::OpenAiCompatible;
use tandem_core::cloud::{ChatMessage, CloudError, CloudEvent, CloudRequest, Usage};

const KEY: &str = "sk-test-loopback-0123456789";

/// Behaviour is chosen by the request's `model`.
async fn chat(headers: HeaderMap, body: String) -> Response<Body> {
    let req: serde_json::Value = serde_json::from_str(&body).unwrap();
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if auth != format!("Bearer {KEY}") {
        return Response::builder()
            .status(401)
            .body(Body::from(
                r#"{"error":{"message":"Incorrect API key provided"}}"#,
            ))
            .unwrap();
    }
    let sse = |body: String| {
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from(body))
            .unwrap()
    };
    match req["model"].as_str().unwrap_or("") {
        "normal" => sse(concat!(
            ": keep-alive\r\n\r\n",
            "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}],\"system_fingerprint\":\"x\"}\r\n\r\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":\"\"}],\"unknown\":{\"a\":1}}\r\n\r\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\", world\"},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15}}\n\n",
            "data: [DONE]\n\n"
        ).to_string()),
        "malformed" => sse(concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n",
            "data: {not json\n\n",
            "garbage line without a field\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"
        ).to_string()),
        "cut" => sse("data: {\"choices\":[{\"delta\":{\"content\":\"partial\"}}]}\n\n".to_string()),
        "big" => {
            let mut s = String::new();
            for i in 0..20_000 {
                s.push_str(&format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"w{i} \"}}}}]}}\n\n"));
            }
            s.push_str("data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n");
            sse(s)
        }
        "limited" => Response::builder().status(429).header("retry-after", "7").body(Body::from("slow down")).unwrap(),
        "broken" => Response::builder().status(StatusCode::SERVICE_UNAVAILABLE).body(Body::empty()).unwrap(),
        "whole" => Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(r#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"Berlin"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1}}"#))
            .unwrap(),
        other => Response::builder().status(400).body(Body::from(format!(r#"{{"error":{{"message":"model {other} does not exist"}}}}"#))).unwrap(),
    }
}

async fn server() -> String {
    let app = axum::Router::new().route("/v1/chat/completions", post(chat));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

pub(crate) fn request(model: &str) -> CloudRequest {
    CloudRequest {
        model: model.into(),
        messages: vec![ChatMessage::user("hi")],
        max_tokens: Some(16),
        temperature: None,
    }
}

async fn collect(
    p: &OpenAiCompatible,
    model: &str,
) -> (String, Vec<Result<CloudEvent, CloudError>>) {
    let mut s = p.stream(&request(model), KEY).await.unwrap();
    let mut text = String::new();
    let mut tail = Vec::new();
    while let Some(ev) = s.next().await {
        match &ev {
            Ok(CloudEvent::Delta { text: t }) => text.push_str(t),
            _ => tail.push(ev),
        }
    }
    (text, tail)
}

#[tokio::test]
async fn streams_what_real_providers_send() {
    let p = OpenAiCompatible::new("loopback", &server().await).unwrap();
    assert!(
        p.endpoint().as_str().ends_with("/v1/chat/completions"),
        "{}",
        p.endpoint()
    );
    let (text, tail) = collect(&p, "normal").await;
    assert_eq!(text, "Hello, world");
    assert_eq!(
        tail,
        vec![Ok(CloudEvent::Done {
            finish_reason: Some("stop".into()),
            usage: Some(Usage {
                prompt_tokens: 12,
                completion_tokens: 3
            })
        })]
    );
    let (text, tail) = collect(&p, "malformed").await;
    assert_eq!(text, "ab");
    assert!(matches!(tail.as_slice(), [Ok(CloudEvent::Done { .. })]));
    let (text, tail) = collect(&p, "big").await;
    assert_eq!(text.split_whitespace().count(), 20_000);
    assert!(
        matches!(tail.as_slice(), [Ok(CloudEvent::Done { finish_reason: Some(f), .. })] if f == "length")
    );
}

#[tokio::test]
async fn a_cut_stream_is_an_error_after_the_text_it_delivered() {
    let p = OpenAiCompatible::new("loopback", &server().await).unwrap();
    let (text, tail) = collect(&p, "cut").await;
    assert_eq!(text, "partial");
    assert!(
        matches!(tail.as_slice(), [Err(CloudError::StreamCut { .. })]),
        "{tail:?}"
    );
}

#[tokio::test]
async fn failures_are_typed_and_never_show_the_key() {
    let url = server().await;
    let p = OpenAiCompatible::new("loopback", &url).unwrap();
    let err = p
        .stream(&request("normal"), "sk-wrong-key")
        .await
        .err()
        .unwrap();
    assert_eq!(
        err,
        CloudError::KeyRejected {
            provider: "loopback".into(),
            status: 401
        }
    );
    assert!(err.to_string().contains("key rejected by loopback"));
    assert!(!err.to_string().contains("sk-wrong-key"));
    assert_eq!(
        p.stream(&request("limited"), KEY).await.err().unwrap(),
        CloudError::RateLimited {
            provider: "loopback".into(),
            retry_after: Some(Duration::from_secs(7))
        }
    );
    assert_eq!(
        p.stream(&request("broken"), KEY).await.err().unwrap(),
        CloudError::Server {
            provider: "loopback".into(),
            status: 503
        }
    );
    match p.stream(&request("nope"), KEY).await.err().unwrap() {
        CloudError::BadRequest {
            status: 400,
            message,
            ..
        } => assert!(message.contains("does not exist")),
        other => panic!("{other:?}"),
    }
    // Nothing listening: a connection error, quickly.
    let dead = OpenAiCompatible::new("nowhere", "http://127.0.0.1:9/v1").unwrap();
    assert!(matches!(
        dead.stream(&request("normal"), KEY).await.err().unwrap(),
        CloudError::Connect { .. }
    ));
    assert!(matches!(
        OpenAiCompatible::new("bad", "not a url"),
        Err(CloudError::Config(_))
    ));
}

#[tokio::test]
async fn non_streaming_replies_are_read_whole() {
    let p = OpenAiCompatible::new("loopback", &(server().await + "/")).unwrap();
    let (text, finish, usage) = p.complete(&request("whole"), KEY).await.unwrap();
    assert_eq!((text.as_str(), finish.as_deref()), ("Berlin", Some("stop")));
    assert_eq!(
        usage,
        Some(Usage {
            prompt_tokens: 9,
            completion_tokens: 1
        })
    );
}

mod reliability {
    //! Retries, Retry-After, the circuit breaker and timeouts, against a server that counts the
    //! requests it receives.
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use axum::body::Body;
    use axum::extract::State;
    use axum::http::Response;
    use axum::routing::post;
    use futures::StreamExt;
    use tandem_core::cloud::openai::OpenAiCompatible;
    use tandem_core::cloud::reliable::{Policy, Reliable};
    use tandem_core::cloud::{CloudError, CloudEvent};

    use super::{request, KEY};

    type Hits = Arc<Mutex<HashMap<String, u32>>>;

    const OK: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"fine\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

    async fn chat(State(hits): State<Hits>, body: String) -> Response<Body> {
        let req: serde_json::Value = serde_json::from_str(&body).unwrap();
        let model = req["model"].as_str().unwrap_or("").to_string();
        let n = {
            let mut h = hits.lock().unwrap();
            let n = h.entry(model.clone()).or_insert(0);
            *n += 1;
            *n
        };
        let status = |s: u16| Response::builder().status(s).body(Body::empty()).unwrap();
        let ok = || {
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from(OK))
                .unwrap()
        };
        match (model.as_str(), n) {
            ("flaky", 1) => status(500),
            ("flaky", _) => ok(),
            ("limited-once", 1) => Response::builder()
                .status(429)
                .header("retry-after", "1")
                .body(Body::empty())
                .unwrap(),
            ("limited-once", _) => ok(),
            ("down", _) => status(503),
            ("slow", _) => {
                tokio::time::sleep(Duration::from_secs(3)).await;
                ok()
            }
            ("stall", _) => {
                let first = futures::stream::once(async {
                    Ok::<_, std::io::Error>(bytes::Bytes::from(
                        "data: {\"choices\":[{\"delta\":{\"content\":\"partial\"}}]}\n\n",
                    ))
                });
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from_stream(first.chain(futures::stream::pending())))
                    .unwrap()
            }
            _ => status(400),
        }
    }

    async fn server() -> (String, Hits) {
        let hits: Hits = Arc::default();
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(chat))
            .with_state(hits.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (format!("http://{addr}/v1"), hits)
    }

    fn quick() -> Policy {
        Policy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(2),
            first_byte_timeout: Duration::from_millis(500),
            idle_timeout: Duration::from_millis(300),
            breaker_threshold: 2,
            breaker_cooldown: Duration::from_secs(60),
            max_concurrent: 2,
        }
    }

    async fn text_of(r: &Reliable, model: &str) -> Result<String, CloudError> {
        let mut s = r.stream(&request(model), KEY).await?;
        let mut text = String::new();
        while let Some(ev) = s.next().await {
            if let CloudEvent::Delta { text: t } = ev? {
                text.push_str(&t);
            }
        }
        Ok(text)
    }

    #[tokio::test]
    async fn server_errors_and_rate_limits_are_retried() {
        let (url, hits) = server().await;
        let r = Reliable::new(OpenAiCompatible::new("loopback", &url).unwrap(), quick());
        assert_eq!(text_of(&r, "flaky").await.unwrap(), "fine");
        assert_eq!(text_of(&r, "limited-once").await.unwrap(), "fine");
        let h = hits.lock().unwrap();
        assert_eq!((h["flaky"], h["limited-once"]), (2, 2));
    }

    #[tokio::test]
    async fn a_failing_provider_opens_the_breaker() {
        let (url, hits) = server().await;
        let r = Reliable::new(OpenAiCompatible::new("loopback", &url).unwrap(), quick());
        assert!(matches!(
            text_of(&r, "down").await,
            Err(CloudError::Unavailable { .. } | CloudError::Server { status: 503, .. })
        ));
        let before = hits.lock().unwrap()["down"];
        assert_eq!(before, 2, "the breaker opened after two failures");
        let err = text_of(&r, "down").await.unwrap_err();
        assert!(matches!(err, CloudError::Unavailable { .. }), "{err:?}");
        assert_eq!(
            hits.lock().unwrap()["down"],
            before,
            "an open breaker sends nothing"
        );
    }

    #[tokio::test]
    async fn timeouts_before_and_during_a_reply() {
        let (url, hits) = server().await;
        let one = Policy {
            max_attempts: 1,
            ..quick()
        };
        let r = Reliable::new(OpenAiCompatible::new("loopback", &url).unwrap(), one);
        assert!(matches!(
            text_of(&r, "slow").await,
            Err(CloudError::Timeout {
                phase: "first byte",
                ..
            })
        ));
        // Part of the reply arrived, then silence: an idle timeout, and no silent re-send.
        let mut s = r.stream(&request("stall"), KEY).await.unwrap();
        assert_eq!(
            s.next().await.unwrap().unwrap(),
            CloudEvent::Delta {
                text: "partial".into()
            }
        );
        assert!(matches!(
            s.next().await.unwrap(),
            Err(CloudError::Timeout {
                phase: "idle stream",
                ..
            })
        ));
        assert!(s.next().await.is_none());
        assert_eq!(hits.lock().unwrap()["stall"], 1);
    }
}
