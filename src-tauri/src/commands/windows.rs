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

/// The page calls this once its script has run: the app logs how long after launch the window
/// became interactive (bench/app.sh reads that line).
#[tauri::command]
pub async fn ui_ready<R: Runtime>(window: tauri::Window<R>) -> Result<u64, CommandError> {
    let ms = crate::STARTED
        .get()
        .map(|t| t.elapsed().as_millis() as u64)
        .unwrap_or(0);
    tracing::info!(window = window.label(), ms, "window interactive");
    Ok(ms)
}
