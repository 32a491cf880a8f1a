//! `tandem mcp`: Tandem as an MCP server over stdio (the official Rust SDK, `rmcp`), so any agent
//! can ask it to redact, scan, answer privately or search the user's files. Every tool goes
//! through the same parts as the CLI: the scanner and plan (`redact`, `scan`), the one host
//! driver with the shared Pause switch, egress door and ledger (`ask`), the local index with
//! the folders' marks as they are now (`search_files`). Stdout carries the protocol only.
//! `tandem mcp --http` serves the same tools over MCP's streamable HTTP on 127.0.0.1, behind the
//! gateway's bearer token.

use std::sync::Arc;

use anyhow::Result;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{
    schemars, tool, tool_handler, tool_router, ErrorData as McpError, ServerHandler, ServiceExt,
};
use serde_json::{json, Value};
use tandem_core::config::Settings;
use tandem_core::host::{self, TurnRequest};
use tandem_core::router::run::{Orchestrator, RunEvent};
use tandem_core::sensitivity::Scanner;
use tokio::sync::OnceCell;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct TextArgs {
    /// The text, as the user wrote or pasted it.
    pub text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AskArgs {
    /// The question or task.
    pub prompt: String,
    /// Answer with the local model only: nothing leaves this device.
    #[serde(default)]
    pub local_only: bool,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for in the watched folders.
    pub query: String,
    /// At most this many files (default 5, at most 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// What a hit from a sensitive folder is shown as: the agent calling this tool may send what it
/// reads to its own cloud model, so the file's text and name stay on the device.
pub const SENSITIVE_HIT: &str =
    "A file in a folder marked sensitive matches; its name and text stay on this device (ask with local_only to have the local model read it).";

#[derive(Clone)]
pub struct TandemMcp {
    settings: Arc<Settings>,
    scanner: Arc<OnceCell<Arc<Scanner>>>,
    orch: Arc<OnceCell<Arc<Orchestrator>>>,
    tool_router: ToolRouter<TandemMcp>,
}

fn failed(e: impl std::fmt::Display) -> McpError {
    McpError::internal_error(e.to_string(), None)
}

fn json_result(v: Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(v.to_string())])
}

#[tool_router]
impl TandemMcp {
    pub fn new(settings: Settings) -> Self {
        Self {
            settings: Arc::new(settings),
            scanner: Arc::default(),
            orch: Arc::default(),
            tool_router: Self::tool_router(),
        }
    }

    async fn scanner(&self) -> Result<Arc<Scanner>, McpError> {
        let dir = self.settings.models_dir.clone();
        self.scanner
            .get_or_try_init(|| async move {
                tokio::task::spawn_blocking(move || host::load_scanner(&dir))
                    .await
                    .map_err(failed)?
                    .map(Arc::new)
                    .map_err(failed)
            })
            .await
            .cloned()
    }

    /// The orchestrator, assembled on first use (loading the local model takes a while).
    async fn orchestrator(&self) -> Result<Arc<Orchestrator>, McpError> {
        let settings = self.settings.clone();
        self.orch
            .get_or_try_init(|| async move {
                crate::orchestrate::orchestrator(&settings)
                    .await
                    .map(|(o, _)| o)
                    .map_err(failed)
            })
            .await
            .cloned()
    }

