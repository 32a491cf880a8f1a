//! Watched folders in Settings: add one through the native folder dialog, mark it sensitive
//! or normal, remove it, and index now. Passes run on a blocking thread and report progress to
//! the windows as `tandem://index` events. The page only names folders already in the list.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tandem_core::extract::Limits;
use tandem_core::index::{Folder, Folders, Index, PassStats, Status};
use tauri::{AppHandle, Emitter, Manager, Runtime, State};

use super::{bad_input, internal, CommandError};
use crate::AppState;

#[derive(Debug, Serialize, ts_rs::TS)]
pub struct FoldersView {
    pub folders: Vec<Folder>,
    pub status: Status,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum IndexEvent {
    Progress { stats: PassStats },
    Done { stats: PassStats },
    Failed { error: CommandError },
}

fn load(state: &AppState) -> Result<Folders, CommandError> {
    Ok(Folders::load(&state.paths.folders)?)
}

/// Adds (or re-marks) a folder; the next pass indexes it.
pub async fn add_path(
    state: &AppState,
    path: PathBuf,
    sensitive: bool,
) -> Result<Folder, CommandError> {
    let s = state.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let mut f = load(&s)?;
        let folder = f.add_with(&path, sensitive, Vec::new(), Vec::new())?;
        f.save(&s.paths.folders)?;
        Ok(folder)
    })
    .await
    .map_err(internal)?
}

/// One indexing pass over every folder, with progress events; the result at the end.
pub async fn index_pass<R: Runtime>(app: AppHandle<R>) -> Result<PassStats, CommandError> {
    let state = app.state::<AppState>().inner().clone();
    // A pass asked for while another runs waits for it, then runs (it may see newer folders).
    let _one_at_a_time = state.indexing.clone().lock_owned().await;
    let scanner = state.scanner().await?;
    let a = app.clone();
    let res = tauri::async_runtime::spawn_blocking(move || -> Result<PassStats, CommandError> {
        let folders = load(&state)?.folders;
        let mut index = Index::open(&state.paths.index, Limits::default())?
            .keep_text_days(state.settings.keep_index_days);
        let mut last = std::time::Instant::now();
        Ok(index.pass(&folders, &scanner, |stats| {
            // At most ten progress events a second: the page only needs to look alive.
            if last.elapsed().as_millis() >= 100 {
                last = std::time::Instant::now();
                let _ = a.emit(
                    "tandem://index",
                    IndexEvent::Progress {
                        stats: stats.clone(),
                    },
                );
            }
        })?)
    })
    .await
    .map_err(internal)?;
    let _ = match &res {
        Ok(stats) => {
            super::notify(
                &app,
                "Indexing finished",
                &format!(
                    "{} files seen: {} indexed, {} unchanged, {} failed",
                    stats.seen, stats.indexed, stats.unchanged, stats.failed
                ),
            );
            app.emit(
                "tandem://index",
                IndexEvent::Done {
                    stats: stats.clone(),
                },
            )
        }
        Err(e) => {
            super::notify(&app, "Indexing failed", &e.message);
            app.emit("tandem://index", IndexEvent::Failed { error: e.clone() })
        }
    };
    res
}

#[tauri::command]
pub async fn folders(state: State<'_, AppState>) -> Result<FoldersView, CommandError> {
    let s = state.inner().clone();
    tauri::async_runtime::spawn_blocking(move || {
        let folders = load(&s)?.folders;
        let status = Index::open(&s.paths.index, Limits::default())?.status()?;
        Ok(FoldersView { folders, status })
    })
    .await
    .map_err(internal)?
}

/// Opens the native folder dialog; the chosen folder is added and indexed in the background.
#[tauri::command]
pub async fn add_folder<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    sensitive: bool,
) -> Result<Option<Folder>, CommandError> {
    let Some(path) = super::ask_dialog(&app, &state, super::Dialog::Folder)
        .await?
        .pop()
    else {
        return Ok(None);
    };
    let folder = add_path(&state, path, sensitive).await?;
    tauri::async_runtime::spawn(index_pass(app));
    Ok(Some(folder))
}

/// Only a folder that is already watched can be changed from the page.
fn known(state: &AppState, path: &str) -> Result<(Folders, Folder), CommandError> {
    let f = load(state)?;
    let found = f
        .folders
        .iter()
        .find(|x| x.path == Path::new(path))
        .cloned()
        .ok_or_else(|| bad_input(format!("{path} is not a watched folder")))?;
    Ok((f, found))
}

#[tauri::command]
pub async fn set_folder_sensitive<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    path: String,
    sensitive: bool,
) -> Result<Folder, CommandError> {
    let (_, folder) = known(&state, &path)?;
    let f = add_path(&state, folder.path, sensitive).await?;
    // Files keep the provenance they were indexed with: re-index so the mark applies now.
    tauri::async_runtime::spawn(index_pass(app));
    Ok(f)
}

#[tauri::command]
pub async fn remove_folder<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    path: String,
) -> Result<bool, CommandError> {
    let (mut f, folder) = known(&state, &path)?;
    f.remove(&folder.path);
    f.save(&state.paths.folders)?;
    // The pass prunes the removed folder's files from the index.
    tauri::async_runtime::spawn(index_pass(app));
    Ok(true)
}

#[tauri::command]
pub async fn index_now<R: Runtime>(app: AppHandle<R>) -> Result<PassStats, CommandError> {
    index_pass(app).await
}
