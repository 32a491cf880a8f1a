//! API keys: the `SecretStore` seam, the OS keychain behind it (keyring 4: macOS Keychain,
//! Windows Credential Manager, Linux Secret Service), an in-memory store for tests, and an
//! opt-in environment variable per provider for headless use. A key never appears in config
//! files, logs (`Debug` prints a mask), IPC replies or error messages.
//!
//! Store calls block (D-Bus, Security framework): async callers use `spawn_blocking`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use zeroize::Zeroize;

/// The keychain service name; the account is the provider's name.
pub const SERVICE: &str = "tandem";
/// `TANDEM_KEY_<PROVIDER>` (upper case, other characters as `_`) holds a key for headless use.
pub const KEY_ENV_PREFIX: &str = "TANDEM_KEY_";

/// An API key. Printing it shows a mask; the memory is wiped on drop.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Trims surrounding whitespace (a pasted newline); refuses empty keys and control characters.
    pub fn new(key: &str) -> Result<Self, SecretsError> {
        let k = key.trim();
        if k.is_empty() {
            return Err(SecretsError::BadKey("the key is empty".into()));
        }
        if k.chars().any(char::is_control) {
            return Err(SecretsError::BadKey(
                "the key contains control characters (was more than one line pasted?)".into(),
            ));
        }
        Ok(Self(k.to_string()))
    }

    /// The key itself, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl Drop for ApiKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey(****, {} chars)", self.0.chars().count())
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretsError {
    #[error("no OS keychain is available ({0}); for headless use set {KEY_ENV_PREFIX}<PROVIDER>")]
    Unavailable(String),
    #[error("the keychain failed for {provider}: {message}")]
    Backend { provider: String, message: String },
    #[error("bad key: {0}")]
    BadKey(String),
    #[error("bad provider name {0:?}: use letters, digits, '-', '_' or '.'")]
    BadName(String),
    #[error("the provider name {0:?} is Tandem's own keychain entry; choose another")]
    ReservedName(String),
}

impl crate::ErrorCode for SecretsError {
    fn code(&self) -> &'static str {
        match self {
            SecretsError::Unavailable(_) => "secrets.unavailable",
            SecretsError::Backend { .. } => "secrets.backend",
            SecretsError::BadKey(_) => "secrets.bad_key",
            SecretsError::BadName(_) => "secrets.bad_name",
            SecretsError::ReservedName(_) => "secrets.reserved_name",
        }
    }
}

/// Checks a provider name before it becomes a keychain account or an env var name.
pub fn check_name(provider: &str) -> Result<(), SecretsError> {
    let ok = !provider.is_empty()
        && provider.len() <= 64
        && provider
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(SecretsError::BadName(provider.chars().take(64).collect()))
    }
}

/// Checks a name a user gives a provider: `check_name`, and not the keychain entry of the
/// gateway's own token (`gateway::token::KEYCHAIN_ACCOUNT`), or that provider would be sent
/// the token as its API key, and setting its key would replace the token.
pub fn check_provider_name(provider: &str) -> Result<(), SecretsError> {
    check_name(provider)?;
    if provider.eq_ignore_ascii_case(crate::gateway::token::KEYCHAIN_ACCOUNT) {
        return Err(SecretsError::ReservedName(provider.to_string()));
    }
    Ok(())
}

/// Where keys are kept. Implementations block.
pub trait SecretStore: Send + Sync {
    /// A short name for notices ("os keychain", "memory").
    fn backend(&self) -> &'static str;
    fn get(&self, provider: &str) -> Result<Option<ApiKey>, SecretsError>;
    fn set(&self, provider: &str, key: &ApiKey) -> Result<(), SecretsError>;
    /// Whether there was a key to delete.
    fn delete(&self, provider: &str) -> Result<bool, SecretsError>;
}

/// Keys in a map, gone with the process: unit tests and hosts that must not persist anything.
#[derive(Default)]
pub struct MemoryStore(Mutex<HashMap<String, ApiKey>>);

impl SecretStore for MemoryStore {
    fn backend(&self) -> &'static str {
        "memory"
    }
    fn get(&self, provider: &str) -> Result<Option<ApiKey>, SecretsError> {
        check_name(provider)?;
        Ok(self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(provider)
            .cloned())
    }
    fn set(&self, provider: &str, key: &ApiKey) -> Result<(), SecretsError> {
        check_name(provider)?;
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(provider.to_string(), key.clone());
        Ok(())
    }
    fn delete(&self, provider: &str) -> Result<bool, SecretsError> {
        check_name(provider)?;
        Ok(self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(provider)
            .is_some())
    }
}

/// The OS keychain. keyring 4 picks the platform's store (no silent in-memory fallback: if
/// the store cannot start, `open` says so).
pub struct KeyringStore {
    service: String,
}

impl KeyringStore {
    pub fn open() -> Result<Self, SecretsError> {
        Self::with_service(SERVICE)
    }

    /// A separate service name (tests keep out of the user's entries).
    pub fn with_service(service: &str) -> Result<Self, SecretsError> {
        keyring::Entry::store_status()
            .as_ref()
            .map_err(|e| SecretsError::Unavailable(describe(e)))?;
        Ok(Self {
            service: service.to_string(),
        })
    }

    fn entry(&self, provider: &str) -> Result<keyring::Entry, SecretsError> {
        check_name(provider)?;
        keyring::Entry::new(&self.service, provider).map_err(|e| backend(provider, &e))
    }
}

