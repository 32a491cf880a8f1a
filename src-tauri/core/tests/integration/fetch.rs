//! The HTTPS download path against a real HTTP server on 127.0.0.1: progress,
//! resume with Range after a dropped connection, verification, publisher hashes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Response, StatusCode};
use axum::routing::get;
use sha2::{Digest, Sha256};
use tandem_core::models::{
    fetch_model, FetchOptions, FetchProgress, ModelError, ModelSource, ModelSpec,
};

#[derive(Clone)]
struct Server {
    data: Arc<Vec<u8>>,
    /// Requests so far; the first one is cut off half-way.
    hits: Arc<AtomicUsize>,
    ranges: Arc<std::sync::Mutex<Vec<String>>>,
    etag: Option<String>,
}

async fn serve(State(s): State<Server>, headers: HeaderMap) -> Response<Body> {
    let n = s.hits.fetch_add(1, Ordering::SeqCst);
    let start = headers
        .get("range")
        .and_then(|v| v.to_str().ok())
        .map(|r| {
            s.ranges.lock().unwrap().push(r.to_string());
            r.trim_start_matches("bytes=")
                .trim_end_matches('-')
                .parse::<usize>()
                .unwrap()
        })
        .unwrap_or(0);
    let mut b = Response::builder();
    if let Some(tag) = &s.etag {
        b = b.header("x-linked-etag", format!("\"{tag}\""));
    }
    if n == 0 {
        // Promise everything, deliver half, then end the body with an error.
        let half = s.data[..s.data.len() / 2].to_vec();
        let stream = futures::stream::iter(vec![
            Ok::<_, std::io::Error>(bytes::Bytes::from(half)),
            Err(std::io::Error::other("connection reset")),
        ]);
        return b
            .header("content-length", s.data.len())
            .body(Body::from_stream(stream))
            .unwrap();
    }
    let rest = s.data[start..].to_vec();
    let status = if start > 0 {
        StatusCode::PARTIAL_CONTENT
    } else {
        StatusCode::OK
    };
    b.status(status)
        .header("content-length", rest.len())
        .body(Body::from(rest))
        .unwrap()
}

async fn start(data: Vec<u8>, etag: Option<String>) -> (String, Server) {
    let s = Server {
        data: Arc::new(data),
        hits: Arc::new(AtomicUsize::new(0)),
        ranges: Default::default(),
        etag,
    };
    let app = axum::Router::new()
        .route("/m.gguf", get(serve))
        .with_state(s.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/m.gguf"), s)
}

fn spec(url: String, data: &[u8], sha: Option<String>) -> ModelSpec {
    ModelSpec {
        name: "loopback".into(),
        family: "test".into(),
        architecture: "llama".into(),
        parameters_b: 0.0,
        quantization: "Q8_0".into(),
        file: "m.gguf".into(),
        size: data.len() as u64,
        sha256: sha,
        license: "test".into(),
        min_ram_gb: 0.0,
        context_length: 0,
        kv_bytes_per_token: 0,
        source: ModelSource::Url { url },
        optimize: None,
        notes: None,
        measured: None,
    }
}

fn payload() -> Vec<u8> {
    (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect()
}

#[tokio::test]
async fn resumes_after_a_dropped_connection_and_verifies() {
    let data = payload();
    let sha = hex::encode(Sha256::digest(&data));
    let (url, server) = start(data.clone(), None).await;
    let dir = tempfile::tempdir().unwrap();
    let s = spec(url, &data, Some(sha.clone()));
    let opts = FetchOptions::new(dir.path());

    let first = fetch_model(&s, &opts, |_| {}).await;
    assert!(matches!(first, Err(ModelError::Download(_))), "{first:?}");
    let part = dir.path().join("loopback/m.gguf.part");
    let kept = std::fs::metadata(&part).unwrap().len();
    assert!(kept > 0 && kept < data.len() as u64);

    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let report = fetch_model(&s, &opts, move |p| seen2.lock().unwrap().push(p))
        .await
        .unwrap();
    assert_eq!(
        server.ranges.lock().unwrap().as_slice(),
        [format!("bytes={kept}-")]
    );
    assert_eq!(report.sha256, sha);
    assert_eq!(report.verified_by, "manifest");
    assert_eq!(
        std::fs::read(dir.path().join("loopback/m.gguf")).unwrap(),
        data
    );
    assert!(!part.exists());
    let seen = seen.lock().unwrap();
    assert!(seen.iter().any(|p| matches!(p, FetchProgress::Downloading { done_bytes, .. } if *done_bytes == data.len() as u64)));
    assert!(seen.contains(&FetchProgress::Verifying));

    // Idempotent: a verified file is not downloaded again.
    let hits = server.hits.load(Ordering::SeqCst);
    let again = fetch_model(&s, &opts, |_| {}).await.unwrap();
    assert!(again.already_present);
    assert_eq!(server.hits.load(Ordering::SeqCst), hits);
}

#[tokio::test]
async fn a_wrong_hash_is_refused_and_the_partial_file_removed() {
    let data = payload();
    let (url, server) = start(data.clone(), None).await;
    server.hits.store(1, Ordering::SeqCst); // no simulated drop
    let dir = tempfile::tempdir().unwrap();
    let s = spec(url, &data, Some("0".repeat(64)));
    let err = fetch_model(&s, &FetchOptions::new(dir.path()), |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Checksum { .. }), "{err:?}");
    assert!(!dir.path().join("loopback/m.gguf").exists());
    assert!(!dir.path().join("loopback/m.gguf.part").exists());
}

#[tokio::test]
async fn without_a_manifest_hash_the_publisher_hash_is_used() {
    let data = payload();
    let good = hex::encode(Sha256::digest(&data));
    let (url, server) = start(data.clone(), Some(good.clone())).await;
    server.hits.store(1, Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let report = fetch_model(
        &spec(url, &data, None),
        &FetchOptions::new(dir.path()),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(report.verified_by, "publisher");
    assert_eq!(report.sha256, good);

    // A publisher hash that does not match is an error too.
    let (url, server) = start(data.clone(), Some("f".repeat(64))).await;
    server.hits.store(1, Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let err = fetch_model(
        &spec(url, &data, None),
        &FetchOptions::new(dir.path()),
        |_| {},
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ModelError::Checksum { .. }));
}
