//! Asking the local model: tokens stream to the window through a Channel; the
//! command's own result is the whole answer with its metrics.

use futures::StreamExt;
use serde::Serialize;
use tandem_core::local::{
    GenerateRequest, GenerationMetrics, LoadedModel, LocalError, StreamEvent,
};
use tauri::ipc::Channel;
use tauri::State;

use super::CommandError;
use crate::AppState;

#[derive(Debug, Serialize)]
pub struct Answer {
    pub text: String,
    pub model: String,
    pub metrics: GenerationMetrics,
}

#[tauri::command]
pub async fn ask_local(
    state: State<'_, AppState>,
    prompt: String,
    max_tokens: Option<usize>,
    on_event: Channel<StreamEvent>,
) -> Result<Answer, CommandError> {
    let engine = state.engine().await?;
    let mut request = GenerateRequest::prompt(prompt);
    request.max_tokens = max_tokens.unwrap_or(request.max_tokens);
    let mut stream = engine.generate(request)?;
    let mut text = String::new();
    while let Some(ev) = stream.next().await {
        let ev = ev?;
        if let StreamEvent::Token { text: t } = &ev {
            text.push_str(t);
        }
        // A closed window ends the channel: stop generating (dropping the stream).
        if on_event.send(ev.clone()).is_err() {
            return Err(LocalError::Stopped.into());
        }
        if let StreamEvent::Done { metrics } = ev {
            return Ok(Answer {
                text,
                model: engine.model().name.clone(),
                metrics,
            });
        }
    }
    Err(LocalError::Stopped.into())
}

/// The loaded model, waiting for the load if it is still running.
#[tauri::command]
pub async fn local_model_status(state: State<'_, AppState>) -> Result<LoadedModel, CommandError> {
    Ok(state.engine().await?.model().clone())
}
