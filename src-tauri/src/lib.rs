//! The Tauri shell: windows, tray, global shortcut, IPC commands and events around
//! tandem-core. No logic lives here; each command is a few lines that call the core.

mod bindings;
mod commands;
pub mod state;
mod tray;

use tauri::{
    DragDropEvent, Emitter, Manager, Runtime, WebviewUrl, WebviewWindowBuilder, WindowEvent,
};

pub use commands::attach::{stage, stage_all, AttachEvent, Chip};
pub use commands::folders::add_path as add_folder_path;
pub use state::{AppState, DataPaths, Prefs};

/// When `run` began (for the "window interactive" figure).
pub static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Quick ask opens with this unless the user chose another (Cmd on macOS, Ctrl elsewhere).
pub const DEFAULT_SHORTCUT: &str = "CommandOrControl+Shift+Space";

/// Label of the small frameless quick-ask window (made on first use, then hidden and shown).
pub const QUICK: &str = "quick";

/// Pause or resume the cloud: saved in the prefs, applied to the egress guard now, and told to
/// every window (the tray and the settings page both switch it).
pub async fn apply_pause<R: Runtime>(app: &tauri::AppHandle<R>, paused: bool) {
    let state = app.state::<AppState>().inner().clone();
    let prefs = state.update_prefs(|p| p.cloud_paused = paused).await;
    state.apply_pause_now(paused).await;
    tray::set_paused(app, paused);
    let _ = app.emit("tandem://prefs", &prefs);
}

/// The quick-ask window, made on first use: a hidden webview would cost ~170 MB (its own
/// WebKit process) for a window many sessions never open.
fn open_quick<R: Runtime>(app: &tauri::AppHandle<R>) {
    let app = app.clone();
    // Built off the shortcut/menu callback, which runs on the event loop (building a window
    // there can deadlock on some platforms).
    tauri::async_runtime::spawn(async move {
        let built = WebviewWindowBuilder::new(&app, QUICK, WebviewUrl::App("quick.html".into()))
            .title("Tandem quick ask")
            .inner_size(640.0, 380.0)
            .decorations(false)
            .always_on_top(true)
            .skip_taskbar(true)
            .resizable(false)
            .center()
            .focused(true)
            .build();
        if let Err(e) = built {
            tracing::warn!("cannot open quick ask: {e}");
        }
    });
}

/// Shows quick ask (focused, input ready), or hides it when it is showing.
pub fn toggle_quick<R: Runtime>(app: &tauri::AppHandle<R>) {
    tracing::debug!("quick ask toggled");
    let Some(w) = app.get_webview_window(QUICK) else {
        open_quick(app);
        return;
    };
    if w.is_visible().unwrap_or(false) {
        let _ = w.hide();
    } else {
        let _ = w.center();
        let _ = w.show();
        let _ = w.set_focus();
        let _ = w.emit("tandem://quick-shown", ());
    }
}

pub fn show_main<R: Runtime>(app: &tauri::AppHandle<R>) {
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
    }
}

