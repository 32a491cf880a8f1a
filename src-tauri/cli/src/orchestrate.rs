//! `tandem ask` (orchestrated), `tandem route --jsonl` (the dry-run contract) and `tandem ledger`:
//! the CLI's side of tandem-core's router, egress and ledger.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::{json, Value};
use tandem_core::cloud::agents::{Catalog, Needs};
use tandem_core::config::Settings;
use tandem_core::conversations::{self, ConversationError, Conversations};
use tandem_core::egress::Sanitizer;
use tandem_core::host;
use tandem_core::host::TurnRequest;
use tandem_core::ledger::{self, Ledger};
use tandem_core::local::{self, LocalEngine};
use tandem_core::router::run::{self, Orchestrator, RunEvent, RunOptions, Summary};
use tandem_core::router::{
    self, Attachment, Context as RouteContext, LocalClass, Policy, Route, Task,
};
use tandem_core::sensitivity::Pseudonymizer;

use crate::coded;

/// `TANDEM_LEDGER` or `<data dir>/tandem/ledger.sqlite3`.
pub fn ledger_path() -> PathBuf {
    ledger::default_path()
}

/// Attachments through the same extraction as dropped files (PDF, DOCX, XLSX, HTML, ...).
pub async fn read_attachments(paths: &[PathBuf]) -> Result<Vec<Attachment>> {
    let limits = tandem_core::extract::Limits::default();
    // Provenance by path: a file under a folder marked sensitive stays local however it is named.
    let folders = tokio::task::spawn_blocking(|| {
        tandem_core::index::Folders::load(&tandem_core::index::Folders::file())
    })
    .await?
    .map_err(coded)?;
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        let (a, notes) = host::attachment(p, &limits, &folders)
            .await
            .map_err(coded)?;
        if a.sensitive_source {
            eprintln!(
                "notice: {} is in a folder marked sensitive: it stays on this device",
                p.display()
            );
        }
        for n in &notes {
            eprintln!("notice: {}: {n}", p.display());
        }
        out.push(a);
    }
    Ok(out)
}

/// Excerpts of the local index that match the prompt, as attachments. Files from sensitive
/// folders keep that provenance, so the router never lets their content leave.
async fn folder_context(prompt: &str) -> Result<Vec<Attachment>> {
    let q = prompt.to_string();
    let (hits, folders) = tokio::task::spawn_blocking(move || {
        let folders = tandem_core::index::Folders::load(&tandem_core::index::Folders::file())?;
        let hits = tandem_core::index::Index::open(
            &tandem_core::index::default_path(),
            tandem_core::extract::Limits::default(),
        )
        .and_then(|i| i.related(&q, 3))?;
        Ok::<_, tandem_core::index::IndexError>((hits, folders))
    })
    .await?
    .map_err(coded)?;
    // The index's mark is from the pass that read the file; the folders as they are now decide
    // too (a folder marked sensitive since, or a sensitive folder inside a normal one).
    let hits: Vec<_> = hits
        .into_iter()
        .map(|mut h| {
            h.sensitive_source |= folders
                .sensitive_for(std::path::Path::new(&h.path))
                .is_some();
            h
        })
        .collect();
    if hits.is_empty() {
        eprintln!("notice: nothing in the watched folders matches the question");
    }
    Ok(hits
        .into_iter()
        .map(|h| {
            let name = std::path::Path::new(&h.path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or(h.path.clone());
            eprintln!(
                "notice: using an excerpt of {name}{}",
                if h.sensitive_source {
                    " (sensitive folder: it stays on this device)"
                } else {
                    ""
                }
            );
            Attachment {
                name,
                text: h.text,
                sensitive_source: h.sensitive_source,
            }
        })
        .collect())
}

pub struct AskArgs {
    pub prompt: String,
    /// Attach the best-matching excerpts of the local index (watched folders).
    pub from_folders: bool,
    pub attach: Vec<PathBuf>,
    /// A stored conversation to continue (id or title; created on first use).
    pub conversation: Option<String>,
    pub policy: Policy,
    pub explain: bool,
    pub json: bool,
    pub agent: Option<String>,
    pub cloud: bool,
    pub needs: Vec<String>,
    pub budget: Option<f64>,
    pub max_tokens: usize,
    pub temperature: Option<f64>,
}

/// The orchestrator every routed command uses: the scanner, the catalog, the OS keychain, the
/// ledger file and the configured local model (cloud only, with a notice, when it cannot load).
pub async fn orchestrator(settings: &Settings) -> Result<(Arc<Orchestrator>, Catalog)> {
    let local = local::load_configured(settings, tandem_core::events::EventBus::new())
        .await
        .map(|e| Arc::new(e) as Arc<dyn LocalEngine>);
    let parts = host::assemble(settings, &ledger_path(), local)
        .await
        .map_err(coded)?;
    for n in &parts.notices {
        // The scanner's own notices (NER missing) were never printed by routed commands.
        if n.starts_with("no local model") || n.starts_with("no keychain") {
            eprintln!("notice: {n}");
        }
    }
    Ok((parts.orchestrator, parts.catalog))
}

pub async fn ask(settings: &Settings, a: AskArgs) -> Result<()> {
    // Bad input fails before anything slow starts.
    let mut attachments = read_attachments(&a.attach).await?;
    if a.from_folders {
        attachments.extend(folder_context(&a.prompt).await?);
    }
    // A named conversation lives in the app's store: found by id or title, made on first use.
    let conversation = match &a.conversation {
        Some(name) => {
            let name = name.clone();
            let keep = settings.keep_conversations_days;
            Some(
                tokio::task::spawn_blocking(move || {
                    let store = Conversations::open(&conversations::default_path())?;
                    store.apply_retention(keep)?;
                    let id = match store.find(&name)? {
                        Some(id) => id,
                        None => store.create(&name, now_ms())?,
                    };
                    Ok::<_, ConversationError>((store, id))
                })
                .await?
                .map_err(coded)?,
            )
        }
        None => None,
    };
    let (orch, catalog) = orchestrator(settings).await?;
    let needs = Needs {
        capabilities: a
            .needs
            .iter()
            .map(|c| c.parse())
            .collect::<Result<_, _>>()
            .map_err(coded)?,
        max_cost: a.budget,
        ..Needs::default()
    };
    let req = TurnRequest {
        conversation: conversation.as_ref().map(|(_, id)| id.clone()),
        prompt: a.prompt.clone(),
        attachments,
        task: format!("cli-{}", std::process::id()),
        policy: a.policy,
        max_tokens: a.max_tokens,
        agent: a.agent.clone(),
        needs,
        temperature: a.temperature,
        ..TurnRequest::default()
    };
    let _ = a.cloud; // --cloud: let the picker choose (the default when the plan needs the cloud)
    let mut stdout = std::io::stdout();
    let mut failed: Option<anyhow::Error> = None;
    // The one host driver: the CLI only renders its events.
    let out = host::run_turn(
        &orch,
        conversation.as_ref().map(|(s, _)| s),
        req,
        |ev| match render(&a, &mut stdout, ev) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        },
        std::future::pending(),
    )
    .await
    .map_err(coded)?;
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some(e) = out.error {
        return Err(coded(e));
    }
    let summary = out.summary();
    if let Some((_, id)) = &conversation {
        if a.explain {
            eprintln!("conversation: {id}");
        }
    }
    finish_ask(&a, &catalog, &summary)
}

