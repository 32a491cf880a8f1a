//! The local model card: which models the manifest offers, which are on disk, which fit this
//! machine and how fast they should be; download one (progress streams on a Channel) and
//! choose the one to use (loaded at once, and at every start).

use serde::Serialize;
use tandem_core::hardware::{self, BuildCaps};
use tandem_core::models::{self, FetchOptions, FetchProgress, FetchReport, Manifest};
use tauri::ipc::Channel;
use tauri::State;

use super::{bad_input, internal, CommandError};
use crate::AppState;

#[derive(Debug, Serialize, ts_rs::TS)]
pub struct ModelView {
    pub name: String,
    pub parameters_b: f64,
    pub quantization: String,
    pub size: u64,
    pub license: String,
    pub installed: bool,
    pub fits: bool,
    pub est_decode_tok_s: Option<f32>,
    pub reason: String,
    /// Loaded now.
    pub loaded: bool,
    /// Chosen (differs from `loaded` while the chosen model loads, or if it failed to).
    pub chosen: bool,
}

#[tauri::command]
pub async fn models(state: State<'_, AppState>) -> Result<Vec<ModelView>, CommandError> {
    let dir = state.settings.models_dir.clone();
    let (manifest, rec) = tauri::async_runtime::spawn_blocking(move || {
        let m = Manifest::load(&dir)?;
        let rec = hardware::recommend(&hardware::probe(), &m, BuildCaps::current());
        Ok::<_, CommandError>((m, rec))
    })
    .await
    .map_err(internal)??;
    // Never wait for a model that is still loading just to draw the card.
    let loaded = state.loaded_model_name();
    let chosen = state
        .prefs()
        .model
        .or_else(|| state.settings.model.clone())
        .or_else(|| {
            models::recommended_if_installed(
                &state.settings.models_dir,
                &manifest,
                rec.recommended_model.as_deref(),
            )
        })
        .unwrap_or_else(|| manifest.default.clone());
    Ok(manifest
        .models
        .iter()
        .map(|s| {
            let fit = rec.models.iter().find(|f| f.name == s.name);
            ModelView {
                name: s.name.clone(),
                parameters_b: s.parameters_b,
                quantization: s.quantization.clone(),
                size: s.size,
                license: s.license.clone(),
                installed: models::installed_file(&state.settings.models_dir, s).is_some(),
                fits: fit.is_some_and(|f| f.fits),
                est_decode_tok_s: fit.and_then(|f| f.est_decode_tok_s),
                reason: fit.map(|f| f.reason.clone()).unwrap_or_default(),
                loaded: loaded.as_deref() == Some(s.name.as_str()),
                chosen: chosen == s.name,
            }
        })
        .collect())
}

/// Downloads (and verifies) a manifest model; progress streams on `on_progress`.
#[tauri::command]
pub async fn download_model<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    name: String,
    on_progress: Channel<FetchProgress>,
) -> Result<FetchReport, CommandError> {
    let manifest = Manifest::load(&state.settings.models_dir)?;
    let spec = manifest
        .get(&name)
        .cloned()
        .ok_or_else(|| bad_input(format!("no model named {name:?} in the manifest")))?;
    let opts = FetchOptions::new(&state.settings.models_dir);
    let res = models::fetch_model(&spec, &opts, move |p| {
        let _ = on_progress.send(p);
    })
    .await;
    match &res {
        Ok(_) => super::notify(
            &app,
            "Model ready",
            &format!("{name} is downloaded and verified"),
        ),
        Err(e) => super::notify(&app, "Model download failed", &format!("{name}: {e}")),
    }
    Ok(res?)
}

/// Chooses the local model: it must be in the manifest and on disk. It is loaded now (the
/// status line shows the load; the next question uses it) and again at every start.
#[tauri::command]
pub async fn choose_model(state: State<'_, AppState>, name: String) -> Result<(), CommandError> {
    let manifest = Manifest::load(&state.settings.models_dir)?;
    let spec = manifest
        .get(&name)
        .ok_or_else(|| bad_input(format!("no model named {name:?} in the manifest")))?;
    if models::installed_file(&state.settings.models_dir, spec).is_none() {
        return Err(bad_input(format!("{name} is not downloaded yet")));
    }
    state.update_prefs(|p| p.model = Some(name.clone())).await;
    let current = state
        .engine_model()
        .unwrap_or_else(|| manifest.default.clone());
    // Loaded or loading already: nothing to do; a model that failed to load is tried again.
    if current != name || state.engine_failed() {
        state.switch_model(name).await;
    }
    Ok(())
}
