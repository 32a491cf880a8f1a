//! Sensitive *content* that no identifier pattern captures: health conditions and medications,
//! personal finances, legal matters. Terms alone are common in public questions ("what is
//! diabetes?"), so a term only counts when personal context surrounds it. The terms and context
//! words are data (`data/lexicons.toml`); this file keeps the matching.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::types::{
    context_around, floor_boundary, has_context, whole_word, Candidate, Recognizer, Tier,
};

/// The lexicons and context words, as data (`data/lexicons.toml`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LexiconData {
    context: Context,
    lexicon: Vec<Lexicon>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Context {
    personal: Vec<String>,
    result_cues: Vec<String>,
    weak_finance: Vec<String>,
    amount_markers: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Lexicon {
    label: String,
    tier: Tier,
    terms: Vec<String>,
}

/// The embedded file, parsed once (a malformed file is a build defect the unit tests catch).
fn data() -> &'static LexiconData {
    static DATA: OnceLock<LexiconData> = OnceLock::new();
    DATA.get_or_init(|| {
        toml::from_str(include_str!("data/lexicons.toml"))
            .unwrap_or_else(|e| panic!("data/lexicons.toml: {e}"))
    })
}

/// "Emily's mental health": a capitalised possessive shortly before the term makes it a named
/// person's (the context window above is lower-cased, so this looks at the text itself).
fn named_possessive_before(text: &str, start: usize) -> bool {
    let b0 = floor_boundary(text, start.saturating_sub(48));
    text[b0..start]
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter_map(|w| w.strip_suffix("'s"))
        .any(|stem| stem.chars().count() > 1 && stem.starts_with(char::is_uppercase))
}

/// True when a whole word of `personal` (a possessive counts: "dad's") or a `result_cues`
/// phrase is within 48 bytes before or 24 after the term.
fn personal_context(text: &str, start: usize, end: usize) -> bool {
    let ctx = &data().context;
    let (before, after) = context_around(text, start, end, 48);
    let after = &after[..floor_boundary(&after, 24)];
    before
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .chain(after.split(|c: char| !(c.is_alphanumeric() || c == '\'')))
        .any(|w| {
            let w = w.strip_suffix("'s").unwrap_or(w);
            ctx.personal.iter().any(|p| p == w)
        })
        || named_possessive_before(text, start)
        || ctx
            .result_cues
            .iter()
            .any(|c| before.contains(c.as_str()) || after.contains(c.as_str()))
}

/// The detector of a content term found with no personal context around it.
pub(crate) const BARE: &str = "lexicon-bare";

fn is_weak(term: &str) -> bool {
    data()
        .context
        .weak_finance
        .iter()
        .any(|w| w.eq_ignore_ascii_case(term))
}

pub struct LexiconRecognizer {
    matcher: AhoCorasick,
    /// Label and tier per pattern index.
    kinds: Vec<(&'static str, Tier)>,
}

impl LexiconRecognizer {
    pub fn new() -> Self {
        let mut patterns: Vec<&str> = Vec::new();
        let mut kinds = Vec::new();
        for lexicon in &data().lexicon {
            for term in &lexicon.terms {
                patterns.push(term);
                kinds.push((lexicon.label.as_str(), lexicon.tier));
            }
        }
        // A full DFA: several times faster than the default NFA on prose, and the lexicon is small.
        let matcher = AhoCorasickBuilder::new()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .expect("static lexicon");
        Self { matcher, kinds }
    }
}

impl Default for LexiconRecognizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Recognizer for LexiconRecognizer {
    fn name(&self) -> &'static str {
        "lexicon"
    }