    #[tool(
        description = "What a cloud model would receive for this text under Tandem's plan: identifiers masked with placeholders, private sentences withheld, or nothing at all when the plan keeps the text on this device. Sends nothing."
    )]
    async fn redact(
        &self,
        Parameters(TextArgs { text }): Parameters<TextArgs>,
    ) -> Result<CallToolResult, McpError> {
        let scanner = self.scanner().await?;
        let policy = self.settings.policy;
        let settings = self.settings.clone();
        let v = tokio::task::spawn_blocking(move || {
            // The class of the model this host would run (its plan depends on it).
            let model = host::model_to_run(&settings).unwrap_or_default();
            let class = host::local_class(&settings, &model);
            let catalog = tandem_core::cloud::agents::Catalog::load().map_err(failed)?;
            let sanitizer = tandem_core::egress::Sanitizer::new(scanner);
            let line = json!({"id": 0, "prompt": text}).to_string();
            Ok::<_, McpError>(crate::orchestrate::route_line(
                &sanitizer, &catalog, class, policy, &line,
            ))
        })
        .await
        .map_err(failed)??;
        Ok(json_result(json!({
            "route": v["route"],
            "cloud_payload": v["cloud_payload"],
            "reasons": v["reasons"],
        })))
    }

    #[tool(
        description = "Sensitive spans Tandem finds in this text (label, tier, offsets in code points, detector) and the verdict: public, maskable or local_only."
    )]
    async fn scan(
        &self,
        Parameters(TextArgs { text }): Parameters<TextArgs>,
    ) -> Result<CallToolResult, McpError> {
        let scanner = self.scanner().await?;
        let report = tokio::task::spawn_blocking(move || scanner.scan(&text))
            .await
            .map_err(failed)?;
        Ok(json_result(json!({
            "verdict": report.verdict,
            "spans": report.spans,
            "reasons": report.reasons,
        })))
    }

    #[tool(
        description = "Ask Tandem: the router decides what runs on this device and what goes (masked) to a cloud agent; private material stays local; Pause cloud and the policy apply. The answer says where it ran."
    )]
    async fn ask(
        &self,
        Parameters(AskArgs { prompt, local_only }): Parameters<AskArgs>,
    ) -> Result<CallToolResult, McpError> {
        let orch = self.orchestrator().await?;
        let req = TurnRequest {
            prompt,
            task: format!("mcp-{}", std::process::id()),
            policy: self.settings.policy,
            max_tokens: 512,
            force_local: local_only,
            ..TurnRequest::default()
        };
        let mut notices = Vec::new();
        let mut reasons = Vec::new();
        let out = host::run_turn(
            &orch,
            None,
            req,
            |ev| {
                match ev {
                    RunEvent::Plan { plan } => reasons = plan.reasons,
                    RunEvent::Notice { text } => notices.push(text),
                    _ => {}
                }
                true
            },
            std::future::pending(),
        )
        .await
        .map_err(failed)?;
        if let Some(e) = out.error {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                e.to_string(),
            )]));
        }
        let s = out.summary();
        let answered_by = match (&s.agent, s.fell_back) {
            (Some(a), false) => format!(
                "cloud agent {a} ({} masked, {} withheld)",
                s.masked, s.withheld
            ),
            _ => "the local model on this device".to_string(),
        };
        Ok(json_result(json!({
            "answer": s.text,
            "answered_by": answered_by,
            "route": s.route,
            "reasons": reasons,
            "notices": notices,
        })))
    }

    #[tool(
        description = "Search the user's watched folders (the local index). Hits from normal folders come with their path and a snippet; hits from folders marked sensitive are only counted (their names and text stay on this device) unless the user allowed excerpts of them for agents."
    )]
    async fn search_files(
        &self,
        Parameters(SearchArgs { query, limit }): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, McpError> {
        let limit = limit.unwrap_or(5).clamp(1, 20);
        let hits = tokio::task::spawn_blocking(move || {
            let folders = tandem_core::index::Folders::load(&tandem_core::index::Folders::file())?;
            let hits = tandem_core::index::Index::open(
                &tandem_core::index::default_path(),
                tandem_core::extract::Limits::default(),
            )?
            .search(&query, limit)?;
            Ok::<_, tandem_core::index::IndexError>((hits, folders))
        })
        .await
        .map_err(failed)?
        .map_err(failed)?;
        let (hits, folders) = hits;
        let allowed = self.settings.mcp_sensitive_excerpts;
        let mut files = Vec::new();
        let mut sensitive = 0usize;
        for h in hits {
            // The index's mark, or the folders as they are now: any sensitive mark wins.
            let private = h.sensitive_source
                || folders
                    .sensitive_for(std::path::Path::new(&h.path))
                    .is_some();
            if private && !allowed {
                sensitive += 1;
                continue;
            }
            files.push(json!({"path": h.path, "snippet": h.snippet, "sensitive": private}));
        }
        Ok(json_result(json!({
            "files": files,
            "sensitive_matches": sensitive,
            "sensitive_note": (sensitive > 0).then_some(SENSITIVE_HIT),
        })))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TandemMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tandem", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tandem keeps sensitive data on this device. Use `redact` to see what a cloud model would receive, `scan` to find sensitive spans, `ask` to answer through Tandem's privacy router, and `search_files` to search the user's watched folders."
                    .to_string(),
            )
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin.
pub async fn serve(settings: Settings) -> Result<()> {
    let service = TandemMcp::new(settings)
        .serve(rmcp::transport::stdio())
        .await?;
    service.waiting().await?;
    Ok(())
}

/// Serves MCP's streamable HTTP at `http://127.0.0.1:PORT/mcp` until Ctrl-C: the same tools,
/// one shared scanner and orchestrator for every session, behind the gateway's token
/// (`Authorization: Bearer <token>`; TANDEM_GATEWAY_TOKEN or the keychain's, as `tandem serve`).
/// Browser origins are refused (a web page cannot drive it) and Host must be loopback.
pub async fn serve_http(settings: Settings, port: u16) -> Result<()> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    use tandem_core::gateway::{self, token};
    let listener = gateway::bind(port).await.map_err(crate::coded)?;
    let addr = listener.local_addr()?;
    let (secret, _) = tokio::task::spawn_blocking(move || {
        let keys = tandem_core::secrets::Keys::os();
        token::resolve(keys.store().ok().map(|s| s.as_ref()), false)
    })
    .await?
    .map_err(crate::coded)?;
    let want = tandem_core::ledger::sha256_hex(secret.expose());
    let server = TandemMcp::new(settings);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().enforce_origin_validation(),
    );
    let guard = move |req: axum::extract::Request, next: axum::middleware::Next| {
        let ok = req
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|t| tandem_core::ledger::sha256_hex(t.trim()) == want);
        async move {
            if ok {
                next.run(req).await
            } else {
                use axum::response::IntoResponse;
                (
                    axum::http::StatusCode::UNAUTHORIZED,
                    "missing or wrong bearer token (the gateway's: Authorization: Bearer <token>)",
                )
                    .into_response()
            }
        }
    };
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(guard));
    eprintln!("tandem mcp: streamable HTTP on http://{addr}/mcp (the gateway's bearer token; Ctrl-C stops)");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
