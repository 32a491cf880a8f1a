//! The real small model through the engine actor: streaming, metrics, determinism,
//! cancellation, the bounded queue, load events, and no network while loading.

use std::sync::atomic::Ordering;

use futures::StreamExt;
use tandem_core::events::{Event, EventBus};
use tandem_core::local::{
    EngineOptions, GenerateRequest, LocalEngine, LocalError, MistralEngine, StreamEvent,
};

use crate::common;

fn req(prompt: &str, max_tokens: usize) -> GenerateRequest {
    let mut r = GenerateRequest::prompt(prompt);
    r.max_tokens = max_tokens;
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_tokens_with_metrics() {
    let engine = common::engine().await;
    let mut stream = engine
        .generate(req("What is the capital of Germany?", 24))
        .unwrap();
    let mut pieces = Vec::new();
    let mut done = None;
    while let Some(ev) = stream.next().await {
        match ev.unwrap() {
            StreamEvent::Token { text } => pieces.push(text),
            StreamEvent::Done { metrics } => done = Some(metrics),
        }
    }
    let m = done.expect("a Done event ends the stream");
    assert!(
        pieces.len() >= 2,
        "tokens arrive one by one, got {pieces:?}"
    );
    let text: String = pieces.concat();
    assert!(
        text.to_lowercase().contains("berlin"),
        "the model answers: {text:?}"
    );
    assert!(m.prompt_tokens > 5, "{m:?}");
    assert!(
        m.completion_tokens >= pieces.len().min(24) && m.completion_tokens <= 24,
        "{m:?}"
    );
    assert!(
        m.ttft_ms > 0.0
            && m.wall_ms >= m.ttft_ms
            && m.decode_tok_per_s > 0.0
            && m.prompt_tok_per_s > 0.0
    );
    assert!(m.cpu_ms.unwrap() > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn greedy_generation_is_deterministic() {
    let engine = common::engine().await;
    let (a, _) = engine
        .generate(req("Name three colours.", 16))
        .unwrap()
        .collect_text()
        .await
        .unwrap();
    let (b, _) = engine
        .generate(req("Name three colours.", 16))
        .unwrap()
        .collect_text()
        .await
        .unwrap();
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_cancels_generation() {
    let engine = common::engine().await;
    let mut long = engine
        .generate(req("Write a very long story about the sea.", 4000))
        .unwrap();
    for _ in 0..3 {
        assert!(matches!(
            long.next().await,
            Some(Ok(StreamEvent::Token { .. }))
        ));
    }
    drop(long);
    // If the 4000-token generation went on, this request would wait minutes for it
    // (about 30 tokens/s here); cancelled, it starts at once. The bound is 20x loose.
    let started = std::time::Instant::now();
    let (text, m) = engine
        .generate(req("Say hello.", 8))
        .unwrap()
        .collect_text()
        .await
        .unwrap();
    assert!(!text.is_empty());
    assert!(m.completion_tokens <= 8);
    assert!(
        started.elapsed().as_secs() < 30,
        "the cancelled generation kept the engine busy"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_queue_refuses_instead_of_waiting() {
    // An engine of its own: filling the shared one would starve the other tests.
    let (name, path) = common::default_model();
    let mut opts = EngineOptions::new(name, path);
    opts.queue = 2;
    let engine = MistralEngine::load(opts, EventBus::new()).await.unwrap();
    let mut streams = Vec::new();
    let mut refused = 0;
    for _ in 0..8 {
        match engine.generate(req("Count to one hundred.", 2000)) {
            Ok(s) => streams.push(s),
            Err(LocalError::QueueFull(n)) => {
                assert_eq!(n, 2);
                refused += 1;
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }
    // Two queued plus at most one already taken by the engine.
    assert!((5..=6).contains(&refused), "{refused} refused");
    drop(streams);
    // Cancelled requests leave the queue as the engine reaches them (skipped, not
    // run), so it soon accepts and serves again.
    let mut accepted = None;
    for _ in 0..100 {
        match engine.generate(req("Say hello.", 4)) {
            Ok(s) => {
                accepted = Some(s);
                break;
            }
            Err(LocalError::QueueFull(_)) => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }
    let (text, _) = accepted
        .expect("the queue drained")
        .collect_text()
        .await
        .unwrap();
    assert!(!text.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_prompts_are_rejected() {
    let engine = common::engine().await;
    assert!(matches!(
        engine.generate(req("   ", 8)),
        Err(LocalError::BadRequest(_))
    ));
    assert!(matches!(
        engine.generate(req("hi", 0)),
        Err(LocalError::BadRequest(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loading_emits_events_and_touches_no_network() {
    common::trap_network();
    let bus = EventBus::new();
    let mut rx = bus.subscribe();
    let (name, path) = common::default_model();
    let engine = MistralEngine::load(EngineOptions::new(&name, path), bus)
        .await
        .unwrap();
    let info = engine.model().clone();
    assert_eq!(info.architecture, "llama");
    assert_eq!(info.device, "cpu");
    assert_eq!(info.dtype, "f32");
    let (text, _) = engine
        .generate(req("Hi", 4))
        .unwrap()
        .collect_text()
        .await
        .unwrap();
    assert!(!text.is_empty());

    let mut events = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        events.push(ev);
    }
    assert!(
        matches!(events.first(), Some(Event::ModelLoadStarted { .. })),
        "{events:?}"
    );
    assert!(
        matches!(events.last(), Some(Event::ModelLoaded { seconds, .. }) if *seconds > 0.0),
        "{events:?}"
    );
    assert_eq!(
        common::NETWORK_TOUCHES.load(Ordering::SeqCst),
        0,
        "loading or generating reached for the network"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_request_continues_its_text_without_the_chat_template() {
    let engine = common::engine().await;
    let question = "The following are multiple choice questions (with answers).\n\n\
                    Which number is prime?\nA. 4\nB. 5\nC. 6\nD. 8\nAnswer:";
    let mut plain = req(question, 1);
    plain.plain = true;
    plain.logprobs = Some(20);
    plain.choices = [" A", " B", " C", " D"].map(String::from).to_vec();
    let (text, m) = engine
        .generate(plain.clone())
        .unwrap()
        .collect_text()
        .await
        .unwrap();
    assert!(
        ["A", "B", "C", "D"].contains(&text.trim()),
        "held to the letters, got {text:?}"
    );
    assert_eq!(
        m.logprobs.len(),
        1,
        "one answer token, with its alternatives"
    );
    // Continued as text, the letter follows "Answer:" after a space.
    assert!(
        m.logprobs[0].top.iter().any(|(t, _)| t == " B"),
        "{:?}",
        m.logprobs
    );
    assert!(!m.logprobs[0].top.is_empty());
    // The same text as a chat turn is wrapped in the template's role markers: more tokens.
    let mut chat = plain;
    chat.plain = false;
    chat.choices = ["A", "B", "C", "D"].map(String::from).to_vec();
    let (_, c) = engine.generate(chat).unwrap().collect_text().await.unwrap();
    assert!(
        m.prompt_tokens > 20,
        "the prompt is counted: {}",
        m.prompt_tokens
    );
    assert!(
        m.prompt_tokens < c.prompt_tokens,
        "plain {} vs chat {} prompt tokens",
        m.prompt_tokens,
        c.prompt_tokens
    );
}

/// A stop sequence ends the generation where the model writes it, though the model writes it
/// merged into a longer token (mistral.rs alone missed those and ran on to the token limit):
/// the same greedy text, cut before the stop, with the finish reason "stop".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_sequence_ends_the_generation_before_it() {
    let engine = common::engine().await;
    let mut free = req("Numbers, one line each:\n1\n2\n3\n4\n", 24);
    free.plain = true;
    let (whole, w) = engine
        .generate(free.clone())
        .unwrap()
        .collect_text()
        .await
        .unwrap();
    assert_eq!(w.finish_reason, "length", "{whole:?}");
    // One token, and two tokens arriving apart: neither the stop nor a first part of it is
    // in the text.
    for stop in ["\n", "\n7"] {
        let Some(cut) = whole.find(stop) else {
            panic!("the model was to write {stop:?}: {whole:?}")
        };
        let mut stopped = free.clone();
        stopped.stop = vec![stop.into()];
        let (text, m) = engine
            .generate(stopped)
            .unwrap()
            .collect_text()
            .await
            .unwrap();
        assert_eq!(text, whole[..cut], "{stop:?} in {whole:?}");
        assert_eq!(m.finish_reason, "stop");
        assert!(
            m.completion_tokens < w.completion_tokens,
            "{} vs {}",
            m.completion_tokens,
            w.completion_tokens
        );
    }
}
