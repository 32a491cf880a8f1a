fn main() {
    // The config sits at the repository root; capabilities live under src-tauri/.
    let attrs =
        tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*");
    tauri_build::try_build(attrs).expect("tauri build script failed");
}
