//! Window chores the page asks for (it has no window permissions of its own).

use tauri::{AppHandle, Manager, Runtime};

use super::CommandError;

/// Esc in quick ask.
#[tauri::command]
pub async fn hide_quick<R: Runtime>(app: AppHandle<R>) -> Result<(), CommandError> {
    if let Some(w) = app.get_webview_window(crate::QUICK) {
        let _ = w.hide();
    }
    Ok(())
}

/// "Open in Tandem" from quick ask: the main window comes forward on that conversation.
#[tauri::command]
pub async fn open_main<R: Runtime>(
    app: AppHandle<R>,
    conversation: Option<String>,
) -> Result<(), CommandError> {
    use tauri::Emitter;
    crate::show_main(&app);
    if let Some(c) = conversation {
        let _ = app.emit_to("main", "tandem://open-conversation", c);
    }
    Ok(())
}
