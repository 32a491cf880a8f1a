//! The user's own rules: terms and patterns they mark sensitive (client names, project code
//! names) and an allow-list of strings that must never be flagged.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use serde::{Deserialize, Serialize};

use super::types::{whole_word, Candidate, Recognizer, Tier};
use super::SensitivityError;

/// As written in `sensitivity.toml` (or passed by a host). All fields optional.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UserRules {
    /// Literal terms, matched case-insensitively as whole words; masked as `[CUSTOM_n]`.
    #[serde(default)]
    pub terms: Vec<String>,
    /// Regular expressions (Rust `regex` syntax, linear time) with a name.
    #[serde(default)]
    pub patterns: Vec<UserPattern>,
    /// Strings never reported, whatever a recognizer says (compared case-insensitively).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Terms whose presence makes the whole fragment `local_only` (e.g. a secret project).
    #[serde(default)]
    pub local_only_terms: Vec<String>,
    /// Credential formats of your own (an internal token prefix), in the form of the built-in
    /// secret table (`data/secrets.toml`): they run through the same keyword prefilter, windows
    /// and entropy/placeholder checks, and are reported as `SECRET`.
    #[serde(default)]
    pub secrets: Vec<super::secrets::SecretRule>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UserPattern {
    /// Upper-case label for the placeholder, e.g. `CLIENT_ID`.
    pub name: String,
    pub pattern: String,
    #[serde(default = "default_tier")]
    pub tier: Tier,
}

fn default_tier() -> Tier {
    Tier::QuasiIdentifier
}

impl UserRules {
    pub fn from_toml(text: &str) -> Result<Self, SensitivityError> {
        toml::from_str(text).map_err(|e| SensitivityError::BadRules(e.to_string()))
    }
}

/// Label of every user term span; patterns use their own name.
pub const CUSTOM_LABEL: &str = "CUSTOM";
/// Label of a user term that forces `local_only`.
pub const CUSTOM_LOCAL_LABEL: &str = "CUSTOM_PRIVATE";

pub(crate) struct UserRecognizer {
    terms: Option<AhoCorasick>,
    /// Per term index: does it force local_only?
    term_local: Vec<bool>,
    patterns: Vec<(regex::Regex, &'static str, Tier)>,
    allow: Vec<String>,
}

impl UserRecognizer {
    pub fn new(rules: &UserRules) -> Result<Self, SensitivityError> {
        let mut terms: Vec<&str> = Vec::new();
        let mut term_local = Vec::new();
        for (list, local) in [(&rules.terms, false), (&rules.local_only_terms, true)] {
            for t in list.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
                terms.push(t);
                term_local.push(local);
            }
        }
        let terms = if terms.is_empty() {
            None
        } else {
            Some(
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&terms)
                    .map_err(|e| SensitivityError::BadRules(e.to_string()))?,
            )
        };
        let mut patterns = Vec::new();
        for p in &rules.patterns {
            let name = p.name.trim().to_ascii_uppercase().replace([' ', '-'], "_");
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(SensitivityError::BadRules(format!(
                    "pattern name {:?} must be letters, digits or _",
                    p.name
                )));
            }
            let re = regex::RegexBuilder::new(&p.pattern)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| SensitivityError::BadRules(format!("pattern {}: {e}", p.name)))?;
            // Labels are `&'static str` everywhere else; user patterns are few and live as long
            // as the scanner, so leaking their names once is the simple honest choice.
            patterns.push((re, &*Box::leak(name.into_boxed_str()), p.tier));
        }
        let allow = rules
            .allow
            .iter()
            .map(|a| a.trim().to_lowercase())
            .filter(|a| !a.is_empty())
            .collect();
        Ok(Self {
            terms,
            term_local,
            patterns,
            allow,
        })
    }

    pub fn is_allowed(&self, value: &str) -> bool {
        !self.allow.is_empty() && {
            let v = value.trim().to_lowercase();
            self.allow.iter().any(|a| *a == v)
        }
    }
}

impl Recognizer for UserRecognizer {
    fn name(&self) -> &'static str {
        "user"
    }

    fn find(&self, text: &str, out: &mut Vec<Candidate>) {
        if let Some(ac) = &self.terms {
            for m in ac.find_iter(text) {
                let (s, e) = (m.start(), m.end());
                if !whole_word(text, s, e) {
                    continue;
                }
                let local = self.term_local[m.pattern().as_usize()];
                let label = if local {
                    CUSTOM_LOCAL_LABEL
                } else {
                    CUSTOM_LABEL
                };
                out.push(Candidate {
                    start: s,
                    end: e,
                    label,
                    tier: Tier::QuasiIdentifier,
                    score: 1.0,
                    detector: "user",
                });
            }
        }
        for (re, label, tier) in &self.patterns {
            for m in re.find_iter(text).filter(|m| !m.is_empty()) {
                out.push(Candidate {
                    start: m.start(),
                    end: m.end(),
                    label,
                    tier: *tier,
                    score: 1.0,
                    detector: "user",
                });
            }
        }
    }
}
