//! Chat: a question (with dropped files and the conversation so far) goes through the
//! orchestrator; its events stream to the window through a Channel; the finished turn is
//! stored on the device. "What left this device" reads the ledger rows of the turn's task.

use serde::Serialize;
use tandem_core::conversations::{ConversationInfo, Turn};
use tandem_core::host::{self, TurnRequest};
use tandem_core::ledger::LedgerEntry;
use tandem_core::router::run::RunEvent;
use tauri::ipc::Channel;
use tauri::State;
use tokio::sync::oneshot;

use super::{bad_input, CommandError};
use crate::AppState;

#[derive(Debug, Serialize, ts_rs::TS)]
pub struct Asked {
    pub conversation: String,
    pub turn: Turn,
}

/// Task ids come from the page (so it can stop a run before the answer ends): short and plain.
fn check_task_id(task: &str) -> Result<(), CommandError> {
    let ok = !task.is_empty()
        && task.len() <= 64
        && task
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    ok.then_some(())
        .ok_or_else(|| bad_input("task ids are 1-64 letters, digits, - or _"))
}

/// Asks a question. The answer streams on `on_event`; the stored turn comes back. A stopped
/// answer is kept with what had arrived; a failed one is stored with its error code and the
/// dropped files stay attached for another try.
#[tauri::command]
#[allow(clippy::too_many_arguments)]
pub async fn ask(
    state: State<'_, AppState>,
    conversation: Option<String>,
    prompt: String,
    attachments: Vec<String>,
    task: String,
    max_tokens: Option<usize>,
    on_event: Channel<RunEvent>,
) -> Result<Asked, CommandError> {
    check_task_id(&task)?;
    if prompt.trim().is_empty() {
        return Err(bad_input("the question is empty"));
    }
    let files = attachments
        .iter()
        .map(|id| {
            state
                .staged_get(id)
                .ok_or_else(|| bad_input(format!("attachment {id} is no longer available")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let store = state.conversations().await?;
    let parts = state.assembled().await?;
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    state.runs_insert(task.clone(), stop_tx);
    let req = TurnRequest {
        conversation,
        prompt,
        attachments: files,
        task: task.clone(),
        policy: state.policy(),
        max_tokens: max_tokens.unwrap_or(512),
        ..TurnRequest::default()
    };
    // A closed window ends the channel: the answer stops like a stop click.
    let out = host::run_turn(
        &parts.orchestrator,
        Some(&store),
        req,
        |ev| on_event.send(ev).is_ok(),
        async {
            let _ = stop_rx.await;
        },
    )
    .await;
    state.runs_remove(&task);
    let out = out?;
    if let Some(e) = out.error {
        // Failed: the files stay attached for another try.
        return Err(e.into());
    }
    for id in &attachments {
        state.staged_remove(id);
    }
    Ok(Asked {
        conversation: out.conversation,
        turn: out.turn,
    })
}

/// Stops a running answer; false when it had already ended.
#[tauri::command]
pub async fn stop(state: State<'_, AppState>, task: String) -> Result<bool, CommandError> {
    Ok(state
        .runs_remove(&task)
        .map(|tx| tx.send(()).is_ok())
        .unwrap_or(false))
}

#[tauri::command]
pub async fn conversations(
    state: State<'_, AppState>,
) -> Result<Vec<ConversationInfo>, CommandError> {
    state.with_conversations(|s| s.list()).await
}

#[tauri::command]
pub async fn conversation(
    state: State<'_, AppState>,
    id: String,
) -> Result<Vec<Turn>, CommandError> {
    state.with_conversations(move |s| s.turns(&id)).await
}

#[tauri::command]
pub async fn delete_conversation(
    state: State<'_, AppState>,
    id: String,
) -> Result<bool, CommandError> {
    state.with_conversations(move |s| s.delete(&id)).await
}

#[tauri::command]
pub async fn rename_conversation(
    state: State<'_, AppState>,
    id: String,
    title: String,
) -> Result<(), CommandError> {
    state
        .with_conversations(move |s| s.rename(&id, &title))
        .await
}

/// Conversations matching every word of `query` in their title, questions or answers (on this
/// device; an empty query lists them all).
#[tauri::command]
pub async fn search_conversations(
    state: State<'_, AppState>,
    query: String,
) -> Result<Vec<ConversationInfo>, CommandError> {
    state.with_conversations(move |s| s.search(&query)).await
}

/// Writes one conversation as Markdown or JSON where the user chooses (0600: it holds
/// originals); the path, or `None` when the dialog was cancelled.
#[tauri::command]
pub async fn export_conversation<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
    format: tandem_core::conversations::ExportFormat,
) -> Result<Option<String>, CommandError> {
    let Some(path) = super::ask_dialog(&app, &state, super::Dialog::SaveConversation(format))
        .await?
        .pop()
    else {
        return Ok(None);
    };
    let body = state
        .with_conversations(move |s| s.export(&id, format))
        .await?;
    let p = path.clone();
    tauri::async_runtime::spawn_blocking(move || {
        tandem_core::private_fs::write_private(&p, body.as_bytes()).map_err(|e| CommandError {
            code: "app.write_failed".into(),
            message: format!("cannot write {}: {e}", p.display()),
        })
    })
    .await
    .map_err(super::internal)??;
    Ok(Some(path.display().to_string()))
}

/// The ledger rows of one answer: exactly what left the device for it (empty: nothing did).
#[tauri::command]
pub async fn what_left(
    state: State<'_, AppState>,
    task: String,
) -> Result<Vec<LedgerEntry>, CommandError> {
    check_task_id(&task)?;
    Ok(state.ledger().await?.for_task(&task).await?)
}
