//! The hardware card: what this machine has and what it should run.

use serde::Serialize;
use tandem_core::hardware::{self, BuildCaps, HardwareReport, Recommendation};
use tandem_core::models::Manifest;
use tauri::State;

use super::CommandError;
use crate::AppState;

#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(rename = "HardwareProbe")]
pub struct Probe {
    pub hardware: HardwareReport,
    pub recommendation: Recommendation,
}

#[tauri::command]
pub async fn probe_hardware(state: State<'_, AppState>) -> Result<Probe, CommandError> {
    let manifest = Manifest::load(&state.settings.models_dir)?;
    let hw = tauri::async_runtime::spawn_blocking(hardware::probe)
        .await
        .map_err(|e| CommandError {
            code: "hardware.probe".into(),
            message: e.to_string(),
        })?;
    let recommendation = hardware::recommend(&hw, &manifest, BuildCaps::current());
    Ok(Probe {
        hardware: hw,
        recommendation,
    })
}
