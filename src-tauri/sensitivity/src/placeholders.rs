//! Values that identify nobody (`data/placeholders.toml`): made-up e-mail addresses and
//! placeholder names, loaded once for the recognizers that consult them (`ids.rs`, `person.rs`).

use std::sync::OnceLock;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Placeholders {
    pub email: Email,
    pub names: Names,
}

/// What is known of made-up addresses (`[email]`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Email {
    pub reserved_domains: Vec<String>,
    pub reserved_tlds: Vec<String>,
    pub made_up_words: Vec<String>,
    pub provider: Vec<MailProvider>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MailProvider {
    pub domain: String,
    pub min_local: usize,
}

/// Whole placeholder names (`[names]`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Names {
    pub whole: Vec<String>,
}

/// The embedded file (a malformed file is a build defect the unit tests catch).
pub(crate) fn data() -> &'static Placeholders {
    static P: OnceLock<Placeholders> = OnceLock::new();
    P.get_or_init(|| {
        toml::from_str(include_str!("data/placeholders.toml"))
            .unwrap_or_else(|e| panic!("data/placeholders.toml: {e}"))
    })
}