    fn find(&self, text: &str, out: &mut Vec<Candidate>) {
        for m in self.matcher.find_iter(text) {
            let (s, e) = (m.start(), m.end());
            // Whole words only: "ibs" must not fire inside "ribs".
            if !whole_word(text, s, e) {
                continue;
            }
            let (label, tier) = self.kinds[m.pattern().as_usize()];
            let personal = personal_context(text, s, e);
            let mut score: f32 = if personal { 0.75 } else { 0.3 };
            if label == "FINANCIAL_SITUATION" {
                let (before, after) = context_around(text, s, e, 32);
                let ctx = &data().context;
                let amount = has_context(text, s, e, &ctx.amount_markers)
                    || before
                        .bytes()
                        .chain(after.bytes())
                        .any(|b| b.is_ascii_digit());
                let weak = is_weak(&text[s..e]);
                if amount {
                    score += 0.15;
                } else if weak {
                    score = 0.3;
                }
            }
            // A term with no personal context nearby is reported under its own detector, below
            // the threshold: in a request that is personal as a whole it counts (`Scanner::
            // scan_request`); a weak finance word ("bank", "loan") never does by itself.
            let bare = !personal && !(label == "FINANCIAL_SITUATION" && is_weak(&text[s..e]));
            out.push(Candidate {
                start: s,
                end: e,
                label,
                tier,
                score: score.min(1.0),
                detector: if bare { BARE } else { "lexicon" },
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        LexiconRecognizer::new().find(text, &mut out);
        out.into_iter()
            .filter(|c| c.score >= 0.5)
            .map(|c| (c.label, text[c.start..c.end].to_string()))
            .collect()
    }

    #[test]
    fn the_lexicons_are_well_formed_and_registered_as_content() {
        let d = data();
        assert_eq!(d.lexicon.len(), 4);
        for l in &d.lexicon {
            let reg = crate::labels::get(&l.label).expect("lexicon label registered");
            assert_eq!(reg.kind, crate::labels::LabelKind::Content, "{}", l.label);
            assert_eq!(reg.tier, l.tier, "{}", l.label);
            assert!(l.terms.len() >= 30, "{}: terms lost", l.label);
            for t in &l.terms {
                assert_eq!(t.trim(), t, "{}: {t:?} has spaces around it", l.label);
            }
        }
        assert!(!d.context.personal.is_empty() && !d.context.amount_markers.is_empty());
    }

    #[test]
    fn personal_health_and_money_are_content() {
        assert_eq!(
            labels("I was diagnosed with Diabetes last year"),
            vec![
                ("HEALTH_CONDITION", "diagnosed".to_string()),
                ("HEALTH_CONDITION", "Diabetes".to_string())
            ]
        );
        assert_eq!(labels("my salary is $85,000")[0].0, "FINANCIAL_SITUATION");
        assert_eq!(
            labels("She takes sertraline every morning")[0].0,
            "MEDICATION"
        );
        assert_eq!(
            labels("my divorce hearing is next week")[0].0,
            "LEGAL_MATTER"
        );
        // A possessive is personal too, and so is a reported test result.
        assert_eq!(
            labels("Dad's diabetes is under control now")[0].0,
            "HEALTH_CONDITION"
        );
        assert_eq!(
            labels("Results came back positive for chlamydia.")[0].1,
            "chlamydia"
        );
        // A named person's health is theirs; the same words about nobody are a topic.
        assert_eq!(
            labels("a record of payments for Emily's mental health care")[0].1,
            "mental health"
        );
        assert!(labels("How does mental health care work in Canada?").is_empty());
        // What someone pays for insurance is their finances; the word alone is a topic.
        assert_eq!(
            labels("Her premium was adjusted to reflect these changes")[0].1,
            "premium"
        );
        assert!(labels("What is an insurance premium?").is_empty());
    }

    #[test]
    fn general_questions_and_substrings_are_not() {
        assert!(labels("What are the typical causes of diabetes in adults?").is_empty());
        assert!(labels("The ribs were great, and the hivemind agreed").is_empty());
        assert!(labels("Explain how a mortgage works").is_empty());
        assert!(labels("How do I check my balance on my credit card?").is_empty());
        assert_eq!(
            labels("my balance is $12,400 overdrawn")[0].0,
            "FINANCIAL_SITUATION"
        );
    }
}
