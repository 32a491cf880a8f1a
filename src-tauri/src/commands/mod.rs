//! IPC commands, one file per area. Each returns tandem-core's `ErrorInfo`, which
//! carries a stable code the UI keys on.

pub mod attach;
pub mod chat;
pub mod folders;
pub mod hardware;
pub mod ledger;
pub mod local;
pub mod models;
pub mod settings;
pub mod windows;

pub use tandem_core::error::ErrorInfo as CommandError;

pub(crate) fn internal(e: impl std::fmt::Display) -> CommandError {
    CommandError {
        code: "app.internal".into(),
        message: e.to_string(),
    }
}

pub(crate) fn bad_input(message: impl Into<String>) -> CommandError {
    CommandError {
        code: "app.bad_input".into(),
        message: message.into(),
    }
}

/// Which native dialog to open.
pub(crate) enum Dialog {
    /// Files to attach (one at a time when the answer is given in advance).
    Files,
    Folder,
    /// Where to save the ledger export.
    SaveLedger,
    /// Where to save one conversation, as Markdown or JSON.
    SaveConversation(tandem_core::conversations::ExportFormat),
}

/// The paths the user chose in a native dialog (empty when cancelled). An answer queued in
/// `AppState::dialog_answers` is taken instead of asking, so tests drive every command after
/// the dialog for real.
pub(crate) async fn ask_dialog<R: tauri::Runtime>(
    app: &tauri::AppHandle<R>,
    state: &crate::AppState,
    which: Dialog,
) -> Result<Vec<std::path::PathBuf>, CommandError> {
    use tauri_plugin_dialog::DialogExt;
    let queued = state
        .dialog_answers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .pop_front();
    if let Some(answer) = queued {
        return Ok(answer.into_iter().collect());
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let files = app.dialog().file();
    match which {
        Dialog::Files => files.pick_files(move |p| {
            let _ = tx.send(p.unwrap_or_default());
        }),
        Dialog::Folder => files.pick_folder(move |p| {
            let _ = tx.send(p.into_iter().collect());
        }),
        Dialog::SaveLedger => files
            .set_file_name("tandem-ledger.json")
            .add_filter("JSON", &["json"])
            .save_file(move |p| {
                let _ = tx.send(p.into_iter().collect());
            }),
        Dialog::SaveConversation(format) => {
            let (name, filter, ext) = match format {
                tandem_core::conversations::ExportFormat::Markdown => {
                    ("conversation.md", "Markdown", "md")
                }
                tandem_core::conversations::ExportFormat::Json => {
                    ("conversation.json", "JSON", "json")
                }
            };
            files
                .set_file_name(name)
                .add_filter(filter, &[ext])
                .save_file(move |p| {
                    let _ = tx.send(p.into_iter().collect());
                })
        }
    }
    Ok(rx
        .await
        .map_err(internal)?
        .into_iter()
        .filter_map(|p| p.into_path().ok())
        .collect())
}

/// A system notification for long work that finished or failed (the user may be looking at
/// another window). Best effort: without a notification service it is logged and dropped.
pub(crate) fn notify<R: tauri::Runtime>(app: &tauri::AppHandle<R>, title: &str, body: &str) {
    use tauri::Manager;
    let Some(n) = app.try_state::<tauri_plugin_notification::Notification<R>>() else {
        return;
    };
    if let Err(e) = n.builder().title(title).body(body).show() {
        tracing::debug!(error = %e, "no system notification");
    }
}

/// An id for chips and tasks: random, plus a counter so ids stay unique even if the OS
/// random source were to fail.
pub(crate) fn new_id() -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let mut b = [0u8; 8];
    let _ = getrandom::fill(&mut b);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{:016x}{n:04x}", u64::from_le_bytes(b))
}
