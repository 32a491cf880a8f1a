// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // WebKitGTK's accelerated compositing costs ~70 MB in the web process (a GL context
    // through Mesa, LLVM included, when there is no GPU driver) and buys nothing for a page
    // this small (bench/RESULTS.md, "Desktop app"). Set before any thread starts; a value the
    // user set wins.
    #[cfg(target_os = "linux")]
    if std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none() {
        std::env::set_var("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
    }
    tandem_app::run();
}
