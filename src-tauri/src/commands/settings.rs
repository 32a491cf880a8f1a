//! Settings: policy, the pause-cloud switch (enforced by the egress guard), cloud providers
//! and their keys (stored in the OS keychain; the page can set or delete a key, never read
//! one), and the local OpenAI-compatible gateway.

use serde::Serialize;
use tandem_core::cloud::agents::{self, Agent, Catalog, ProviderConfig};
use tandem_core::cloud::Wire;
use tandem_core::gateway::{self, token, Gateway, Limits};
use tandem_core::router::Policy;
use tandem_core::secrets::{self, ApiKey, KeySource};
use tauri::State;

use super::{bad_input, internal, CommandError};
use crate::state::GatewayRun;
use crate::AppState;

#[derive(Debug, Serialize, ts_rs::TS)]
pub struct ProviderView {
    pub name: String,
    pub wire: Wire,
    pub base_url: String,
    pub needs_key: bool,
    /// Where its key comes from, if it has one; the key itself never leaves the shell.
    pub key: Option<KeySource>,
    pub agents: Vec<String>,
    /// A device of the user's (private work may go there, never to the cloud).
    pub trust: agents::Trust,
}

#[derive(Debug, Serialize, ts_rs::TS)]
pub struct SettingsView {
    pub policy: Policy,
    pub cloud_paused: bool,
    pub providers: Vec<ProviderView>,
    /// Why keys cannot be stored, when the keychain is unavailable.
    pub keychain_error: Option<String>,
    pub gateway: GatewayView,
    pub shortcut: String,
    pub menu_bar_only: bool,
    /// Set when the scanner runs without its names model (missing, unverified or switched off):
    /// names and free-form addresses are then found by rules only, and the window says so.
    pub scan_notice: Option<String>,
    /// The first-run welcome was finished or dismissed.
    pub onboarded: bool,
}

#[derive(Debug, Serialize, ts_rs::TS)]
pub struct GatewayView {
    pub running: bool,
    pub port: Option<u16>,
    /// Only right after the token was made: shown once, like `tandem serve` does.
    pub new_token: Option<String>,
}

#[tauri::command]
pub async fn get_settings(state: State<'_, AppState>) -> Result<SettingsView, CommandError> {
    let keys = state.keys().await;
    let (providers, keychain_error) =
        tauri::async_runtime::spawn_blocking(move || -> Result<_, CommandError> {
            let catalog = Catalog::load()?;
            let err = keys.store().err().map(|e| e.to_string());
            let list = catalog
                .providers
                .iter()
                .map(|p| ProviderView {
                    name: p.name.clone(),
                    wire: p.wire,
                    base_url: p.base_url.clone(),
                    needs_key: p.needs_key,
                    trust: p.trust,
                    key: keys.get(&p.name).ok().flatten().map(|(_, s)| s),
                    agents: catalog
                        .agents
                        .iter()
                        .filter(|a| a.provider == p.name)
                        .map(|a| a.name.clone())
                        .collect(),
                })
                .collect();
            Ok((list, err))
        })
        .await
        .map_err(internal)??;
    let prefs = state.prefs();
    let port = state.gateway.lock().await.as_ref().map(|g| g.port);
    // Not a reason to load the scanner (and its names model) at start: it loads on first use.
    let scan_notice = state.scan_notice();
    Ok(SettingsView {
        policy: state.policy(),
        cloud_paused: prefs.cloud_paused,
        providers,
        keychain_error,
        gateway: GatewayView {
            running: port.is_some(),
            port,
            new_token: None,
        },
        shortcut: prefs
            .shortcut
            .unwrap_or_else(|| crate::DEFAULT_SHORTCUT.to_string()),
        scan_notice,
        menu_bar_only: prefs.menu_bar_only,
        onboarded: prefs.onboarded,
    })
}

/// Changes the quick-ask shortcut (Tauri's accelerator syntax, e.g. "Alt+Shift+K"): checked,
/// swapped live where the desktop has global shortcuts (if the new one is taken the old one
/// stays), and kept for the next start. Returns the shortcut now in force.
#[tauri::command]
pub async fn set_shortcut<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    shortcut: String,
) -> Result<String, CommandError> {
    use tauri::Manager;
    use tauri_plugin_global_shortcut::{GlobalShortcut, Shortcut};
    let text = shortcut.trim().to_string();
    let parsed: Shortcut = text
        .parse()
        .map_err(|e| bad_input(format!("{text:?} is not a shortcut: {e}")))?;
    // A key without Ctrl, Alt or Super would be taken from every other app's typing.
    use tauri_plugin_global_shortcut::Modifiers as M;
    if !parsed
        .mods
        .intersects(M::CONTROL | M::ALT | M::SUPER | M::META)
    {
        return Err(bad_input(format!(
            "{text:?} needs Ctrl, Alt or Super (Cmd): a plain key would stop working in other apps"
        )));
    }
    let old = state
        .prefs()
        .shortcut
        .unwrap_or_else(|| crate::DEFAULT_SHORTCUT.to_string());
    // The mock runtime (tests) and desktops without the plugin only keep the choice.
    if let Some(gs) = app.try_state::<GlobalShortcut<R>>() {
        let _ = gs.unregister(old.as_str());
        if let Err(e) = gs.register(parsed) {
            let _ = gs.register(old.as_str());
            return Err(CommandError {
                code: "app.shortcut_taken".into(),
                message: format!("{text} cannot be used ({e}); {old} still opens quick ask"),
            });
        }
    }
    state
        .update_prefs(|p| p.shortcut = Some(text.clone()))
        .await;
    Ok(text)
}

