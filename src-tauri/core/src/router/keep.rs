//! Whether the local model's answer to a multiple-choice question stays on the device: the
//! "gain" rule. Two logistic models over named features of the question and of the model's
//! belief between the letters estimate how likely the local answer is right and how likely the
//! strong cloud model's would be; the answer is kept unless the cloud is expected to do better
//! by more than the rule's bar. The fitted numbers are data (`keep.toml`, written by
//! `bench/mmlu_gain.py --write`); this module computes the features and applies them.
//!
//! Why not the local model's confidence alone: measured on 1,000 dev MMLU questions, a question
//! the recommended 1.5B model is unsure of is often one the strong model also gets wrong
//! (confidence predicts the strong model's success about as well as the local model's own,
//! AUC 0.72 against 0.73), so sending the least confident half recovers only ~59% of the gap.
//! Estimating both sides sends where the cloud is expected to gain most.

use std::sync::OnceLock;

use serde::Deserialize;

/// The shipped rule (validated by this module's tests).
const BUILTIN: &str = include_str!("keep.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    choice: ChoiceRule,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChoiceRule {
    /// The local model the rule was fitted for, and on what (for people reading the file).
    #[allow(dead_code)]
    model: String,
    #[allow(dead_code)]
    fitted: String,
    /// Kept when P(local right) - P(strong right) is at least this.
    bar: f64,
    /// Never kept when the model's belief in its pick is within this of chance (1 / options):
    /// it is guessing, whatever the cloud is expected to do.
    near_chance: f64,
    /// Whole words that turn a question around ("Which is NOT ..."), matched in its stem.
    negation: Vec<String>,
    /// Phrases of the two-statement form ("Statement 1 | ...").
    statement: Vec<String>,
    /// The features both models read, in the order of their weights.
    features: Vec<String>,
    local: Logit,
    strong: Logit,
}

/// A logistic model over standardized features.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Logit {
    intercept: f64,
    mean: Vec<f64>,
    scale: Vec<f64>,
    weights: Vec<f64>,
}

impl Logit {
    fn p(&self, x: &[f64]) -> f64 {
        let z: f64 = self.intercept
            + x.iter()
                .zip(&self.mean)
                .zip(&self.scale)
                .zip(&self.weights)
                .map(|(((x, m), s), w)| w * (x - m) / s)
                .sum::<f64>();
        1.0 / (1.0 + (-z).exp())
    }
}

/// The features the rule may name. Data names them; code computes them.
const KNOWN: &[&str] = &[
    "conf", "margin", "ent", "pick_b", "qlen", "digits", "neg", "optlen", "stmt",
];

fn load(text: &str) -> Result<ChoiceRule, String> {
    let f: File = toml::from_str(text).map_err(|e| e.to_string())?;
    let r = f.choice;
    if let Some(u) = r.features.iter().find(|n| !KNOWN.contains(&n.as_str())) {
        return Err(format!("unknown feature {u:?}"));
    }
    for (name, m) in [("local", &r.local), ("strong", &r.strong)] {
        let n = r.features.len();
        if m.mean.len() != n || m.scale.len() != n || m.weights.len() != n {
            return Err(format!("{name}: {n} features but other lengths"));
        }
        if m.scale.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(format!("{name}: a scale is not positive"));
        }
    }
    Ok(r)
}

fn rule() -> &'static ChoiceRule {
    static RULE: OnceLock<ChoiceRule> = OnceLock::new();
    // Embedded data, checked by `the_shipped_rule_loads`: not input anyone else controls.
    RULE.get_or_init(|| load(BUILTIN).expect("router/keep.toml is valid"))
}

/// What the rule expects of a local multiple-choice answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Gain {
    /// Estimated probability the local answer is right.
    pub local: f64,
    /// Estimated probability the strong cloud model answers right.
    pub strong: f64,
    /// How far the answer clears the bar for keeping it: kept when ≥ 0.
    pub keep: f64,
    /// The belief in the pick is within the rule's margin of chance: not kept, whatever the
    /// estimates say.
    pub guessing: bool,
}

/// The rule's verdict on a question (`prompt`, its option texts `options`) whose letters the
/// local model believes in as `belief` (normalized over the letters), having picked `pick`.
pub fn choice(prompt: &str, options: &[String], belief: &[f64], pick: char) -> Gain {
    let r = rule();
    let x = features(r, prompt, options, belief, pick);
    let local = r.local.p(&x);
    let strong = r.strong.p(&x);
    let conf = belief.iter().copied().fold(0.0, f64::max);
    let floor = 1.0 / belief.len().max(1) as f64 + r.near_chance;
    let guessing = conf < floor;
    Gain {
        local,
        strong,
        keep: if guessing {
            conf - floor
        } else {
            local - strong - r.bar
        },
        guessing,
    }
}

