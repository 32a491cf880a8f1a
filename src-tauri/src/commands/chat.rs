//! Chat: a question (with dropped files and the conversation so far) goes through the
//! orchestrator; its events stream to the window through a Channel; the finished turn is
//! stored on the device. "What left this device" reads the ledger rows of the turn's task.

use serde::Serialize;
use tandem_core::conversations::{history, ConversationInfo, Document, Turn};
use tandem_core::ledger::LedgerEntry;
use tandem_core::router::run::{RunEvent, RunOptions};
use tandem_core::router::Task;
use tauri::ipc::Channel;
use tauri::State;
use tokio::sync::{mpsc, oneshot};

use super::{bad_input, internal, CommandError};
use crate::AppState;

#[derive(Debug, Serialize)]
pub struct Asked {
    pub conversation: String,
    pub turn: Turn,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
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
    let earlier = match &conversation {
        Some(id) => {
            let (s, id) = (store.clone(), id.clone());
            tauri::async_runtime::spawn_blocking(move || s.turns(&id))
                .await
                .map_err(internal)??
        }
        None => Vec::new(),
    };
    let parts = state.assembled().await?;
    let names = files.iter().map(|a| a.name.clone()).collect();
    let documents = files
        .iter()
        .map(|a| Document::keep(&a.name, &a.text))
        .collect();
    let job = Task {
        prompt: prompt.clone(),
        attachments: files,
        history: history(&earlier),
        policy: state.policy(),
    };
    let opts = RunOptions {
        task_id: task.clone(),
        max_tokens: max_tokens.unwrap_or(512),
        ..RunOptions::default()
    };
    let started = std::time::Instant::now();
    let (stop_tx, mut stop_rx) = oneshot::channel();
    state.runs_insert(task.clone(), stop_tx);
    let (tx, mut rx) = mpsc::channel(256);
    let orch = parts.orchestrator.clone();
    let mut runner = tauri::async_runtime::spawn(async move { orch.run(job, opts, tx).await });

    let mut turn = Turn {
        task: task.clone(),
        ts_ms: now_ms(),
        question: prompt,
        attachments: names,
        documents,
        ..Turn::default()
    };
    let result = loop {
        tokio::select! {
            ev = rx.recv() => match ev {
                Some(ev) => {
                    match &ev {
                        RunEvent::Text { text } => turn.answer.push_str(text),
                        RunEvent::Plan { plan } => turn.plan = serde_json::to_value(plan).ok(),
                        RunEvent::Notice { text } => turn.notices.push(text.clone()),
                        RunEvent::Step { .. } => {}
                    }
                    // A closed window ends the channel: the answer stops like a stop click.
                    if on_event.send(ev).is_err() {
                        runner.abort();
                        break None;
                    }
                }
                // The run has ended and sent everything: its result is next.
                None => break Some((&mut runner).await),
            },
            _ = &mut stop_rx => {
                runner.abort();
                break None;
            }
        }
    };
    state.runs_remove(&task);
    turn.elapsed_ms = started.elapsed().as_millis() as u64;
    match result {
        None => turn.stopped = true,
        Some(Ok(Ok(summary))) => turn.summary = serde_json::to_value(&summary).ok(),
        Some(Ok(Err(e))) => {
            let info = CommandError::from(e);
            turn.error = Some(info.code.clone());
            turn.notices.push(info.message.clone());
            store_turn(&state, conversation.as_deref(), &turn).await?;
            return Err(info);
        }
        Some(Err(e)) => return Err(internal(e)),
    }
    // Sent (or stopped after sending): the files are used up.
    for id in &attachments {
        state.staged_remove(id);
    }
    let conversation = store_turn(&state, conversation.as_deref(), &turn).await?;
    Ok(Asked { conversation, turn })
}

async fn store_turn(
    state: &AppState,
    conversation: Option<&str>,
    turn: &Turn,
) -> Result<String, CommandError> {
    let store = state.conversations().await?;
    let (c, t) = (conversation.map(str::to_string), turn.clone());
    Ok(
        tauri::async_runtime::spawn_blocking(move || store.append(c.as_deref(), &t))
            .await
            .map_err(internal)??,
    )
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
    let store = state.conversations().await?;
    Ok(tauri::async_runtime::spawn_blocking(move || store.list())
        .await
        .map_err(internal)??)
}

#[tauri::command]
pub async fn conversation(
    state: State<'_, AppState>,
    id: String,
) -> Result<Vec<Turn>, CommandError> {
    let store = state.conversations().await?;
    Ok(
        tauri::async_runtime::spawn_blocking(move || store.turns(&id))
            .await
            .map_err(internal)??,
    )
}

#[tauri::command]
pub async fn delete_conversation(
    state: State<'_, AppState>,
    id: String,
) -> Result<bool, CommandError> {
    let store = state.conversations().await?;
    Ok(
        tauri::async_runtime::spawn_blocking(move || store.delete(&id))
            .await
            .map_err(internal)??,
    )
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