/// Shows one event of a run: the answer on stdout, the plan and steps on stderr with --explain.
fn render(a: &AskArgs, stdout: &mut std::io::Stdout, ev: RunEvent) -> Result<()> {
    {
        match ev {
            RunEvent::Plan { plan } => {
                if a.explain {
                    let strategy = plan
                        .strategy
                        .map(|s| {
                            format!(
                                " ({})",
                                serde_json::to_value(s)
                                    .unwrap_or_default()
                                    .as_str()
                                    .unwrap_or_default()
                            )
                        })
                        .unwrap_or_default();
                    eprintln!(
                        "route: {}{strategy}, complexity {:.2}",
                        serde_json::to_value(plan.route)?
                            .as_str()
                            .unwrap_or_default(),
                        plan.complexity
                    );
                    for r in &plan.reasons {
                        eprintln!("  - {r}");
                    }
                }
            }
            RunEvent::Step { step, place } => {
                if a.explain {
                    eprintln!("· {step} ({place})");
                }
            }
            RunEvent::Text { text } => {
                stdout.write_all(text.as_bytes())?;
                stdout.flush()?;
            }
            RunEvent::Notice { text } => eprintln!("notice: {text}"),
        }
    }
    Ok(())
}

/// After the answer: the accounting (--explain) and the JSON line (--json).
fn finish_ask(a: &AskArgs, catalog: &Catalog, summary: &Summary) -> Result<()> {
    let mut stdout = std::io::stdout();
    writeln!(stdout)?;
    let agent = summary.agent.as_deref().and_then(|n| catalog.agent(n));
    if a.explain {
        eprintln!(
            "tokens: {} local, {} cloud; cost ${:.5} (all-cloud ${:.5}); energy ≈ {:.1} J local + {:.1} J cloud (assumptions in the README)",
            summary.local_tokens, summary.cloud_tokens, summary.cost_usd, summary.all_cloud_cost_usd, summary.energy_local_j, summary.energy_cloud_j
        );
    }
    if a.json {
        let mut v = serde_json::to_value(summary)?;
        v["provider"] = json!(agent.map(|a| a.provider.clone()));
        v["model"] = json!(agent.map(|a| a.model.clone()));
        writeln!(stdout, "{}", serde_json::to_string(&v)?)?;
    }
    Ok(())
}

