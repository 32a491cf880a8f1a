//! The label registry (`data/labels.toml`): for every label the scanner reports, its tier, how
//! it is masked (identifier / context / content), its placeholder kind and what the app calls it.
//! The rest of the engine asks here instead of keeping its own lists.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::types::Tier;

/// How a label's spans are treated when text may leave the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelKind {
    /// Masked before the cloud.
    #[default]
    Identifier,
    /// Identifies nobody alone (a date, a job title): masked only beside a personal identifier.
    Context,
    /// The meaning itself is private: the fragment stays on the device.
    Content,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelInfo {
    pub name: String,
    pub tier: Tier,
    #[serde(default)]
    pub kind: LabelKind,
    /// Kind in `[KIND_n]` placeholders; `None`: the name itself.
    pub placeholder: Option<String>,
    /// What the app calls one of them / several.
    pub one: String,
    pub many: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Registry {
    label: Vec<LabelInfo>,
}

struct Loaded {
    all: Vec<LabelInfo>,
    by_name: HashMap<String, usize>,
}

fn loaded() -> &'static Loaded {
    static L: OnceLock<Loaded> = OnceLock::new();
    L.get_or_init(|| {
        // Embedded and checked by the unit tests: a malformed file is a build defect.
        let r: Registry = toml::from_str(include_str!("data/labels.toml"))
            .unwrap_or_else(|e| panic!("data/labels.toml: {e}"));
        let by_name = r
            .label
            .iter()
            .enumerate()
            .map(|(i, l)| (l.name.clone(), i))
            .collect();
        Loaded {
            all: r.label,
            by_name,
        }
    })
}

/// Every registered label, in the file's order.
pub fn all() -> &'static [LabelInfo] {
    &loaded().all
}

/// The registry entry for `label` (user-defined pattern labels have none).
pub fn get(label: &str) -> Option<&'static LabelInfo> {
    let l = loaded();
    l.by_name.get(label).map(|&i| &l.all[i])
}

/// How `label`'s spans are treated; unregistered (user) labels are identifiers.
pub fn kind(label: &str) -> LabelKind {
    get(label).map_or(LabelKind::Identifier, |l| l.kind)
}

/// Short placeholder kind for a label: readable for the cloud model, stable for restore.
pub fn placeholder_kind(label: &str) -> String {
    match get(label).and_then(|l| l.placeholder.as_deref()) {
        Some(p) => p.to_string(),
        None => label.to_ascii_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_well_formed() {
        let all = all();
        assert!(all.len() >= 70, "labels lost: {}", all.len());
        let mut seen = std::collections::HashSet::new();
        for l in all {
            assert!(seen.insert(&l.name), "duplicate label {}", l.name);
            let upper = |s: &str| {
                !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            };
            assert!(upper(&l.name), "label {:?} is not UPPER_SNAKE", l.name);
            // The pseudonymizer's placeholder pattern only knows upper-case kinds.
            assert!(
                upper(&placeholder_kind(&l.name)),
                "{}: bad placeholder",
                l.name
            );
            assert!(
                !l.one.is_empty() && !l.many.is_empty(),
                "{}: no UI name",
                l.name
            );
        }
        assert_eq!(placeholder_kind("CREDIT_CARD"), "CARD");
        assert_eq!(placeholder_kind("client_id"), "CLIENT_ID");
        assert_eq!(kind("DATE_TIME"), LabelKind::Context);
        assert_eq!(kind("MEDICATION"), LabelKind::Content);
        assert_eq!(kind("NOT_A_LABEL"), LabelKind::Identifier);
        assert_eq!(kind(crate::user::CUSTOM_LOCAL_LABEL), LabelKind::Content);
        assert_eq!(kind(crate::user::CUSTOM_LABEL), LabelKind::Identifier);
    }
}
