//! How likely the local model handles a task as well as a frontier model: a logistic model over
//! named, transparent features, fitted by `bench/fit_router.py` on the development routing sets
//! (GSM8K and MMLU questions labelled by whether Mixtral-8x7B matched GPT-4). The fitted model is
//! for a "large" local class (7-8 B, roughly Mixtral's league); smaller classes shift the logit
//! down by fixed, documented amounts, since no labels exist for them.

use serde::{Deserialize, Serialize};

/// The size of the local model the plan assumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalClass {
    /// ≈ 0.1-0.5 B parameters (the test models).
    Small,
    /// ≈ 1-3 B.
    Medium,
    /// ≈ 7-8 B.
    Large,
}

impl LocalClass {
    pub fn from_parameters_b(b: f64) -> Self {
        if b < 0.9 {
            LocalClass::Small
        } else if b < 5.0 {
            LocalClass::Medium
        } else {
            LocalClass::Large
        }
    }

    /// Logit offset against the fitted (large) model: an assumption, not a measurement.
    fn offset(self) -> f64 {
        match self {
            LocalClass::Small => -3.0,
            LocalClass::Medium => -1.2,
            LocalClass::Large => 0.0,
        }
    }
}

impl std::str::FromStr for LocalClass {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "small" => Ok(LocalClass::Small),
            "medium" => Ok(LocalClass::Medium),
            "large" => Ok(LocalClass::Large),
            o => Err(format!("unknown local class {o:?} (small, medium, large)")),
        }
    }
}

const MATH: &[&str] = &[
    "how many",
    "how much",
    "total",
    "percent",
    "%",
    "$",
    "each",
    "per ",
    "remaining",
    "left",
];
const CODE: &[&str] = &[
    "code",
    "function",
    "python",
    "javascript",
    "rust",
    "```",
    "implement",
    "bug",
    "compile",
    "sql",
    "regex",
];
const REASON: &[&str] = &[
    "prove",
    "why",
    "derive",
    "step by step",
    "statement 1",
    "which of the following",
    "must be true",
    "implies",
];
const LOCAL: &[&str] = &[
    "summarize",
    "summarise",
    "summary",
    "extract",
    "rewrite",
    "rephrase",
    "translate",
    "classify",
    "grammar",
    "proofread",
    "list the",
    "tl;dr",
];
const LONG: &[&str] = &[
    "essay",
    "story",
    "article",
    "report",
    "blog post",
    "cover letter",
    "poem",
    "write a",
    "draft a",
];
const FRESH: &[&str] = &[
    "latest",
    "today",
    "current",
    "news",
    "this week",
    "2025",
    "2026",
    "recent",
];
const STEM: &[&str] = &[
    "algebra",
    "calculus",
    "integral",
    "derivative",
    "matrix",
    "eigen",
    "probability",
    "physics",
    "chemistry",
    "equation",
    "theorem",
    "polynomial",
    "group",
    "field extension",
    "mod ",
];

pub const NAMES: [&str; 12] = [
    "bias",
    "log_chars",
    "log_numbers",
    "math_words",
    "multiple_choice",
    "code",
    "reasoning",
    "local_task",
    "long_form",
    "fresh_knowledge",
    "stem",
    "non_ascii",
];

/// Fitted by `bench/fit_router.py` (2026-11-30, 1,827 rows without both_fail, fit half).
const WEIGHTS: [f64; 12] = [
    1.1619, 0.1191, -0.3486, -0.2202, 0.3404, -0.2446, 0.1040, -0.0052, -0.0491, -0.1810, 0.0627,
    -0.0099,
];

/// Priors from the task taxonomy, added to the fitted weights. The development routing sets hold
/// only maths word problems and multiple-choice exams, so they cannot teach what extraction,
/// summarising, rewriting or classification need (local-friendly), nor code, long-form writing
/// or fresh knowledge (frontier work): these logit shifts are set by hand, not fitted, and
/// none of these features fires on the routing sets' rows that matter.
const PRIORS: [f64; 12] = [
    0.0, 0.0, 0.0, 0.0, 0.0, -0.8, 0.0, 2.0, -0.8, -1.5, 0.0, 0.0,
];

/// The probability threshold that sent 95% of `needs_strong` questions to the cloud on the fit
/// half (balanced policy).
pub const BALANCED_THRESHOLD: f64 = 0.8432;

fn has(t: &str, words: &[&str]) -> f64 {
    if words.iter().any(|w| t.contains(w)) {
        1.0
    } else {
        0.0
    }
}

/// The named features, in `NAMES` order (kept identical to the Python fitter).
pub fn features(prompt: &str) -> [f64; 12] {
    let t = prompt.to_lowercase();
    let mut numbers = 0usize;
    let mut in_num = false;
    for c in t.chars() {
        let d = c.is_ascii_digit();
        if d && !in_num {
            numbers += 1;
        }
        // "3.5" counts once, like the fitter's `\d+(?:\.\d+)?`.
        in_num = d || (in_num && c == '.');
    }
    let mc = prompt.lines().any(|l| {
        let l = l.trim_start();
        let b = l.as_bytes();
        b.len() >= 3
            && (b'A'..=b'D').contains(&b[0])
            && matches!(b[1], b'.' | b')')
            && b[2].is_ascii_whitespace()
    });
    let chars = prompt.chars().count();
    let non_ascii = prompt.chars().filter(|c| !c.is_ascii()).count() as f64 / chars.max(1) as f64;
    [
        1.0,
        (1.0 + chars as f64).ln() / 8.0,
        (1.0 + numbers as f64).ln() / 3.0,
        has(&t, MATH),
        if mc { 1.0 } else { 0.0 },
        has(&t, CODE),
        has(&t, REASON),
        has(&t, LOCAL),
        has(&t, LONG),
        has(&t, FRESH),
        has(&t, STEM),
        non_ascii,
    ]
}

/// Probability that a local model of `class` handles `prompt` well.
pub fn p_local(prompt: &str, class: LocalClass) -> f64 {
    let x = features(prompt);
    let z: f64 = x
        .iter()
        .zip(WEIGHTS.iter().zip(PRIORS))
        .map(|(a, (w, p))| a * (w + p))
        .sum::<f64>()
        + class.offset();
    1.0 / (1.0 + (-z).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_match_the_fitter_on_examples() {
        let f = features("Janet has 16 eggs and 3.5 dollars. How many are left?\nA. 1\nB. 2");
        assert_eq!(f[4], 1.0); // multiple choice
        assert_eq!(f[3], 1.0); // math words
        assert!(
            (f[2] - (1.0f64 + 4.0).ln() / 3.0).abs() < 1e-12,
            "16, 3.5, 1, 2"
        );
        assert!(p_local("hi", LocalClass::Large) > p_local("hi", LocalClass::Small));
    }
}