/// One input line of the `route`/`answer` contracts: {"id","prompt","attachments"}; a bad
/// line is the error line to print ({"id": null, "error"} when it is not JSON at all).
fn contract_line(line: &str) -> Result<(Value, String, Vec<Attachment>), Value> {
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Err(json!({"id": null, "error": format!("not JSON: {e}")})),
    };
    let id = v.get("id").cloned().unwrap_or(Value::Null);
    let Some(prompt) = v.get("prompt").and_then(Value::as_str) else {
        return Err(json!({"id": id, "error": "missing \"prompt\""}));
    };
    let attachments: Vec<Attachment> = match v.get("attachments") {
        None | Some(Value::Null) => Vec::new(),
        Some(a) => match serde_json::from_value(a.clone()) {
            Ok(a) => a,
            Err(e) => return Err(json!({"id": id, "error": format!("bad \"attachments\": {e}")})),
        },
    };
    Ok((id, prompt.to_string(), attachments))
}

/// `tandem answer --jsonl`: each line runs through the real orchestrator (the loaded local
/// model, the configured agents, the one door), in order; `local` answers with the local model
/// only. Local answers to short tasks carry the model's confidence.
pub async fn answer_jsonl(
    settings: &Settings,
    policy: Policy,
    local: bool,
    max_tokens: usize,
) -> Result<()> {
    let (orch, _catalog) = orchestrator(settings).await?;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(16);
    // stdin is read on a blocking thread, line by line, so answers stream out as they come.
    let reader = tokio::task::spawn_blocking(move || -> Result<()> {
        for line in std::io::stdin().lock().lines() {
            let line = line.context("cannot read stdin")?;
            if line.trim().is_empty() {
                continue;
            }
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
        Ok(())
    });
    let mut n = 0usize;
    while let Some(line) = rx.recv().await {
        n += 1;
        let v = match contract_line(&line) {
            Err(e) => e,
            Ok((id, prompt, attachments)) => {
                let req = TurnRequest {
                    prompt,
                    attachments,
                    task: format!("answer-{}-{n}", std::process::id()),
                    policy,
                    max_tokens,
                    force_local: local,
                    self_check: true,
                    ..TurnRequest::default()
                };
                let out = host::run_turn(&orch, None, req, |_| true, std::future::pending())
                    .await
                    .map_err(coded)?;
                match out.error {
                    Some(e) => {
                        use tandem_core::ErrorCode;
                        json!({"id": id, "error": e.to_string(), "code": e.code()})
                    }
                    None => {
                        let s = out.summary();
                        json!({
                            "id": id,
                            "route": s.route,
                            "answered_by": s.answered_by,
                            "text": s.text,
                            "confidence": s.confidence,
                            "keep": s.keep,
                            "escalated": s.escalated,
                            "local_tokens": s.local_tokens,
                            "cloud_tokens": s.cloud_tokens,
                        })
                    }
                }
            }
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string(&v)?)?;
        out.flush()?;
    }
    reader.await?
}

/// One `route --jsonl` line: plan + the exact text that would be sent, or an error line.
pub(crate) fn route_line(
    sanitizer: &Sanitizer,
    catalog: &Catalog,
    class: LocalClass,
    policy: Policy,
    line: &str,
) -> Value {
    let (id, prompt, attachments) = match contract_line(line) {
        Ok(l) => l,
        Err(e) => return e,
    };
    let mut task = Task {
        prompt,
        attachments,
        history: Vec::new(),
        policy,
    };
    // As a run does before planning: confidential documents and pasted blocks become private
    // attachments, so the payload below is what the run would send.
    router::mark_confidential(&mut task);
    // The dry run assumes a cloud agent is reachable: it shows what would leave if one were.
    let ctx = RouteContext {
        local_class: class,
        cloud_available: true,
        cloud_unavailable_reason: None,
        force_cloud: false,
        device: None,
        device_chosen: false,
        no_local: false,
        degraded: None,
    };
    let plan = router::plan(sanitizer.scanner(), &task, &ctx);
    let payload = (plan.route != Route::Local)
        .then(|| {
            let agent = catalog.pick(&Needs::default(), |_| true).ok()?.clone();
            // The run's own drafting (abstracts need the local model: a dry run has none).
            let draft = run::draft_request(
                &task,
                &plan,
                &RunOptions::default(),
                &agent,
                catalog.role_of(&agent),
                &[],
            );
            sanitizer
                .sanitize(draft, &mut Pseudonymizer::new())
                .ok()
                .map(|r| r.text())
        })
        .flatten();
    json!({
        "id": id,
        "route": plan.route,
        "strategy": plan.strategy,
        "fragments": plan.fragments,
        "cloud_payload": payload,
        "reasons": plan.reasons,
        "complexity": plan.complexity,
    })
}

pub async fn route_jsonl(settings: &Settings, class: LocalClass, policy: Policy) -> Result<()> {
    let dir = settings.models_dir.clone();
    let scanner = tokio::task::spawn_blocking(move || host::load_scanner(&dir))
        .await?
        .map_err(coded)?;
    let sanitizer = Sanitizer::new(Arc::new(scanner));
    let catalog = Catalog::load().map_err(coded)?;
    tokio::task::spawn_blocking(move || -> Result<()> {
        let stdin = std::io::stdin();
        let mut out = std::io::stdout().lock();
        for line in stdin.lock().lines() {
            let line = line.context("cannot read stdin")?;
            if line.trim().is_empty() {
                continue;
            }
            let v = route_line(&sanitizer, &catalog, class, policy, &line);
            writeln!(out, "{}", serde_json::to_string(&v)?)?;
            out.flush()?;
        }
        Ok(())
    })
    .await?
}

pub async fn ledger_cmd(json_out: bool, limit: usize) -> Result<()> {
    let path = ledger_path();
    let p = path.clone();
    let ledger = tokio::task::spawn_blocking(move || Ledger::open(&p))
        .await?
        .map_err(coded)?;
    let entries = ledger.list(limit).await.map_err(coded)?;
    let totals = ledger.totals(None).await.map_err(coded)?;
    if json_out {
        println!(
            "{}",
            serde_json::to_string(&json!({"path": path, "totals": totals, "entries": entries}))?
        );
        return Ok(());
    }
    println!("ledger: {}", path.display());
    println!(
        "sent {} request(s), {} bytes, {} cloud tokens, ${:.5}; blocked {}; local runs {} ({} tokens)",
        totals.sent, totals.bytes_sent, totals.cloud_tokens, totals.cost_usd, totals.blocked, totals.local_runs, totals.local_tokens
    );
    if totals.device_sent > 0 {
        println!(
            "your devices: {} request(s), {} bytes (kept apart from cloud egress)",
            totals.device_sent, totals.device_bytes
        );
    }
    for e in entries {
        let when = e.ts_ms / 1000;
        println!(
            "#{} t={when} {:?}{} {} ({}/{}) {} bytes sha256 {}…",
            e.id,
            e.status,
            if e.destination == tandem_core::ledger::Destination::Device {
                " to your device"
            } else {
                ""
            },
            e.agent,
            e.provider,
            e.model,
            e.bytes,
            &e.sha256[..12.min(e.sha256.len())]
        );
        for r in &e.reasons {
            println!("    - {r}");
        }
        if let Some(p) = &e.payload {
            let short: String = p.chars().take(200).collect();
            println!(
                "    payload: {short}{}",
                if p.chars().count() > 200 { "…" } else { "" }
            );
        }
    }
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[derive(clap::Subcommand)]
pub enum ConversationsCommand {
    /// Every conversation: id, turns, title (newest first).
    List {
        #[arg(long)]
        json: bool,
    },
    /// One conversation's turns (by id or title).
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a conversation: its turns and its pseudonym vault.
    Delete { name: String },
}

/// `tandem conversations list|show|delete`.
pub async fn conversations_cmd(
    command: ConversationsCommand,
    keep_days: Option<u64>,
) -> Result<()> {
    tokio::task::spawn_blocking(move || -> Result<()> {
        let store = Conversations::open(&conversations::default_path()).map_err(coded)?;
        store.apply_retention(keep_days).map_err(coded)?;
        let find = |name: &str| -> Result<String> {
            store.find(name).map_err(coded)?.with_context(|| {
                format!("no conversation named {name:?} (tandem conversations list)")
            })
        };
        match command {
            ConversationsCommand::List { json } => {
                let list = store.list().map_err(coded)?;
                if json {
                    println!("{}", serde_json::to_string(&list)?);
                } else if list.is_empty() {
                    println!("no conversations (tandem ask --conversation NAME \"...\")");
                } else {
                    for c in list {
                        println!("{}  {:>3} turns  {}", c.id, c.turns, c.title);
                    }
                }
            }
            ConversationsCommand::Show { name, json } => {
                let id = find(&name)?;
                let turns = store.turns(&id).map_err(coded)?;
                if json {
                    println!("{}", serde_json::to_string(&turns)?);
                } else {
                    for t in turns {
                        println!("> {}", t.question);
                        for a in &t.attachments {
                            println!("  (attached {a})");
                        }
                        println!("{}\n", t.answer);
                    }
                }
            }
            ConversationsCommand::Delete { name } => {
                let id = find(&name)?;
                store.delete(&id).map_err(coded)?;
                eprintln!("deleted {id} (its turns and its vault)");
            }
        }
        Ok(())
    })
    .await?
}
