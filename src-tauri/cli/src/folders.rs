//! `tandem folders`, `tandem index`, `tandem search`: the watched folders and the local index
//! from the command line (everything stays on this device).

use anyhow::Result;
use clap::Subcommand;
use serde_json::json;
use tandem_core::config::Settings;
use tandem_core::extract::Limits;
use tandem_core::index::{self, Folders, Index};

use crate::coded;

#[derive(Subcommand)]
pub enum FoldersCommand {
    /// Watch a folder: --sensitive (everything inside stays local, whatever it says) or
    /// --normal (classified by content).
    Add {
        path: std::path::PathBuf,
        #[arg(long, conflicts_with = "normal", required_unless_present = "normal")]
        sensitive: bool,
        #[arg(long)]
        normal: bool,
        /// Only files matching this glob, relative to the folder (repeatable): `**/*.pdf`.
        #[arg(long)]
        include: Vec<String>,
        /// Skip files matching this glob (repeatable; wins over --include): `drafts/**`.
        #[arg(long)]
        exclude: Vec<String>,
    },
    /// The watched folders.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Stop watching a folder (its files leave the index at the next pass).
    Remove { path: std::path::PathBuf },
}

#[derive(Subcommand)]
pub enum IndexCommand {
    /// Index the watched folders now (resumes an interrupted pass; unchanged files are skipped).
    Run {
        #[arg(long)]
        json: bool,
    },
    /// Index now, then keep the index current as files change (one JSON line per event on
    /// stdout: {"event": "indexed"|"unchanged"|"failed"|"removed"|"rescanned"|"warning", ...}).
    /// Ctrl-C stops.
    Watch {
        /// Poll every N milliseconds instead of using OS events (network file systems).
        #[arg(long)]
        poll_ms: Option<u64>,
    },
    /// Files indexed, failed and queued, by verdict, with the failures' errors.
    Status {
        #[arg(long)]
        json: bool,
    },
}

pub fn folders_cmd(command: FoldersCommand) -> Result<()> {
    let file = Folders::file();
    let mut folders = Folders::load(&file).map_err(coded)?;
    match command {
        FoldersCommand::Add {
            path,
            sensitive,
            include,
            exclude,
            ..
        } => {
            let f = folders
                .add_with(&path, sensitive, include, exclude)
                .map_err(coded)?;
            folders.save(&file).map_err(coded)?;
            println!(
                "watching {} ({})",
                f.path.display(),
                if f.sensitive { "sensitive" } else { "normal" }
            );
        }
        FoldersCommand::List { json } => {
            if json {
                println!("{}", serde_json::to_string(&folders.folders)?);
            } else if folders.folders.is_empty() {
                println!("no folders (tandem folders add PATH --sensitive|--normal)");
            }
            if !json {
                for f in &folders.folders {
                    println!(
                        "{}\t{}",
                        if f.sensitive { "sensitive" } else { "normal" },
                        f.path.display()
                    );
                }
            }
        }
        FoldersCommand::Remove { path } => {
            if !folders.remove(&path) {
                anyhow::bail!("{} is not a watched folder", path.display());
            }
            folders.save(&file).map_err(coded)?;
            println!("no longer watching {}", path.display());
        }
    }
    Ok(())
}

pub async fn index_cmd(settings: &Settings, command: IndexCommand) -> Result<()> {
    let models = settings.models_dir.clone();
    let keep_index_days = settings.keep_index_days;
    tokio::task::spawn_blocking(move || -> Result<()> {
        let mut idx = Index::open(&index::default_path(), Limits::default())
            .map_err(coded)?
            .keep_text_days(keep_index_days);
        match command {
            IndexCommand::Run { json } => {
                let folders = Folders::load(&Folders::file()).map_err(coded)?;
                let scanner = crate::scan::scanner(&models, None, json)?;
                let mut last = std::time::Instant::now();
                let stats = idx
                    .pass(&folders.folders, &scanner, |s| {
                        if !json && last.elapsed().as_secs() >= 2 {
                            eprintln!("… {} files seen, {} indexed", s.seen, s.indexed);
                            last = std::time::Instant::now();
                        }
                    })
                    .map_err(coded)?;
                if json {
                    println!("{}", serde_json::to_string(&stats)?);
                } else {
                    println!(
                        "{} files seen: {} indexed, {} unchanged, {} failed, {} removed",
                        stats.seen, stats.indexed, stats.unchanged, stats.failed, stats.removed
                    );
                }
            }
            IndexCommand::Watch { poll_ms } => {
                let folders = Folders::load(&Folders::file()).map_err(coded)?.folders;
                if folders.is_empty() {
                    anyhow::bail!("no folders to watch (tandem folders add PATH --sensitive|--normal)");
                }
                let scanner = std::sync::Arc::new(crate::scan::scanner(&models, None, true)?);
                let stats = idx.pass(&folders, &scanner, |_| {}).map_err(coded)?;
                eprintln!(
                    "indexed {} files ({} unchanged, {} failed); watching {} folder(s), Ctrl-C stops",
                    stats.indexed, stats.unchanged, stats.failed, folders.len()
                );
                let opts = tandem_core::watcher::WatchOptions {
                    poll: poll_ms.map(std::time::Duration::from_millis),
                    ..Default::default()
                };
                let _w = tandem_core::watcher::FolderWatcher::start(folders, idx, scanner, opts, |ev| {
                    if let Ok(line) = serde_json::to_string(&ev) {
                        println!("{line}");
                    }
                })
                .map_err(coded)?;
                // Until the process is interrupted (the default SIGINT handling ends it).
                loop {
                    std::thread::park();
                }
            }
            IndexCommand::Status { json } => {
                let s = idx.status().map_err(coded)?;
                if json {
                    println!("{}", serde_json::to_string(&s)?);
                } else {
                    println!(
                        "{} files: {} indexed, {} failed, {} past retention, {} queued; {} chunks",
                        s.files, s.indexed, s.failed, s.expired, s.queued, s.chunks
                    );
                    for (v, n) in &s.by_verdict {
                        println!("  {v}: {n}");
                    }
                    for (p, e) in &s.failures {
                        println!("  failed: {p}: {e}");
                    }
                }
            }
        }
        Ok(())
    })
    .await?
}

pub async fn search_cmd(query: String, limit: usize, json: bool) -> Result<()> {
    tokio::task::spawn_blocking(move || -> Result<()> {
        let idx = Index::open(&index::default_path(), Limits::default()).map_err(coded)?;
        let hits = idx.search(&query, limit).map_err(coded)?;
        if json {
            println!(
                "{}",
                serde_json::to_string(&json!({"query": query, "hits": hits}))?
            );
            return Ok(());
        }
        if hits.is_empty() {
            println!("nothing found for {query:?}");
        }
        for h in hits {
            let tag = if h.sensitive_source {
                "sensitive folder".to_string()
            } else {
                h.verdict
                    .map(|v| {
                        serde_json::to_value(v)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                            .unwrap_or_default()
                    })
                    .unwrap_or_default()
            };
            println!("{} ({tag})\n    {}", h.path, h.snippet.replace('\n', " "));
        }
        Ok(())
    })
    .await?
}
