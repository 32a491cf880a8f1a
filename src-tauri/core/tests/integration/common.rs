//! Shared fixtures: the models directory, the one shared engine, and a TCP
//! listener that records any connection a supposedly offline load makes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use tandem_core::events::EventBus;
use tandem_core::local::{EngineOptions, MistralEngine};
use tandem_core::models::{self, Manifest};
use tokio::sync::OnceCell;

pub fn models_dir() -> PathBuf {
    std::env::var_os("TANDEM_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models")))
}

/// The default model's file, as the app would load it. Missing weights fail the
/// test with the command that fixes it (the test command fetches them first).
pub fn default_model() -> (String, PathBuf) {
    let dir = models_dir();
    let manifest = Manifest::load(&dir).unwrap();
    match models::resolve(&dir, &manifest, None) {
        Ok((spec, path)) => (spec.name, path),
        Err(e) => {
            panic!("{e}; run `make models` (or `cargo run -p tandem-cli -- models fetch`) first")
        }
    }
}

/// Connections seen by the trap: anything that tries the hub or a proxy lands here.
pub static NETWORK_TOUCHES: AtomicUsize = AtomicUsize::new(0);

/// Point every way out (hub endpoint, proxies) at a local listener that counts
/// connections, before anything loads. Idempotent.
pub fn trap_network() {
    static TRAP: OnceLock<()> = OnceLock::new();
    TRAP.get_or_init(|| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                NETWORK_TOUCHES.fetch_add(1, Ordering::SeqCst);
                drop(conn);
            }
        });
        // An empty hub cache of this test binary's own, under cargo's target (not a new
        // directory in the system temp dir on every run).
        let home = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hf-home");
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        for (k, v) in [
            ("HF_ENDPOINT", addr.as_str()),
            ("HF_HOME", home.to_str().unwrap()),
            ("HTTP_PROXY", addr.as_str()),
            ("HTTPS_PROXY", addr.as_str()),
            ("ALL_PROXY", addr.as_str()),
            ("http_proxy", addr.as_str()),
            ("https_proxy", addr.as_str()),
        ] {
            std::env::set_var(k, v);
        }
        // Loopback stays direct (the fetch tests' own server); the hub endpoint above
        // is itself the trap, so hub calls are still counted.
        std::env::set_var("NO_PROXY", "127.0.0.1,localhost");
        std::env::set_var("no_proxy", "127.0.0.1,localhost");
    });
}

static ENGINE: OnceCell<Arc<MistralEngine>> = OnceCell::const_new();

/// One engine shared by the tests that only need *a* loaded model.
pub async fn engine() -> Arc<MistralEngine> {
    ENGINE
        .get_or_init(|| async {
            trap_network();
            let (name, path) = default_model();
            let mut opts = EngineOptions::new(name, path);
            opts.threads = Some(2);
            Arc::new(
                MistralEngine::load(opts, EventBus::new())
                    .await
                    .expect("the default model loads"),
            )
        })
        .await
        .clone()
}