/// Install the app's commands and state on any runtime (the mock runtime in tests).
pub fn build<R: Runtime>(builder: tauri::Builder<R>, state: AppState) -> tauri::Builder<R> {
    builder
        .manage(state)
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .invoke_handler(tauri::generate_handler![
            commands::local::ask_local,
            commands::local::local_model_status,
            commands::hardware::probe_hardware,
            commands::chat::ask,
            commands::chat::stop,
            commands::chat::conversations,
            commands::chat::conversation,
            commands::chat::delete_conversation,
            commands::chat::rename_conversation,
            commands::chat::search_conversations,
            commands::chat::export_conversation,
            commands::chat::what_left,
            commands::attach::pick_files,
            commands::attach::attach_sample,
            commands::attach::detach_file,
            commands::ledger::ledger,
            commands::ledger::export_ledger,
            commands::settings::get_settings,
            commands::settings::set_policy,
            commands::settings::set_onboarded,
            commands::settings::set_menu_bar_only,
            commands::settings::set_cloud_paused,
            commands::settings::set_shortcut,
            commands::settings::set_key,
            commands::settings::delete_key,
            commands::settings::add_provider,
            commands::settings::set_gateway,
            commands::windows::hide_quick,
            commands::windows::open_main,
            commands::windows::ui_ready,
            commands::folders::folders,
            commands::folders::add_folder,
            commands::folders::set_folder_sensitive,
            commands::folders::remove_folder,
            commands::folders::index_now,
            commands::models::models,
            commands::models::download_model,
            commands::models::choose_model,
        ])
        .on_window_event(|window, event| {
            // Native drops give paths to the shell; the page only ever sees chips.
            if let WindowEvent::DragDrop(DragDropEvent::Drop { paths, .. }) = event {
                let app = window.app_handle().clone();
                tauri::async_runtime::spawn(stage_all(
                    app,
                    window.label().to_string(),
                    paths.clone(),
                ));
            }
            // Quick ask does not hide on blur: without a window manager (Xvfb, some tiling
            // desktops) focus arrives and leaves at once. Esc and the shortcut hide it.
        })
        .setup(|app| {
            let handle = app.handle().clone();
            let state = app.state::<AppState>().inner().clone();
            // A package ships the NER model among its resources (`make deb`): the scanner
            // uses it until the models directory has its own copy.
            if let Ok(dir) = app.path().resource_dir() {
                let _ = state.bundled_ner.set(dir.join("ner"));
            }
            // Forward core events to the windows, and start loading the model now so
            // the first question does not wait for it.
            let mut rx = state.events.subscribe();
            let h = handle.clone();
            tauri::async_runtime::spawn(async move {
                while let Ok(ev) = rx.recv().await {
                    let _ = h.emit("tandem://event", &ev);
                }
            });
            // Pause cloud is one switch shared with `tandem cloud pause|resume` and a running
            // gateway: a change made elsewhere shows in the header and the tray within a second.
            let (s, h) = (state.clone(), handle.clone());
            tauri::async_runtime::spawn(async move {
                let mut shown = s.pause.is_paused();
                let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
                loop {
                    tick.tick().await;
                    let sw = s.pause.clone();
                    let now = tauri::async_runtime::spawn_blocking(move || sw.is_paused())
                        .await
                        .unwrap_or(shown);
                    if now != shown {
                        shown = now;
                        apply_pause(&h, now).await;
                    }
                }
            });
            let s = state.clone();
            tauri::async_runtime::spawn(async move {
                // The scanner (and its names model, ~15 MB with ONNX Runtime) loads on first
                // use — a question, a drop, an indexing pass — not at start: idle memory.
                let _ = s.engine().await;
                if s.prefs().gateway {
                    let port = tandem_core::gateway::DEFAULT_PORT;
                    if let Err(e) = commands::settings::start_gateway(&s, port).await {
                        tracing::warn!("gateway not started: {}", e.message);
                    }
                }
            });
            Ok(())
        })
}

fn init_logging() {
    let filter = std::env::var("TANDEM_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "info".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .try_init();
}

/// The desktop-only parts the mock runtime cannot host: one instance, the global shortcut
/// and the tray. Each degrades to a log line when the desktop lacks it (servers, CI).
fn desktop(builder: tauri::Builder<tauri::Wry>, shortcut: String) -> tauri::Builder<tauri::Wry> {
    use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};
    builder
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            show_main(app)
        }))
        .plugin(
            tauri_plugin_global_shortcut::Builder::new()
                .with_handler(|app, _shortcut, event| {
                    if event.state == ShortcutState::Pressed {
                        toggle_quick(app);
                    }
                })
                .build(),
        )
        .plugin(
            tauri::plugin::Builder::<tauri::Wry, ()>::new("tandem-desktop")
                .setup(move |app, _api| {
                    #[cfg(target_os = "macos")]
                    if app.state::<AppState>().prefs().menu_bar_only {
                        let _ = app.set_activation_policy(tauri::ActivationPolicy::Accessory);
                    }
                    if let Err(e) = app.global_shortcut().register(shortcut.as_str()) {
                        tracing::warn!("quick-ask shortcut {shortcut} not available: {e}");
                    }
                    tray::install(app);
                    Ok(())
                })
                .build(),
        )
}

pub fn run() {
    let _ = STARTED.set(std::time::Instant::now());
    init_logging();
    if let Err(e) = tandem_core::private_fs::harden_own_dirs() {
        tracing::warn!(error = %e, "cannot make Tandem's directories private");
    }
    let state = match AppState::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Tandem cannot start: {e}");
            std::process::exit(2);
        }
    };
    let shortcut = state
        .prefs()
        .shortcut
        .unwrap_or_else(|| DEFAULT_SHORTCUT.to_string());
    let builder = desktop(tauri::Builder::default(), shortcut);
    let result = build(builder, state).run(tauri::generate_context!());
    if let Err(e) = result {
        eprintln!("Tandem stopped with an error: {e}");
        std::process::exit(1);
    }
}
