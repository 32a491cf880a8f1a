//! Both wire formats (OpenAI-compatible Chat Completions, Anthropic Messages) against a real
//! HTTP server on 127.0.0.1 that speaks them, streaming included: what real providers send
//! (keep-alive comments, CRLF, empty finish reasons, usage last, unknown fields, pings) and how
//! they fail.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tandem_core::cloud::agents::Agent;
use tandem_core::cloud::anthropic::Anthropic;
use tandem_core::cloud::loopback::Loopback;
use tandem_core::cloud::openai::OpenAiCompatible;
use tandem_core::cloud::reliable::{Policy, Reliable};
use tandem_core::cloud::{
    self, CloudError, CloudEvent, CloudProvider, EventStream, Role, Usage, Wire,
};
use tandem_core::egress::{Draft, Egress, EgressError, SanitizedRequest, Sanitizer, Turn};
use tandem_core::sensitivity::{Pseudonymizer, Scanner, UserRules};

const KEY: &str = "sk-test-loopback-0123456789";
const WIRES: [Wire; 2] = [Wire::Openai, Wire::Anthropic];

async fn server() -> Loopback {
    Loopback::start(KEY).await.unwrap()
}

fn client(wire: Wire, lb: &Loopback) -> Arc<dyn CloudProvider> {
    cloud::connect(wire, "loopback", &lb.base_url()).unwrap()
}

/// Requests are built the only way hosts can: through the sanitizer.
pub(crate) fn request(model: &str) -> SanitizedRequest {
    sanitized(model, None, None, Some(16))
}

fn sanitized(
    model: &str,
    system: Option<&str>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
) -> SanitizedRequest {
    let agent = Agent::new("loopback", "loopback", model);
    let draft = Draft {
        task: "test".into(),
        agent,
        system: system.map(String::from),
        turns: vec![Turn::new(Role::User, "hi")],
        max_tokens,
        temperature,
        tools: Default::default(),
        reasons: vec![],
        decisions: Default::default(),
    };
    let scanner = Arc::new(Scanner::rules_only(&UserRules::default()).unwrap());
    Sanitizer::new(scanner)
        .sanitize(draft, &mut Pseudonymizer::new())
        .unwrap()
}

/// Sends the way everything sends: through the egress guard (here with no ledger and no
/// retries). Nothing outside it can reach a provider.
pub(crate) async fn send_req(
    r: &Reliable,
    req: SanitizedRequest,
    key: &str,
) -> Result<EventStream, CloudError> {
    let scanner = Arc::new(Scanner::rules_only(&UserRules::default()).unwrap());
    match Egress::new(scanner, None).send(req, r, key).await {
        Ok(s) => Ok(s),
        Err(EgressError::Cloud(e)) => Err(e),
        Err(other) => panic!("the egress guard refused: {other}"),
    }
}

async fn send(
    p: &Arc<dyn CloudProvider>,
    model: &str,
    key: &str,
) -> Result<EventStream, CloudError> {
    let once = Policy {
        max_attempts: 1,
        ..Policy::default()
    };
    send_req(&Reliable::new(p.clone(), once), request(model), key).await
}

async fn collect(
    p: &Arc<dyn CloudProvider>,
    model: &str,
) -> (String, Vec<Result<CloudEvent, CloudError>>) {
    let mut s = send(p, model, KEY).await.unwrap();
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
    let lb = server().await;
    assert!(OpenAiCompatible::new("x", &lb.base_url())
        .unwrap()
        .endpoint()
        .as_str()
        .ends_with("/v1/chat/completions"));
    assert!(Anthropic::new("x", &(lb.base_url() + "/"))
        .unwrap()
        .endpoint()
        .as_str()
        .ends_with("/v1/messages"));
    for wire in WIRES {
        let p = client(wire, &lb);
        let (text, tail) = collect(&p, "normal").await;
        assert_eq!(text, "Hello, world", "{wire:?}");
        let finish = if wire == Wire::Openai {
            "stop"
        } else {
            "end_turn"
        };
        assert_eq!(
            tail,
            vec![Ok(CloudEvent::Done {
                finish_reason: Some(finish.into()),
                usage: Some(Usage {
                    prompt_tokens: 12,
                    completion_tokens: 2
                }),
                tool_calls: Vec::new(),
            })],
            "{wire:?}"
        );
        let (text, tail) = collect(&p, "malformed").await;
        assert_eq!(text, "Hello, world", "{wire:?}");
        assert!(
            matches!(tail.as_slice(), [Ok(CloudEvent::Done { .. })]),
            "{wire:?} {tail:?}"
        );
        let (text, tail) = collect(&p, "big").await;
        assert_eq!(text.split_whitespace().count(), 20_000, "{wire:?}");
        assert!(
            matches!(
                tail.as_slice(),
                [Ok(CloudEvent::Done {
                    finish_reason: Some(_),
                    ..
                })]
            ),
            "{wire:?}"
        );
        let (text, _) = collect(&p, "echo").await;
        assert_eq!(text, "hi");
    }
}

