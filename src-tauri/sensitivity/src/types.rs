//! The sensitivity engine's shared vocabulary: tiers, raw findings, and the recognizer seam.
//!
//! Recognizers work in byte offsets (what `regex` gives); the pipeline converts to Unicode code
//! point offsets once, at the end, because that is what the public contract promises.

use serde::{Deserialize, Serialize};

/// How bad it is if this leaves the device. Ordered from worst to harmless.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Secret,
    Financial,
    GovernmentId,
    ProfessionalId,
    Health,
    Contact,
    QuasiIdentifier,
    Public,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Secret => "secret",
            Tier::Financial => "financial",
            Tier::GovernmentId => "government_id",
            Tier::ProfessionalId => "professional_id",
            Tier::Health => "health",
            Tier::Contact => "contact",
            Tier::QuasiIdentifier => "quasi_identifier",
            Tier::Public => "public",
        }
    }
}

/// One finding of one recognizer, in **byte** offsets into the scanned text (end exclusive,
/// both on char boundaries).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub start: usize,
    pub end: usize,
    /// Upper-case entity label, e.g. `CREDIT_CARD`, `IBAN_CODE`, `US_SSN`, `PERSON`, `SECRET`.
    pub label: &'static str,
    pub tier: Tier,
    /// Confidence in 0..=1. Validated checksums score high; bare patterns low unless context helps.
    pub score: f32,
    /// Which recognizer produced it (for explanations and evaluation), e.g. `rules`, `secrets`, `ner`.
    pub detector: &'static str,
}

/// A detector stage. Implementations must be linear in the text length (the `regex` crate
/// guarantees that for its matching) and must never panic on any UTF-8 input.
pub trait Recognizer: Send + Sync {
    fn name(&self) -> &'static str;
    /// Appends findings for `text` to `out`. Overlaps are allowed; the pipeline resolves them.
    fn find(&self, text: &str, out: &mut Vec<Candidate>);
}

/// Appends a rule finding (score clamped to 0..=1, empty spans dropped).
pub fn push_rule(
    out: &mut Vec<Candidate>,
    start: usize,
    end: usize,
    label: &'static str,
    tier: Tier,
    score: f32,
) {
    if end > start {
        out.push(Candidate {
            start,
            end,
            label,
            tier,
            score: score.clamp(0.0, 1.0),
            detector: "rules",
        });
    }
}

/// True when the match `start..end` of `text` is a whole word: no letter, digit or `_` glued on
/// either side (curly quotes, dashes and other punctuation are boundaries).
pub fn whole_word(text: &str, start: usize, end: usize) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    !word(text[..start].chars().next_back()) && !word(text[end..].chars().next())
}

/// Largest char boundary `<= i`.
pub fn floor_boundary(text: &str, mut i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Smallest char boundary `>= i`.
pub fn ceil_boundary(text: &str, mut i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The text within `radius` bytes before `start` and after `end`, lower-cased, for context-word
/// checks. Bounded, so context checks never make a scan quadratic.
pub fn context_around(text: &str, start: usize, end: usize, radius: usize) -> (String, String) {
    let b0 = floor_boundary(text, start.saturating_sub(radius));
    let a1 = ceil_boundary(text, end.saturating_add(radius));
    (text[b0..start].to_lowercase(), text[end..a1].to_lowercase())
}

/// True when one of `words` (lower-case) appears within 48 bytes before the span or 24 after it.
/// Words are matched as substrings, so "passport" also finds "passport-no".
pub fn has_context<W: AsRef<str>>(text: &str, start: usize, end: usize, words: &[W]) -> bool {
    let (before, after) = context_around(text, start, end, 48);
    let after = &after[..floor_boundary(&after, 24)];
    words
        .iter()
        .any(|w| before.contains(w.as_ref()) || after.contains(w.as_ref()))
}
