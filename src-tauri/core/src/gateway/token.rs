//! The gateway's bearer token: made at first start, kept in the OS keychain, rotatable, and
//! overridable from the environment for scripts and tests.

use crate::secrets::{ApiKey, SecretStore};

use super::GatewayError;

/// Overrides the stored token (scripts, tests, CI).
pub const TOKEN_ENV: &str = "TANDEM_GATEWAY_TOKEN";
/// The keychain entry (service "tandem", like provider keys).
pub const KEYCHAIN_ACCOUNT: &str = "tandem-gateway";

/// Where the token in use came from; a host prints the token only when it is new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    Env,
    Stored,
    Created,
    Rotated,
}

impl TokenSource {
    /// Whether the user has not seen this token yet.
    pub fn is_new(self) -> bool {
        matches!(self, TokenSource::Created | TokenSource::Rotated)
    }
}

/// 32 random bytes, hex: long enough that guessing is hopeless, plain enough for any client.
pub fn generate() -> Result<ApiKey, GatewayError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| GatewayError::Token(e.to_string()))?;
    let token = ApiKey::new(&format!("tdm-{}", hex::encode(bytes)));
    bytes.fill(0);
    token.map_err(|e| GatewayError::Token(e.to_string()))
}

/// Shortest token taken from the environment: one a local user could guess in a few tries
/// would open the gateway (the generated one has 68 characters).
pub const MIN_TOKEN_CHARS: usize = 16;

/// A token set in `TANDEM_GATEWAY_TOKEN`, if it is long enough to be one.
fn env_token(v: &str) -> Result<ApiKey, GatewayError> {
    let n = v.trim().chars().count();
    if n < MIN_TOKEN_CHARS {
        return Err(GatewayError::Token(format!(
            "{TOKEN_ENV} holds {n} characters; a token needs at least {MIN_TOKEN_CHARS} (unset it to use the generated one)"
        )));
    }
    ApiKey::new(v).map_err(|e| GatewayError::Token(e.to_string()))
}

/// The token the gateway accepts: `TANDEM_GATEWAY_TOKEN` when set, else the stored one, else a
/// new one stored now. `rotate` replaces the stored token (the environment still wins).
/// Blocking: the keychain may take a while to answer.
pub fn resolve(
    store: Option<&dyn SecretStore>,
    rotate: bool,
) -> Result<(ApiKey, TokenSource), GatewayError> {
    if let Ok(v) = std::env::var(TOKEN_ENV) {
        if !v.trim().is_empty() {
            return Ok((env_token(&v)?, TokenSource::Env));
        }
    }
    let store = store.ok_or_else(|| {
        GatewayError::Token(format!(
            "the OS keychain is not available to keep the gateway's token; set {TOKEN_ENV}"
        ))
    })?;
    let map = |e: crate::secrets::SecretsError| GatewayError::Token(e.to_string());
    if !rotate {
        if let Some(t) = store.get(KEYCHAIN_ACCOUNT).map_err(map)? {
            return Ok((t, TokenSource::Stored));
        }
    }
    let had = rotate && store.get(KEYCHAIN_ACCOUNT).map_err(map)?.is_some();
    let token = generate()?;
    store.set(KEYCHAIN_ACCOUNT, &token).map_err(map)?;
    let source = if had {
        TokenSource::Rotated
    } else {
        TokenSource::Created
    };
    Ok((token, source))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::MemoryStore;

    #[test]
    fn a_token_from_the_environment_must_be_long_enough() {
        assert!(matches!(env_token("secret"), Err(GatewayError::Token(_))));
        assert!(matches!(env_token("  0123456789abcde  "), Err(GatewayError::Token(_))));
        assert_eq!(
            env_token("tdm-0123456789ab").unwrap().expose(),
            "tdm-0123456789ab"
        );
    }

    #[test]
    fn made_once_kept_then_rotated() {
        // The env override is process-wide; this test only runs without it.
        if std::env::var(TOKEN_ENV).is_ok() {
            return;
        }
        let store = MemoryStore::default();
        let (a, s) = resolve(Some(&store), false).unwrap();
        assert_eq!(s, TokenSource::Created);
        assert!(a.expose().starts_with("tdm-") && a.expose().len() == 68);
        let (b, s) = resolve(Some(&store), false).unwrap();
        assert_eq!((b.expose(), s), (a.expose(), TokenSource::Stored));
        let (c, s) = resolve(Some(&store), true).unwrap();
        assert_eq!(s, TokenSource::Rotated);
        assert_ne!(c.expose(), a.expose());
        let (d, _) = resolve(Some(&store), false).unwrap();
        assert_eq!(d.expose(), c.expose());
        assert!(resolve(None, false).is_err());
    }
}
