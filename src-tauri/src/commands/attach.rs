//! Dropped files: extracted and scanned on the device, shown as chips, attached to the next
//! question. Their text stays in the shell's memory; the page only sees the chip, and it can
//! never name a path for the shell to read (paths come from native drops and dialogs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tandem_core::extract::Limits;
use tandem_core::host;
use tandem_core::sensitivity::{Provenance, Verdict};
use tauri::{AppHandle, Emitter, Manager, Runtime, State};

use super::CommandError;
use crate::AppState;

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct Chip {
    pub id: String,
    pub name: String,
    pub chars: usize,
    pub verdict: Verdict,
    /// Detected items by label ("IBAN_CODE": 3).
    pub counts: BTreeMap<String, u32>,
    /// Extraction notes (text cut at the cap, unreadable parts).
    pub notes: Vec<String>,
}

/// Progress of one file, sent to the window it was dropped on as `tandem://attach`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AttachEvent {
    Reading {
        key: String,
        name: String,
    },
    Ready {
        key: String,
        chip: Chip,
    },
    Failed {
        key: String,
        name: String,
        error: CommandError,
    },
}

/// Extracts and scans one file and stages it for the next question. Paths come from the
/// native drop event or the native file dialog, never from the page.
pub async fn stage(state: &AppState, path: &Path) -> Result<Chip, CommandError> {
    // Which folders are sensitive decides the file's provenance; a folders file that cannot
    // be read is an error, not "nothing is sensitive".
    let file = state.paths.folders.clone();
    let folders =
        tauri::async_runtime::spawn_blocking(move || tandem_core::index::Folders::load(&file))
            .await
            .map_err(super::internal)??;
    let (attachment, notes) = host::attachment(path, &Limits::default(), &folders).await?;
    let scanner = state.scanner().await?;
    let text = attachment.text.clone();
    let provenance = if attachment.sensitive_source {
        Provenance::SensitiveSource
    } else {
        Provenance::Content
    };
    let report = tauri::async_runtime::spawn_blocking(move || scanner.scan_with(&text, provenance))
        .await
        .map_err(super::internal)?;
    let mut counts = BTreeMap::new();
    for s in &report.spans {
        *counts.entry(s.label.clone()).or_insert(0) += 1;
    }
    let chip = Chip {
        id: super::new_id(),
        name: attachment.name.clone(),
        chars: attachment.text.chars().count(),
        verdict: report.verdict,
        counts,
        notes,
    };
    state.staged_insert(chip.id.clone(), attachment);
    Ok(chip)
}

/// Stages files one after another, telling `window` how each is going.
pub async fn stage_all<R: Runtime>(app: AppHandle<R>, window: String, paths: Vec<PathBuf>) {
    let state = app.state::<AppState>().inner().clone();
    for path in paths {
        let key = super::new_id();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        let _ = app.emit_to(
            &window,
            "tandem://attach",
            AttachEvent::Reading {
                key: key.clone(),
                name: name.clone(),
            },
        );
        let ev = match stage(&state, &path).await {
            Ok(chip) => AttachEvent::Ready { key, chip },
            Err(error) => AttachEvent::Failed { key, name, error },
        };
        let _ = app.emit_to(&window, "tandem://attach", ev);
    }
}

/// Opens the native file dialog; chosen files arrive as `tandem://attach` events like drops.
#[tauri::command]
pub async fn pick_files<R: Runtime>(
    app: AppHandle<R>,
    window: tauri::Window<R>,
    state: State<'_, AppState>,
) -> Result<usize, CommandError> {
    let paths = super::ask_dialog(&app, &state, super::Dialog::Files).await?;
    let n = paths.len();
    tauri::async_runtime::spawn(stage_all(app, window.label().to_string(), paths));
    Ok(n)
}

/// The welcome's sample document: a made-up bank statement, written beside the app's data
/// and attached like a drop (the page never names a path; this one is fixed here).
const SAMPLE: &str = include_str!("../../../docs/samples/sample-statement.txt");

#[tauri::command]
pub async fn attach_sample<R: Runtime>(
    app: AppHandle<R>,
    window: tauri::Window<R>,
    state: State<'_, AppState>,
) -> Result<(), CommandError> {
    let path = state.paths.prefs.with_file_name("sample-statement.txt");
    let p = path.clone();
    tauri::async_runtime::spawn_blocking(move || {
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&p, SAMPLE)
    })
    .await
    .map_err(super::internal)?
    .map_err(super::internal)?;
    stage_all(app, window.label().to_string(), vec![path]).await;
    Ok(())
}

/// Removes a chip before it is sent; unknown ids are fine (already sent or removed).
#[tauri::command]
pub async fn detach_file(state: State<'_, AppState>, id: String) -> Result<bool, CommandError> {
    Ok(state.staged_remove(&id).is_some())
}
