//! `tandem serve`: the local OpenAI-compatible gateway on 127.0.0.1, hosted by the CLI.

use anyhow::Result;
use tandem_core::config::Settings;
use tandem_core::gateway::{self, token, Gateway, Limits};
use tandem_core::router::Policy;
use tandem_core::secrets::Keys;

use crate::coded;

pub async fn serve(settings: &Settings, port: u16, rotate: bool, policy: Policy) -> Result<()> {
    // Bind and get the token first: a taken port or a locked keychain fails before the model loads.
    let listener = gateway::bind(port).await.map_err(coded)?;
    let addr = listener.local_addr()?;
    let (token, source) = tokio::task::spawn_blocking(move || {
        let keys = Keys::os();
        token::resolve(keys.store().ok().map(|s| s.as_ref()), rotate)
    })
    .await?
    .map_err(coded)?;
    let (orch, _) = crate::orchestrate::orchestrator(settings).await?;
    let gw = Gateway::new(orch, &token, policy, Limits::default());
    match source {
        token::TokenSource::Env => {
            eprintln!("token: from {} (not stored)", token::TOKEN_ENV)
        }
        token::TokenSource::Stored => eprintln!(
            "token: the one stored in the OS keychain at first start (--rotate-token makes a new one)"
        ),
        token::TokenSource::Created | token::TokenSource::Rotated => {
            // Printed once; the keychain keeps it.
            eprintln!("token (shown once, kept in the OS keychain): {}", token.expose());
        }
    }
    let policy_name = serde_json::to_value(policy)?;
    eprintln!(
        "tandem gateway listening on http://{addr}/v1 (policy {}; Ctrl-C stops)",
        policy_name.as_str().unwrap_or("balanced")
    );
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    gw.serve(listener, shutdown).await.map_err(coded)?;
    eprintln!("tandem gateway stopped");
    Ok(())
}