fn features(
    r: &ChoiceRule,
    prompt: &str,
    options: &[String],
    belief: &[f64],
    pick: char,
) -> Vec<f64> {
    let mut sorted: Vec<f64> = belief.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let first = sorted.first().copied().unwrap_or(0.0);
    let second = sorted.get(1).copied().unwrap_or(0.0);
    let stem = stem(prompt);
    let words: Vec<&str> = stem
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mean_option = if options.is_empty() {
        0.0
    } else {
        options.iter().map(|o| o.chars().count()).sum::<usize>() as f64 / options.len() as f64
    };
    r.features
        .iter()
        .map(|name| match name.as_str() {
            "conf" => first,
            "margin" => first - second,
            "ent" => -belief.iter().map(|p| p * (p + 1e-12).ln()).sum::<f64>(),
            "pick_b" => f64::from(u8::from(pick == 'B')),
            "qlen" => (stem.chars().count() as f64 + 1.0).ln(),
            "digits" => (1.0 + prompt.chars().filter(char::is_ascii_digit).count() as f64).ln(),
            "neg" => f64::from(u8::from(
                words.iter().any(|w| r.negation.iter().any(|n| n == w)),
            )),
            "optlen" => (mean_option + 1.0).ln(),
            "stmt" => f64::from(u8::from(
                r.statement.iter().any(|s| stem.contains(s.as_str())),
            )),
            // `load` admits only known names.
            _ => 0.0,
        })
        .collect()
}

/// The question before its options: the lines before the first option line.
fn stem(prompt: &str) -> String {
    let lines: Vec<&str> = prompt.lines().collect();
    let first_option = lines
        .iter()
        .position(|l| super::selfcheck::option_line(l, 'A').is_some());
    lines[..first_option.unwrap_or(lines.len())]
        .join("\n")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_rule_loads() {
        let r = load(BUILTIN).unwrap();
        assert!(!r.features.is_empty());
        assert!(r.bar.abs() < 0.5);
        assert!((0.0..0.2).contains(&r.near_chance));
    }

    /// A near-uniform belief is a guess: never kept, though the fitted estimates alone would
    /// keep it when they expect the cloud to fail too (short numeric options).
    #[test]
    fn a_guess_is_never_kept_and_a_sure_answer_is() {
        let q = "Which of these is a prime number?\nA. 4\nB. 5\nC. 6\nD. 8\nAnswer:";
        let opts: Vec<String> = ["4", "5", "6", "8"].iter().map(|s| s.to_string()).collect();
        let g = choice(q, &opts, &[0.28, 0.24, 0.24, 0.24], 'A');
        assert!(g.guessing && g.keep < 0.0, "{g:?}");
        let g = choice(q, &opts, &[0.02, 0.95, 0.02, 0.01], 'B');
        assert!(!g.guessing && g.keep >= 0.0, "{g:?}");
        // The estimates move the right way with the model's belief.
        let unsure = choice(q, &opts, &[0.2, 0.4, 0.2, 0.2], 'B');
        assert!(unsure.local < g.local, "{unsure:?} {g:?}");
    }

    #[test]
    fn a_rule_naming_an_unknown_feature_or_with_wrong_lengths_is_refused() {
        let bad = BUILTIN.replacen("\"conf\"", "\"colour\"", 1);
        assert!(load(&bad).unwrap_err().contains("colour"));
        let short = "[choice]\nmodel = \"m\"\nfitted = \"f\"\nbar = 0.0\nnear_chance = 0.05\nnegation = []\nstatement = []\nfeatures = [\"conf\"]\n[choice.local]\nintercept = 0.0\nmean = [0.0]\nscale = [1.0]\nweights = []\n[choice.strong]\nintercept = 0.0\nmean = [0.0]\nscale = [1.0]\nweights = [1.0]\n";
        assert!(load(short).unwrap_err().contains("local"));
    }

    /// The features as `bench/mmlu_gain.py` computes them when it fits the rule (the values
    /// below were printed by its `feature_row` for the same question).
    #[test]
    fn features_match_the_fitting_script() {
        let r = load(BUILTIN).unwrap();
        let all = ChoiceRule {
            features: KNOWN.iter().map(|s| s.to_string()).collect(),
            local: Logit {
                intercept: 0.0,
                mean: vec![],
                scale: vec![],
                weights: vec![],
            },
            strong: Logit {
                intercept: 0.0,
                mean: vec![],
                scale: vec![],
                weights: vec![],
            },
            ..r
        };
        let q = "Which of these is NOT a prime number below 10?\nA. 2\nB. 3\nC. 9\nD. 7\nAnswer:";
        let opts: Vec<String> = ["2", "3", "9", "7"].iter().map(|s| s.to_string()).collect();
        let x = features(&all, q, &opts, &[0.1, 0.2, 0.6, 0.1], 'C');
        let want = [
            0.6,
            0.4,
            1.0889,
            0.0,
            (47f64).ln(),
            (1.0 + 6.0f64).ln(),
            1.0,
            (2f64).ln(),
            0.0,
        ];
        for ((name, got), want) in KNOWN.iter().zip(&x).zip(want) {
            assert!((got - want).abs() < 1e-3, "{name}: {got} != {want}");
        }
    }
}