/// macOS only in effect (no Dock icon, from the next start); kept on every platform.
#[tauri::command]
pub async fn set_menu_bar_only(
    state: State<'_, AppState>,
    enabled: bool,
) -> Result<bool, CommandError> {
    state.update_prefs(|p| p.menu_bar_only = enabled).await;
    Ok(enabled)
}

/// Marks the first-run welcome finished (`true`) or asks for it again (`false`).
#[tauri::command]
pub async fn set_onboarded(state: State<'_, AppState>, done: bool) -> Result<bool, CommandError> {
    state.update_prefs(|p| p.onboarded = done).await;
    Ok(done)
}

#[tauri::command]
pub async fn set_policy(
    state: State<'_, AppState>,
    policy: Policy,
) -> Result<Policy, CommandError> {
    state.update_prefs(|p| p.policy = Some(policy)).await;
    Ok(policy)
}

/// Pause cloud: every outbound request is refused by the egress guard from now on, running
/// answers included (it re-checks just before sending).
#[tauri::command]
pub async fn set_cloud_paused<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    paused: bool,
) -> Result<bool, CommandError> {
    crate::apply_pause(&app, paused).await;
    Ok(paused)
}

#[tauri::command]
pub async fn set_key(
    state: State<'_, AppState>,
    provider: String,
    key: String,
) -> Result<(), CommandError> {
    secrets::check_provider_name(&provider)?;
    let key = ApiKey::new(&key)?;
    let keys = state.keys().await;
    // Keys are read per question from this same store, so nothing to rebuild.
    tauri::async_runtime::spawn_blocking(move || -> Result<(), CommandError> {
        Ok(keys.store()?.set(&provider, &key)?)
    })
    .await
    .map_err(internal)?
}

#[tauri::command]
pub async fn delete_key(
    state: State<'_, AppState>,
    provider: String,
) -> Result<bool, CommandError> {
    secrets::check_provider_name(&provider)?;
    let keys = state.keys().await;
    tauri::async_runtime::spawn_blocking(move || -> Result<bool, CommandError> {
        Ok(keys.store()?.delete(&provider)?)
    })
    .await
    .map_err(internal)?
}

/// Adds or replaces a provider in the user's catalog (with an agent when `model` is given)
/// and its key when one is given.
#[tauri::command]
#[allow(clippy::too_many_arguments)]
pub async fn add_provider(
    state: State<'_, AppState>,
    name: String,
    wire: Wire,
    base_url: String,
    needs_key: bool,
    model: Option<String>,
    key: Option<String>,
    trust: Option<agents::Trust>,
) -> Result<(), CommandError> {
    secrets::check_provider_name(&name)?;
    let key = key
        .filter(|k| !k.trim().is_empty())
        .map(|k| ApiKey::new(&k))
        .transpose()?;
    let keys = state.keys().await;
    tauri::async_runtime::spawn_blocking(move || -> Result<(), CommandError> {
        let agent = model
            .filter(|m| !m.trim().is_empty())
            .map(|m| Agent::new(&name, &name, m.trim()));
        let provider = ProviderConfig {
            name: name.clone(),
            wire,
            base_url,
            needs_key,
            trust: trust.unwrap_or_default(),
        };
        agents::add_to_user_file(&agents::user_file(), provider, agent)?;
        if let Some(k) = key {
            keys.store()?.set(&name, &k)?;
        }
        Ok(())
    })
    .await
    .map_err(internal)??;
    state.reassemble().await;
    Ok(())
}

/// Starts or stops the local gateway (127.0.0.1 only, token from the keychain).
#[tauri::command]
pub async fn set_gateway(
    state: State<'_, AppState>,
    enabled: bool,
    port: Option<u16>,
) -> Result<GatewayView, CommandError> {
    let view = if enabled {
        start_gateway(&state, port.unwrap_or(gateway::DEFAULT_PORT)).await?
    } else {
        if let Some(run) = state.gateway.lock().await.take() {
            let _ = run.stop.send(());
        }
        GatewayView {
            running: false,
            port: None,
            new_token: None,
        }
    };
    state.update_prefs(|p| p.gateway = enabled).await;
    Ok(view)
}

pub async fn start_gateway(state: &AppState, port: u16) -> Result<GatewayView, CommandError> {
    let mut slot = state.gateway.lock().await;
    if let Some(run) = slot.as_ref() {
        return Ok(GatewayView {
            running: true,
            port: Some(run.port),
            new_token: None,
        });
    }
    let parts = state.assembled().await?;
    let keys = state.keys().await;
    let (token, source) = tauri::async_runtime::spawn_blocking(move || {
        let store = keys.store().ok().cloned();
        token::resolve(store.as_deref(), false)
    })
    .await
    .map_err(internal)??;
    let listener = gateway::bind(port).await?;
    let port = listener.local_addr().map_err(internal)?.port();
    let gw = Gateway::new(
        parts.orchestrator.clone(),
        &token,
        state.policy(),
        Limits::default(),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tauri::async_runtime::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        if let Err(e) = gw.serve(listener, shutdown).await {
            tracing::warn!("gateway stopped: {e}");
        }
    });
    *slot = Some(GatewayRun { port, stop });
    let new_token = matches!(
        source,
        token::TokenSource::Created | token::TokenSource::Rotated
    )
    .then(|| token.expose().to_string());
    Ok(GatewayView {
        running: true,
        port: Some(port),
        new_token,
    })
}