#[tokio::test]
async fn anthropic_requests_carry_the_system_prompt_and_max_tokens() {
    let lb = server().await;
    let p = client(Wire::Anthropic, &lb);
    let req = sanitized("normal", Some("be brief"), Some(0.2), None);
    let once = Policy {
        max_attempts: 1,
        ..Policy::default()
    };
    let mut s = send_req(&Reliable::new(p.clone(), once), req, KEY)
        .await
        .unwrap();
    while s.next().await.is_some() {}
    let body = &lb.received()[0];
    assert_eq!(body["system"], "be brief");
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["temperature"], 0.2);
}

#[tokio::test]
async fn a_cut_stream_is_an_error_after_the_text_it_delivered() {
    let lb = server().await;
    for wire in WIRES {
        let (text, tail) = collect(&client(wire, &lb), "cut").await;
        assert_eq!(text, "Hello, world");
        assert!(
            matches!(tail.as_slice(), [Err(CloudError::StreamCut { .. })]),
            "{wire:?} {tail:?}"
        );
    }
    // Anthropic can report trouble inside a 200 stream: typed, and retryable as a server error.
    let (text, tail) = collect(&client(Wire::Anthropic, &lb), "overloaded").await;
    assert_eq!(text, "Hello");
    assert!(
        matches!(tail.as_slice(), [Err(e @ CloudError::Server { status: 529, .. })] if e.retryable()),
        "{tail:?}"
    );
}

#[tokio::test]
async fn failures_are_typed_and_never_show_the_key() {
    let lb = server().await;
    for wire in WIRES {
        let p = client(wire, &lb);
        let err = send(&p, "normal", "sk-wrong-key").await.err().unwrap();
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
            send(&p, "limited", KEY).await.err().unwrap(),
            CloudError::RateLimited {
                provider: "loopback".into(),
                retry_after: Some(Duration::from_secs(7))
            }
        );
        assert_eq!(
            send(&p, "broken", KEY).await.err().unwrap(),
            CloudError::Server {
                provider: "loopback".into(),
                status: 503
            }
        );
        match send(&p, "nope", KEY).await.err().unwrap() {
            CloudError::BadRequest {
                status: 404,
                message,
                ..
            } => assert!(message.contains("does not exist")),
            other => panic!("{other:?}"),
        }
        // Nothing listening: a connection error, quickly.
        let dead = cloud::connect(wire, "nowhere", "http://127.0.0.1:9/v1").unwrap();
        assert!(matches!(
            send(&dead, "normal", KEY).await.err().unwrap(),
            CloudError::Connect { .. }
        ));
        assert!(matches!(
            cloud::connect(wire, "bad", "not a url"),
            Err(CloudError::Config(_))
        ));
        // Plain http leaves this machine only over TLS: refused for other hosts.
        assert!(matches!(
            cloud::connect(wire, "lan", "http://192.168.1.20:8000/v1"),
            Err(CloudError::Config(_))
        ));
        assert!(cloud::connect(wire, "local", "http://localhost:11434/v1").is_ok());
    }
    assert_eq!(
        send(&client(Wire::Openai, &lb), "overloaded", KEY)
            .await
            .err()
            .unwrap(),
        CloudError::Server {
            provider: "loopback".into(),
            status: 529
        }
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
    use tandem_core::cloud::CloudProvider;
    use tandem_core::cloud::{CloudError, CloudEvent};

    use super::{request, send_req, KEY};

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

    fn provider(url: &str) -> Arc<dyn CloudProvider> {
        Arc::new(OpenAiCompatible::new("loopback", url).unwrap())
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
        let mut s = send_req(r, request(model), KEY).await?;
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
        let r = Reliable::new(provider(&url), quick());
        assert_eq!(text_of(&r, "flaky").await.unwrap(), "fine");
        assert_eq!(text_of(&r, "limited-once").await.unwrap(), "fine");
        let h = hits.lock().unwrap();
        assert_eq!((h["flaky"], h["limited-once"]), (2, 2));
    }

    #[tokio::test]
    async fn a_failing_provider_opens_the_breaker() {
        let (url, hits) = server().await;
        let r = Reliable::new(provider(&url), quick());
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
        let r = Reliable::new(provider(&url), one);
        assert!(matches!(
            text_of(&r, "slow").await,
            Err(CloudError::Timeout {
                phase: "first byte",
                ..
            })
        ));
        // Part of the reply arrived, then silence: an idle timeout, and no silent re-send.
        let mut s = send_req(&r, request("stall"), KEY).await.unwrap();
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

    #[tokio::test]
    async fn dropping_a_stream_cancels_it_and_frees_its_slot() {
        let (url, hits) = server().await;
        let one = Policy {
            max_concurrent: 1,
            ..quick()
        };
        let r = Reliable::new(provider(&url), one);
        let mut s = send_req(&r, request("stall"), KEY).await.unwrap();
        assert!(s.next().await.unwrap().is_ok());
        // The only slot is taken: a second request waits.
        assert!(tokio::time::timeout(
            Duration::from_millis(200),
            send_req(&r, request("flaky"), KEY)
        )
        .await
        .is_err());
        drop(s);
        assert_eq!(text_of(&r, "limited-once").await.unwrap(), "fine");
        assert_eq!(hits.lock().unwrap()["stall"], 1);
    }
}