/// keyring's messages, minus the variants that carry secret bytes.
fn describe(e: &keyring::Error) -> String {
    match e {
        keyring::Error::BadEncoding(_) | keyring::Error::BadDataFormat(..) => {
            "the stored key is not valid text".into()
        }
        other => other.to_string(),
    }
}

fn backend(provider: &str, e: &keyring::Error) -> SecretsError {
    match e {
        keyring::Error::NoStorageAccess(_) | keyring::Error::NoDefaultStore => {
            SecretsError::Unavailable(describe(e))
        }
        _ => SecretsError::Backend {
            provider: provider.to_string(),
            message: describe(e),
        },
    }
}

impl SecretStore for KeyringStore {
    fn backend(&self) -> &'static str {
        "os keychain"
    }
    fn get(&self, provider: &str) -> Result<Option<ApiKey>, SecretsError> {
        match self.entry(provider)?.get_password() {
            Ok(k) => ApiKey::new(&k).map(Some),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(backend(provider, &e)),
        }
    }
    fn set(&self, provider: &str, key: &ApiKey) -> Result<(), SecretsError> {
        self.entry(provider)?
            .set_password(key.expose())
            .map_err(|e| backend(provider, &e))
    }
    fn delete(&self, provider: &str) -> Result<bool, SecretsError> {
        match self.entry(provider)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(backend(provider, &e)),
        }
    }
}

/// `TANDEM_KEY_OPENAI` for "openai", `TANDEM_KEY_MY_LLM` for "my-llm".
pub fn env_var(provider: &str) -> String {
    let tail: String = provider
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{KEY_ENV_PREFIX}{tail}")
}

/// Where a key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    Env,
    Store,
}

/// Key lookup for the hosts: the opt-in environment variable first (headless use), then the
/// store, if one could be opened.
#[derive(Clone)]
pub struct Keys {
    store: Option<Arc<dyn SecretStore>>,
    /// Why there is no store, for the notice.
    unavailable: Option<String>,
}

impl Keys {
    pub fn new(store: Arc<dyn SecretStore>) -> Self {
        Self {
            store: Some(store),
            unavailable: None,
        }
    }

    /// The OS keychain when it can be opened; otherwise environment variables only.
    pub fn os() -> Self {
        match KeyringStore::open() {
            Ok(s) => Self::new(Arc::new(s)),
            // The reason alone: `store()` wraps it in `Unavailable` again.
            Err(SecretsError::Unavailable(why)) => Self::unavailable(why),
            Err(e) => Self::unavailable(e.to_string()),
        }
    }

    /// No store (environment variables only); `why` is shown in the notice.
    pub fn unavailable(why: String) -> Self {
        Self {
            store: None,
            unavailable: Some(why),
        }
    }

    pub fn store(&self) -> Result<&Arc<dyn SecretStore>, SecretsError> {
        self.store
            .as_ref()
            .ok_or_else(|| SecretsError::Unavailable(self.unavailable.clone().unwrap_or_default()))
    }

    pub fn get(&self, provider: &str) -> Result<Option<(ApiKey, KeySource)>, SecretsError> {
        check_name(provider)?;
        if let Ok(v) = std::env::var(env_var(provider)) {
            if !v.trim().is_empty() {
                return Ok(Some((ApiKey::new(&v)?, KeySource::Env)));
            }
        }
        match &self.store {
            Some(s) => Ok(s.get(provider)?.map(|k| (k, KeySource::Store))),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_masked_trimmed_and_checked() {
        let k = ApiKey::new("  sk-abc123\n").unwrap();
        assert_eq!(k.expose(), "sk-abc123");
        let shown = format!("{k:?} {:?}", Some(&k));
        assert!(!shown.contains("abc"), "{shown}");
        assert!(matches!(ApiKey::new(" \n"), Err(SecretsError::BadKey(_))));
        assert!(matches!(ApiKey::new("a\nb"), Err(SecretsError::BadKey(_))));
        assert!(matches!(check_name("../x"), Err(SecretsError::BadName(_))));
        // The gateway token's own entry is no provider's name.
        assert!(matches!(
            check_provider_name("Tandem-Gateway"),
            Err(SecretsError::ReservedName(_))
        ));
        assert!(check_provider_name("tandem-gateway-2").is_ok());
        assert_eq!(env_var("my-llm.v2"), "TANDEM_KEY_MY_LLM_V2");
    }

    #[test]
    fn memory_store_round_trips_and_env_wins() {
        let store = Arc::new(MemoryStore::default());
        let keys = Keys::new(store.clone());
        assert!(keys.get("unit-mem").unwrap().is_none());
        store
            .set("unit-mem", &ApiKey::new("sk-mem").unwrap())
            .unwrap();
        let (k, src) = keys.get("unit-mem").unwrap().unwrap();
        assert_eq!((k.expose(), src), ("sk-mem", KeySource::Store));
        // The variable name is unique to this test (tests run on parallel threads).
        std::env::set_var("TANDEM_KEY_UNIT_MEM", "sk-env");
        let (k, src) = keys.get("unit-mem").unwrap().unwrap();
        assert_eq!((k.expose(), src), ("sk-env", KeySource::Env));
        std::env::remove_var("TANDEM_KEY_UNIT_MEM");
        assert!(store.delete("unit-mem").unwrap());
        assert!(!store.delete("unit-mem").unwrap());
        assert!(keys.get("unit-mem").unwrap().is_none());
    }
}
