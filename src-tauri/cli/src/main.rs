//! `tandem`: the command-line host of tandem-core (probe, models, ask, scan, redact, keys,
//! cloud).

mod cloud;
mod folders;
mod mcp;
mod orchestrate;
mod scan;
mod serve;

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use futures::StreamExt;
use serde_json::json;
use tandem_core::config::{RawConfig, Settings};
use tandem_core::events::EventBus;
use tandem_core::hardware::{self, BuildCaps};
use tandem_core::local::{self, GenerateRequest, LocalEngine, StreamEvent};
use tandem_core::models::{self, FetchOptions, FetchProgress, Manifest};
use tandem_core::ErrorCode;

#[derive(Parser)]
#[command(
    name = "tandem",
    version,
    about = "Tandem: a privacy-first hybrid AI assistant (command line)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// What this machine has, and which local models it should run.
    Probe {
        /// Print the documented JSON schema instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List or fetch local models.
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
    /// Ask a question; the answer streams to stdout. The router decides what runs locally and
    /// what (masked) goes to a cloud agent; --local forces the local model.
    Ask {
        /// Only the local model, no routing (the `ask --local --json` contract).
        #[arg(long, conflicts_with_all = ["agent", "cloud", "attach", "policy", "explain", "conversation"])]
        local: bool,
        /// Add the best-matching excerpts of the watched folders' index to the question (files
        /// from sensitive folders never leave the device).
        #[arg(long)]
        from_folders: bool,
        /// Attach a text file (repeatable).
        #[arg(long)]
        attach: Vec<std::path::PathBuf>,
        /// Continue the stored conversation NAME (its id or title; created on first use): earlier
        /// turns go along as history, and its placeholders stay the same across turns.
        #[arg(long, value_name = "NAME")]
        conversation: Option<String>,
        /// private (nothing non-public leaves), balanced or performance (default: the settings
        /// file's `policy`, else balanced).
        #[arg(long)]
        policy: Option<String>,
        /// Print the plan, its reasons, the steps and the accounting on stderr.
        #[arg(long)]
        explain: bool,
        /// Ask this agent: a cloud agent, or one of your devices (see `tandem cloud list`).
        #[arg(long)]
        agent: Option<String>,
        /// Let the picker choose the cloud agent for --needs within --budget (the default).
        #[arg(long, conflicts_with = "agent")]
        cloud: bool,
        /// Capabilities the cloud agent must have: reasoning, code, web_search, long_context, vision.
        #[arg(long, value_delimiter = ',')]
        needs: Vec<String>,
        /// Most the cloud request may cost, in USD (estimated from the catalog's prices).
        #[arg(long)]
        budget: Option<f64>,
        /// After the streamed text, print one JSON line: {"text", "metrics"}.
        #[arg(long)]
        json: bool,
        /// Model name from the manifest (default: the manifest's default).
        #[arg(long)]
        model: Option<String>,
        /// Load this GGUF file directly instead of a manifest model.
        #[arg(long, conflicts_with = "model", requires = "local")]
        model_file: Option<std::path::PathBuf>,
        #[arg(long, default_value_t = 256)]
        max_tokens: usize,
        #[arg(long)]
        threads: Option<usize>,
        /// Sampling temperature; omitted means greedy (deterministic).
        #[arg(long)]
        temperature: Option<f64>,
        /// The question (words are joined with spaces).
        #[arg(required = true)]
        prompt: Vec<String>,
    },
    /// Find sensitive spans in a file (or stdin) and rate it public / maskable / local_only.
    Scan {
        #[command(flatten)]
        input: ScanInput,
        /// Contract mode: input lines {"id","text"}, output lines
        /// {"id","sensitive","verdict","spans":[{"start","end","label","tier","score"}]}.
        #[arg(long)]
        jsonl: bool,
    },
    /// Plan without running: input lines {"id","prompt","attachments":[{"name","text"}]}, output
    /// lines {"id","route","strategy","fragments","cloud_payload","reasons","complexity"}.
    Route {
        #[arg(long, required = true)]
        jsonl: bool,
        /// Plan as if a local model of this size were loaded: small, medium or large.
        #[arg(long, default_value = "small")]
        local_class: String,
        /// Default: the settings file's `policy`, else balanced.
        #[arg(long)]
        policy: Option<String>,
    },
    /// Answer each input line with the real orchestrator: input lines as `route --jsonl`; output
    /// lines {"id","route","answered_by","text","confidence","keep","escalated","local_tokens",
    /// "cloud_tokens"} in the same order; a bad line gets {"id","error"}.
    Answer {
        #[arg(long, required = true)]
        jsonl: bool,
        /// Answer with the local model only (nothing leaves this device).
        #[arg(long)]
        local: bool,
        /// Default: the settings file's `policy`, else balanced.
        #[arg(long)]
        policy: Option<String>,
        /// Most tokens an answer may have.
        #[arg(long, default_value_t = 512)]
        max_tokens: usize,
    },
    /// Serve Tandem to an MCP client over stdio (tools: redact, scan, ask, search_files). Add it
    /// to a client as the command `tandem mcp`; stdout carries the protocol only.
    Mcp {
        /// Serve MCP's streamable HTTP on 127.0.0.1 instead (at /mcp, behind the gateway's
        /// bearer token).
        #[arg(long)]
        http: bool,
        /// Port for --http (0 picks a free one; the address is printed).
        #[arg(long, default_value_t = 8720, requires = "http")]
        port: u16,
    },
    /// Serve the OpenAI- and Anthropic-compatible gateway on 127.0.0.1 (POST
    /// /v1/chat/completions, POST /v1/messages, GET /v1/models, POST /v1/tandem/query). Clients send `Authorization: Bearer <token>`: the
    /// token is made at first start, printed once and kept in the OS keychain;
    /// TANDEM_GATEWAY_TOKEN overrides it.
    Serve {
        /// Port on 127.0.0.1 (0 picks a free one; the address is printed).
        #[arg(long, default_value_t = tandem_core::gateway::DEFAULT_PORT)]
        port: u16,
        /// Replace the stored token with a new one (printed once).
        #[arg(long)]
        rotate_token: bool,
        /// Policy for tandem-auto and agent names: private, balanced or performance (default:
        /// the settings file's `policy`, else balanced).
        #[arg(long)]
        policy: Option<String>,
        /// Model name from the manifest (default: the manifest's default).
        #[arg(long)]
        model: Option<String>,
    },
    /// The conversations kept on this device (the app's store; `ask --conversation` adds to them).
    Conversations {
        #[command(subcommand)]
        command: orchestrate::ConversationsCommand,
    },
    /// What left this device: every request sent or blocked, and local runs (totals).
    Ledger {
        #[arg(long)]
        json: bool,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// API keys in the OS keychain.
    Keys {
        #[command(subcommand)]
        command: cloud::KeysCommand,
    },
    /// Cloud providers and agents.
    Cloud {
        #[command(subcommand)]
        command: cloud::CloudCommand,
    },
    /// Watched folders: add, list, remove.
    Folders {
        #[command(subcommand)]
        command: folders::FoldersCommand,
    },
    /// The local index of the watched folders: run a pass, or show its status.
    Index {
        #[command(subcommand)]
        command: folders::IndexCommand,
    },
    /// Search the local index (nothing leaves the device). --json prints {"query", "hits":
    /// [{"path", "snippet", "verdict", "sensitive_source"}]}.
    Search {
        query: String,
        #[arg(long)]
        json: bool,
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
    /// Extract a document's text (PDF, DOCX, XLSX, HTML, CSV, JSON, Markdown, text, code) and
    /// classify it: the pipeline dropped files go through. --json prints {"path", "kind",
    /// "encoding", "bytes", "chars", "verdict", "spans", "fragments", "notes", "text"}.
    Extract {
        file: std::path::PathBuf,
        #[arg(long)]
        json: bool,
        /// User rules (TOML), as for `scan`.
        #[arg(long)]
        rules: Option<std::path::PathBuf>,
        /// Treat the file as coming from a folder marked sensitive (always local_only).
        #[arg(long)]
        sensitive_source: bool,
    },
    /// Print the input exactly as a cloud provider would receive it (masked, private parts withheld).
    Redact {
        #[command(flatten)]
        input: ScanInput,
        /// Input lines {"id","text"}, output lines {"id","text","masked","withheld"}.
        #[arg(long)]
        jsonl: bool,
    },
}

/// What `scan` and `redact` read, and how.
#[derive(clap::Args)]
struct ScanInput {
    /// Input file; stdin when omitted or "-".
    file: Option<std::path::PathBuf>,
    /// User rules (TOML: terms, patterns, allow, local_only_terms, secrets); default TANDEM_RULES or
    /// <config dir>/tandem/sensitivity.toml.
    #[arg(long)]
    rules: Option<std::path::PathBuf>,
    /// Treat the input as coming from a folder marked sensitive (always local_only).
    #[arg(long)]
    sensitive_source: bool,
}

#[derive(Subcommand)]
enum ModelsCommand {
    /// Known models, whether they are installed and whether they fit this machine.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Download, verify and prepare a model (default: the manifest's default).
    Fetch {
        name: Option<String>,
        /// Skip the SIMD-friendly requantization.
        #[arg(long)]
        no_optimize: bool,
    },
    /// Print the path of the file the engine would load.
    Path { name: Option<String> },
}

fn init_logging() {
    let filter = std::env::var("TANDEM_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        // mistral.rs warns about PagedAttention on every CPU load; nothing for users to act on.
        .unwrap_or_else(|_| "warn,mistralrs_core=error".into());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .init();
}

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse();
    // Tandem's data and config directories are this user's only (the index holds the text of
    // sensitive folders, the conversations restored originals).
    if let Err(e) = tandem_core::private_fs::harden_own_dirs() {
        tracing::warn!(error = %e, "cannot make Tandem's directories private");
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn settings() -> Result<Settings> {
    RawConfig::load()
        .context("invalid configuration")?
        .validate()
        .context("invalid configuration")
}

/// Wrap a core error so its stable code shows in the message.
fn coded<E: ErrorCode + std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::anyhow!("[{}] {}", e.code(), e)
}

/// Loads the scanner and runs `f` with it off the async workers (scanning is CPU work).
async fn with_scanner(
    settings: &Settings,
    rules: Option<std::path::PathBuf>,
    f: impl FnOnce(&tandem_core::sensitivity::Scanner) -> Result<()> + Send + 'static,
) -> Result<()> {
    let models_dir = settings.models_dir.clone();
    tokio::task::spawn_blocking(move || f(&scan::scanner(&models_dir, rules, false)?)).await?
}

async fn run(cli: Cli) -> Result<()> {
    let settings = settings()?;
    match cli.command {
        Command::Probe { json } => probe(&settings, json).await,
        Command::Scan {
            input:
                ScanInput {
                    file,
                    rules,
                    sensitive_source,
                },
            jsonl,
        } => {
            with_scanner(&settings, rules, move |scanner| match jsonl {
                true => scan::scan_jsonl(scanner, file.as_deref(), sensitive_source),
                false => scan::scan_human(scanner, file.as_deref(), sensitive_source),
            })
            .await
        }
        Command::Redact {
            input:
                ScanInput {
                    file,
                    rules,
                    sensitive_source,
                },
            jsonl,
        } => {
            with_scanner(&settings, rules, move |scanner| match jsonl {
                true => scan::redact_jsonl(scanner, file.as_deref(), sensitive_source),
                false => scan::redact(scanner, file.as_deref(), sensitive_source),
            })
            .await
        }
        Command::Extract {
            file,
            json,
            rules,
            sensitive_source,
        } => {
            let doc = tandem_core::extract::extract(&file, &Default::default())
                .await
                .map_err(coded)?;
            with_scanner(&settings, rules, move |scanner| {
                scan::extract_report(scanner, &file, doc, json, sensitive_source)
            })
            .await
        }
        Command::Folders { command } => folders::folders_cmd(command),
        Command::Index { command } => folders::index_cmd(&settings, command).await,
        Command::Search { query, json, limit } => folders::search_cmd(query, limit, json).await,
        Command::Models { command } => models_cmd(&settings, command).await,
        Command::Keys { command } => cloud::keys_cmd(command).await,
        Command::Cloud { command } => cloud::cloud_cmd(command).await,
        Command::Route {
            jsonl: _,
            local_class,
            policy,
        } => {
            let class = local_class.parse().map_err(anyhow::Error::msg)?;
            let policy = match policy {
                Some(p) => p.parse().map_err(anyhow::Error::msg)?,
                None => settings.policy,
            };
            orchestrate::route_jsonl(&settings, class, policy).await
        }
        Command::Answer {
            jsonl: _,
            local,
            policy,
            max_tokens,
        } => {
            let policy = match policy {
                Some(p) => p.parse().map_err(anyhow::Error::msg)?,
                None => settings.policy,
            };
            orchestrate::answer_jsonl(&settings, policy, local, max_tokens).await
        }
        Command::Serve {
            port,
            rotate_token,
            policy,
            model,
        } => {
            let policy = match policy {
                Some(p) => p.parse().map_err(anyhow::Error::msg)?,
                None => settings.policy,
            };
            let mut settings = settings;
            settings.model = model.or(settings.model);
            serve::serve(&settings, port, rotate_token, policy).await
        }
        Command::Mcp { http: false, .. } => mcp::serve(settings).await,
        Command::Mcp { http: true, port } => mcp::serve_http(settings, port).await,
        Command::Ledger { json, limit } => orchestrate::ledger_cmd(json, limit).await,
        Command::Conversations { command } => {
            orchestrate::conversations_cmd(command, settings.keep_conversations_days).await
        }
        Command::Ask {
            local,
            from_folders,
            attach,
            conversation,
            policy,
            explain,
            agent,
            cloud,
            needs,
            budget,
            json,
            model,
            model_file,
            max_tokens,
            threads,
            temperature,
            prompt,
        } => {
            if !local {
                let args = orchestrate::AskArgs {
                    prompt: prompt.join(" "),
                    from_folders,
                    attach,
                    conversation,
                    policy: match policy {
                        Some(p) => p.parse().map_err(anyhow::Error::msg)?,
                        None => settings.policy,
                    },
                    explain,
                    json,
                    agent,
                    cloud,
                    needs,
                    budget,
                    max_tokens,
                    temperature,
                };
                let mut settings = settings;
                settings.model = model.or(settings.model);
                settings.threads = threads.or(settings.threads);
                return orchestrate::ask(&settings, args).await;
            }
            let mut settings = settings;
            settings.model = model.or(settings.model);
            settings.threads = threads.or(settings.threads);
            let request = GenerateRequest {
                messages: vec![local::ChatMessage::user(prompt.join(" "))],
                max_tokens,
                temperature,
                logprobs: None,
                choices: Vec::new(),
                plain: false,
                stop: Vec::new(),
            };
            ask_local(&settings, model_file, request, json).await
        }
    }
}

async fn probe(settings: &Settings, json: bool) -> Result<()> {
    let manifest = Manifest::load(&settings.models_dir).map_err(coded)?;
    let hw = tokio::task::spawn_blocking(hardware::probe).await?;
    let rec = hardware::recommend(&hw, &manifest, BuildCaps::current());
    if json {
        let out = json!({
            "schema_version": hardware::PROBE_SCHEMA_VERSION,
            "hardware": hw,
            "recommendation": rec,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    const GB: f64 = (1u64 << 30) as f64;
    println!("Machine   {} {} · {}", hw.os, hw.arch, hw.cpu.brand);
    let hybrid = match (hw.cpu.performance_cores, hw.cpu.efficiency_cores) {
        (Some(p), Some(e)) => format!(" ({p} performance + {e} efficiency)"),
        _ => String::new(),
    };
    println!(
        "Cores     {} physical, {} logical{hybrid}",
        hw.cpu.physical_cores, hw.cpu.logical_cores
    );
    let s = &hw.cpu.simd;
    let feats: Vec<&str> = [
        ("AVX2", s.avx2),
        ("AVX-512", s.avx512f),
        ("FMA", s.fma),
        ("F16C", s.f16c),
        ("NEON", s.neon),
    ]
    .iter()
    .filter(|f| f.1)
    .map(|f| f.0)
    .collect();
    println!(
        "SIMD      {} (this build uses AVX2: {})",
        if feats.is_empty() {
            "none".into()
        } else {
            feats.join(", ")
        },
        s.build_uses_avx2
    );
    println!(
        "Memory    {:.1} GB total, {:.1} GB available",
        hw.memory.total_bytes as f64 / GB,
        hw.memory.available_bytes as f64 / GB
    );
    if hw.gpus.is_empty() {
        println!("GPU       none found");
    }
    for g in &hw.gpus {
        let mem = match (g.vram_bytes, g.working_set_bytes) {
            (Some(v), _) => format!("{:.1} GB VRAM", v as f64 / GB),
            (None, Some(w)) => format!("unified memory, {:.1} GB working set", w as f64 / GB),
            _ => "shared memory".into(),
        };
        println!("GPU       {} · {mem}", g.name);
    }
    if hw.npus.is_empty() {
        println!("NPU       none found");
    }
    for n in &hw.npus {
        let tops = n
            .tops
            .map(|t| format!("{t} TOPS"))
            .unwrap_or_else(|| "TOPS unknown".into());
        println!("NPU       {} · {tops} · {}", n.name, n.usage);
    }
    let power = match hw.power.battery_percent {
        Some(p) => format!("{:?}, battery {p:.0}%", hw.power.source),
        None => format!("{:?}", hw.power.source),
    };
    println!("Power     {power}");
    println!();
    println!(
        "Device    {:?} · {} threads · {:.1} GB budget for a model",
        rec.device,
        rec.threads,
        rec.memory_budget_bytes as f64 / GB
    );
    println!("Tier      {:?}", rec.tier);
    println!(
        "Recommend {}",
        rec.recommended_model.as_deref().unwrap_or("(none fits)")
    );
    for m in &rec.models {
        let speed = m
            .est_decode_tok_s
            .map(|t| format!("~{t:.0} tok/s"))
            .unwrap_or_else(|| "speed n/a".into());
        println!(
            "  {} {:<28} {:>10}  {}",
            if m.fits { "✓" } else { "✗" },
            m.name,
            speed,
            m.reason
        );
    }
    for n in &rec.notes {
        println!("Note      {n}");
    }
    Ok(())
}

async fn models_cmd(settings: &Settings, command: ModelsCommand) -> Result<()> {
    let manifest = Manifest::load(&settings.models_dir).map_err(coded)?;
    match command {
        ModelsCommand::List { json } => {
            let hw = tokio::task::spawn_blocking(hardware::probe).await?;
            let rec = hardware::recommend(&hw, &manifest, BuildCaps::current());
            let rows: Vec<_> = manifest
                .models
                .iter()
                .map(|m| {
                    let installed = models::installed_file(&settings.models_dir, m);
                    let fit = rec.models.iter().find(|f| f.name == m.name);
                    json!({
                        "name": m.name,
                        "default": m.name == manifest.default,
                        "recommended": rec.recommended_model.as_deref() == Some(m.name.as_str()),
                        "architecture": m.architecture,
                        "parameters_b": m.parameters_b,
                        "quantization": m.quantization,
                        "size": m.size,
                        "source": match &m.source { models::ModelSource::Pypi { .. } => "pypi", models::ModelSource::Url { .. } => "url" },
                        "license": m.license,
                        "installed": installed,
                        "fits": fit.map(|f| f.fits),
                    })
                })
                .collect();
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                for (m, r) in manifest.models.iter().zip(&rows) {
                    let flags = format!(
                        "{}{}",
                        if r["default"] == true { " default" } else { "" },
                        if r["recommended"] == true {
                            " recommended"
                        } else {
                            ""
                        }
                    );
                    println!(
                        "{:<28} {:>6.2}B {:<7} {:>8.0} MB  {:<10} {}{}",
                        m.name,
                        m.parameters_b,
                        m.quantization,
                        m.size as f64 / 1e6,
                        if r["installed"].is_null() {
                            "-"
                        } else {
                            "installed"
                        },
                        if r["fits"] == true { "fits" } else { "too big" },
                        flags
                    );
                }
            }
            Ok(())
        }
        ModelsCommand::Fetch { name, no_optimize } => {
            let name = name.unwrap_or_else(|| manifest.default.clone());
            let spec = manifest
                .get(&name)
                .ok_or_else(|| coded(models::ModelError::UnknownModel(name.clone())))?;
            let mut opts = FetchOptions::new(&settings.models_dir);
            opts.optimize = !no_optimize;
            let label = name.clone();
            let report = models::fetch_model(spec, &opts, move |p| match p {
                FetchProgress::Downloading {
                    done_bytes,
                    total_bytes,
                } => {
                    let pct = total_bytes
                        .map(|t| format!(" ({:.0}%)", done_bytes as f64 * 100.0 / t.max(1) as f64))
                        .unwrap_or_default();
                    eprint!("\r{label}: {:.1} MB{pct}   ", done_bytes as f64 / 1e6);
                    let _ = std::io::stderr().flush();
                }
                FetchProgress::Verifying => eprintln!("\n{label}: verifying sha256"),
                FetchProgress::Optimizing { to } => {
                    eprintln!("{label}: converting to {to} for faster CPU kernels (once)")
                }
            })
            .await
            .map_err(coded)?;
            if report.already_present {
                eprintln!("{name}: already present and verified");
            } else {
                eprintln!(
                    "{name}: {} bytes, sha256 {} (verified by {})",
                    report.bytes, report.sha256, report.verified_by
                );
            }
            println!(
                "{}",
                report.optimized.as_ref().unwrap_or(&report.path).display()
            );
            Ok(())
        }
        ModelsCommand::Path { name } => {
            let (_, path) =
                models::resolve(&settings.models_dir, &manifest, name.as_deref()).map_err(coded)?;
            println!("{}", path.display());
            Ok(())
        }
    }
}

async fn ask_local(
    settings: &Settings,
    model_file: Option<std::path::PathBuf>,
    request: GenerateRequest,
    json: bool,
) -> Result<()> {
    let engine = match model_file {
        Some(path) => {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut opts = local::EngineOptions::new(name, path);
            opts.threads = settings.threads;
            opts.dtype = settings.dtype;
            local::MistralEngine::load(opts, EventBus::new()).await
        }
        None => local::load_configured(settings, EventBus::new()).await,
    }
    .map_err(coded)?;
    let mut stream = engine.generate(request).map_err(coded)?;
    let mut stdout = std::io::stdout();
    let mut text = String::new();
    while let Some(ev) = stream.next().await {
        match ev.map_err(coded)? {
            StreamEvent::Token { text: t } => {
                stdout.write_all(t.as_bytes())?;
                stdout.flush()?;
                text.push_str(&t);
            }
            StreamEvent::Done { metrics } => {
                writeln!(stdout)?;
                if json {
                    let model = engine.model();
                    let line = json!({ "text": text, "metrics": metrics, "model": model });
                    writeln!(stdout, "{}", serde_json::to_string(&line)?)?;
                }
                return Ok(());
            }
        }
    }
    anyhow::bail!("the local engine stopped before finishing")
}
