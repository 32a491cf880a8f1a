//! The tray (menu-bar) icon: Quick ask, Pause cloud, Open Tandem, Quit. Skipped, with a log
//! line, where no tray can exist: on Linux the tray library panics (uncatchably) when
//! libayatana-appindicator is missing, so its presence is checked first.

use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime};

use crate::AppState;

const PAUSE_ID: &str = "pause-cloud";

/// The pause item, kept so the settings page's switch updates the tray's check mark.
struct PauseItem<R: Runtime>(CheckMenuItem<R>);

#[cfg(target_os = "linux")]
fn tray_library_present() -> bool {
    // ld.so.cache lists every library the loader can find by name.
    let names: [&[u8]; 2] = [b"libayatana-appindicator3.so.1", b"libappindicator3.so.1"];
    match std::fs::read("/etc/ld.so.cache") {
        Ok(cache) => names
            .iter()
            .any(|n| cache.windows(n.len()).any(|w| w == *n)),
        Err(_) => false,
    }
}

#[cfg(not(target_os = "linux"))]
fn tray_library_present() -> bool {
    true
}

pub fn install<R: Runtime>(app: &AppHandle<R>) {
    if !tray_library_present() {
        tracing::warn!("no tray: libayatana-appindicator3 is not installed");
        return;
    }
    if let Err(e) = try_install(app) {
        tracing::warn!("no tray: {e}");
    }
}

fn try_install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let paused = app.state::<AppState>().prefs().cloud_paused;
    let quick = MenuItem::with_id(app, "quick", "Quick ask", true, None::<&str>)?;
    let pause = CheckMenuItem::with_id(app, PAUSE_ID, "Pause cloud", true, paused, None::<&str>)?;
    let open = MenuItem::with_id(app, "open", "Open Tandem", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let sep = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&quick, &pause, &open, &sep, &quit])?;
    app.manage(PauseItem(pause));
    let mut tray = TrayIconBuilder::with_id("tandem")
        .tooltip("Tandem")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "quick" => crate::toggle_quick(app),
            "open" => crate::show_main(app),
            "quit" => app.exit(0),
            PAUSE_ID => {
                let app = app.clone();
                tauri::async_runtime::spawn(async move {
                    let now = !app.state::<AppState>().prefs().cloud_paused;
                    crate::apply_pause(&app, now).await;
                });
            }
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
}

/// Keeps the tray's check mark in step with the switch.
pub fn set_paused<R: Runtime>(app: &AppHandle<R>, paused: bool) {
    if let Some(item) = app.try_state::<PauseItem<R>>() {
        let _ = item.0.set_checked(paused);
    }
}
