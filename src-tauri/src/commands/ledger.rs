//! The egress ledger: browse, totals (with the saving against all-cloud), export as JSON to a
//! file the user picks in a native dialog (the page never names paths to write).

use serde::Serialize;
use tandem_core::ledger::{LedgerEntry, Totals};
use tauri::{AppHandle, Runtime, State};

use super::{internal, CommandError};
use crate::AppState;

#[derive(Debug, Serialize, ts_rs::TS)]
pub struct LedgerView {
    pub entries: Vec<LedgerEntry>,
    pub totals: Totals,
    pub path: String,
}

#[tauri::command]
pub async fn ledger(
    state: State<'_, AppState>,
    limit: Option<usize>,
) -> Result<LedgerView, CommandError> {
    let l = state.ledger().await?;
    Ok(LedgerView {
        entries: l.list(limit.unwrap_or(200).min(10_000)).await?,
        totals: l.totals(None).await?,
        path: l.path().display().to_string(),
    })
}

/// Writes every entry as pretty JSON to a file chosen in a save dialog; returns the path, or
/// None when the user cancelled.
#[tauri::command]
pub async fn export_ledger<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<Option<String>, CommandError> {
    let Some(path) = super::ask_dialog(&app, &state, super::Dialog::SaveLedger)
        .await?
        .pop()
    else {
        return Ok(None);
    };
    let entries = state.ledger().await?.list(usize::MAX >> 1).await?;
    let p = path.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let body = serde_json::to_vec_pretty(&entries).map_err(internal)?;
        // The ledger holds every payload that left: this user only.
        tandem_core::private_fs::write_private(&p, &body).map_err(|e| CommandError {
            code: "app.write_failed".into(),
            message: format!("cannot write {}: {e}", p.display()),
        })
    })
    .await
    .map_err(internal)??;
    Ok(Some(path.display().to_string()))
}
