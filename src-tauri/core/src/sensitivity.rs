//! The sensitivity engine (crate `tandem-sensitivity`) as Tandem's hosts use it: everything it
//! exports, plus where the user's rules live and the hardware hint for the names model.

use std::path::{Path, PathBuf};

pub use tandem_sensitivity::*;

impl crate::ErrorCode for SensitivityError {
    fn code(&self) -> &'static str {
        match self {
            SensitivityError::BadRules(_) => "sensitivity.bad_rules",
            SensitivityError::Io { .. } => "sensitivity.io",
            SensitivityError::Ner(_) => "sensitivity.ner_unavailable",
        }
    }
}

/// Where the user's rules live unless `TANDEM_RULES` says otherwise.
pub fn default_rules_path() -> PathBuf {
    if let Some(p) = std::env::var_os(RULES_ENV) {
        return PathBuf::from(p);
    }
    crate::config::config_dir().join("sensitivity.toml")
}

/// The scanner the hosts use: the user's rules, plus the NER model from `<models>/ner` on the
/// execution provider the hardware suggests (an NPU's vendor), unless `TANDEM_NER=off`.
pub fn load_default(models_dir: &Path, rules: &UserRules) -> Result<Scanner, SensitivityError> {
    load_default_with(models_dir, None, rules)
}

/// `load_default`, falling back to the NER files bundled with a packaged app.
pub fn load_default_with(
    models_dir: &Path,
    bundled: Option<&Path>,
    rules: &UserRules,
) -> Result<Scanner, SensitivityError> {
    let hint = crate::hardware::probe()
        .npus
        .first()
        .map(|n| n.vendor.to_ascii_lowercase());
    load_with_hint(models_dir, bundled, rules, hint.as_deref())
}
