//! Self-knowledge: whether the local model's own answer to a short task can be trusted. It
//! recognises the shape of a task (multiple choice, a worked problem, a short factual
//! question), asks the local model in a form whose confidence can be read from token
//! probabilities, and reads that confidence and whether the answer is worth keeping (for
//! multiple choice by the gain rule of `keep.rs`). The router acts on that verdict.

use serde::Serialize;

use crate::cloud::ChatMessage;
use crate::local::{GenerateRequest, TokenLogprob};

/// What kind of answer a task wants, as far as reading its confidence goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// Options lettered A., B., ... on their own lines: the answer is a letter, and the
    /// probability the model gives each letter is its confidence.
    Choice { letters: Vec<char> },
    /// A problem with numbers to work out: reasoning, then a final answer line whose tokens'
    /// probabilities are the confidence.
    Worked,
    /// A short question with a short answer: the answer's token probabilities.
    Fact,
}

/// Longest prompt (characters) a local attempt is made for: past this the task is not short.
const MAX_PROMPT_CHARS: usize = 2_000;

/// The options of a multiple-choice prompt ("A. 4" lines, at least two, in letter order).
pub fn options(prompt: &str) -> Vec<(char, String)> {
    let mut out: Vec<(char, String)> = Vec::new();
    for line in prompt.lines() {
        let expected = (b'A' + out.len() as u8) as char;
        if out.len() < 10 {
            if let Some(rest) = option_line(line, expected) {
                out.push((expected, rest.trim().to_string()));
            }
        }
    }
    if out.len() >= 2 {
        out
    } else {
        Vec::new()
    }
}

/// The text of `line` when it is option `letter` ("B. 5", "B) 5"), else `None`.
pub(super) fn option_line(line: &str, letter: char) -> Option<&str> {
    let rest = line.trim_start().strip_prefix(letter)?;
    let rest = rest.strip_prefix(['.', ')'])?;
    rest.starts_with(char::is_whitespace).then_some(rest)
}

/// The shape of `prompt` when a local attempt can be judged, `None` for open work (writing,
/// code, long or fresh tasks: the complexity guess decides those alone).
pub fn shape(prompt: &str) -> Option<Shape> {
    if prompt.chars().count() > MAX_PROMPT_CHARS || prompt.trim().is_empty() {
        return None;
    }
    let opts = options(prompt);
    if !opts.is_empty() {
        return Some(Shape::Choice {
            letters: opts.into_iter().map(|(c, _)| c).collect(),
        });
    }
    let f = super::complexity::features(prompt);
    // code, long-form writing, fresh knowledge: no short answer to judge.
    if f[5] > 0.0 || f[8] > 0.0 || f[9] > 0.0 {
        return None;
    }
    let numbers = prompt
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .count();
    let asks =
        prompt.trim_end().ends_with('?') || prompt.lines().last().is_some_and(|l| l.contains('?'));
    if numbers >= 2 && (asks || f[3] > 0.0) {
        return Some(Shape::Worked);
    }
    (asks && prompt.chars().count() <= 300).then_some(Shape::Fact)
}

/// Instructions for a worked problem: short reasoning, then the line the confidence is read
/// from.
const WORKED_SYSTEM: &str = "Solve the problem. Reason briefly, step by step, then write the final answer on its own last line as \"Answer: <number>\".";
/// A short question wants a short answer: the attempt is read on its first tokens, and every
/// token the small model adds after the fact costs the user ~0.1 s (measured: unprompted, the
/// 1.5B model wrote 60–120 tokens to questions like "Where is Betelgeuse?").
const FACT_SYSTEM: &str = "Answer the question directly, in one short sentence.";
/// A worked problem asked a second way, as a program (Gao et al.'s program-aided form, read as
/// plain text): the model writes the arithmetic, `program::answer` computes it without running
/// anything, and the answer is kept only when this number and the one reasoned in words agree.
/// Measured with the recommended model (Qwen2.5-Coder-1.5B, through llama.cpp with the same
/// file) on dev GSM8K (`bench/gsm8k_agree.py`; figures in `bench/RESULTS.md`).
/// The two program prompts: the second, asked only when the words and the first program
/// disagree, names every given number first, so that it is a third, different solution (it
/// was right less often alone, 48% vs 66%, but two of the three agreeing was right on 84% of
/// the problems kept: `bench/RESULTS.md`).
const PROGRAM_PROMPTS: [&str; 2] = [
    "Question: {question}\n\nWrite a short Python program that computes the answer, using only arithmetic, and stores the final number in a variable named `answer`.\n\n```python\n",
    "Question: {question}\n\nAnswer the question with a Python program. First assign each number given in the question to a variable with a descriptive name, then compute the result step by step and assign it to `answer`.\n\n```python\n",
];
/// Where the program ends: the code fence the model closes it with.
const PROGRAM_END: &str = "```";
/// Tokens the program gets (they are a few dozen lines with comments; measured 60-200 tokens).
const PROGRAM_MAX_TOKENS: usize = 320;
/// Tokens a short answer gets; a sentence is far shorter.
const FACT_MAX_TOKENS: usize = 64;
const CHOICE_SYSTEM: &str =
    "Answer the multiple-choice question with the letter of the correct option only.";
/// A self-contained multiple-choice question is read as plain text in the format models meet
/// such questions in (Hendrycks et al.'s MMLU prompt), not as a chat turn: the token after
/// "Answer:" is then the letter. As a chat turn the model wants to write "The answer is ..."
/// first, and the letters hold ~20% of its first token's probability: the belief read from
/// that tail leaned to "B" (194 of 400 dev MMLU picks). Measured with the recommended model
/// (Qwen2.5-Coder-1.5B) on 400 dev MMLU questions: right 44% as a chat turn, 48% as plain
/// text; confidence AUC 0.71 -> 0.74; answers kept at half sent right 58% -> 68%
/// (`bench/RESULTS.md`, 2026-12-05).
const CHOICE_HEADER: &str = "The following are multiple choice questions (with answers).";

/// Alternatives read at a multiple-choice answer's one token.
const CHOICE_ALTERNATIVES: usize = 20;

/// The local model's request for a task of `shape` (the messages as the local model would read
/// the task otherwise, with the shape's instruction first).
pub fn request(shape: &Shape, messages: Vec<ChatMessage>, max_tokens: usize) -> GenerateRequest {
    if let Shape::Choice { letters } = shape {
        if let Some(req) = plain_choice(letters, &messages) {
            return req;
        }
    }
    let (system, max_tokens, logprobs) = match shape {
        Shape::Choice { .. } => (Some(CHOICE_SYSTEM), 1, CHOICE_ALTERNATIVES),
        Shape::Worked => (Some(WORKED_SYSTEM), max_tokens.max(384), 1),
        Shape::Fact => (Some(FACT_SYSTEM), max_tokens.min(FACT_MAX_TOKENS), 1),
    };
    let mut all = Vec::with_capacity(messages.len() + 1);
    if let Some(s) = system {
        all.push(ChatMessage::new(crate::cloud::Role::System, s));
    }
    all.extend(messages);
    GenerateRequest {
        messages: all,
        max_tokens,
        temperature: None,
        logprobs: Some(logprobs),
        // A small model asked for a letter often wants to reason first ("To find..."): the
        // answer is held to the letters, so their probabilities are its belief between them.
        choices: match shape {
            Shape::Choice { letters } => letters.iter().map(|c| c.to_string()).collect(),
            _ => Vec::new(),
        },
        plain: false,
        stop: Vec::new(),
    }
}

/// The plain-text form of a multiple-choice question that stands alone (one user message, no
/// conversation before it: earlier turns only read right as a chat). The letter follows
/// "Answer:" after a space, so the choices are " A", " B", ...
fn plain_choice(letters: &[char], messages: &[ChatMessage]) -> Option<GenerateRequest> {
    let [only] = messages else { return None };
    if only.role != crate::cloud::Role::User {
        return None;
    }
    let question = only.content.trim();
    let ask = if question.ends_with("Answer:") {
        ""
    } else {
        "\nAnswer:"
    };
    Some(GenerateRequest {
        messages: vec![ChatMessage::user(format!(
            "{CHOICE_HEADER}\n\n{question}{ask}"
        ))],
        max_tokens: 1,
        temperature: None,
        logprobs: Some(CHOICE_ALTERNATIVES),
        choices: letters.iter().map(|c| format!(" {c}")).collect(),
        plain: true,
        stop: Vec::new(),
    })
}

/// The second, program form of a worked problem that stands alone (one user message: a
/// conversation's earlier turns only read right as a chat); `None` otherwise, and the words
/// answer is then not kept.
pub fn program_request(
    shape: &Shape,
    messages: &[ChatMessage],
    nth: usize,
) -> Option<GenerateRequest> {
    let (Shape::Worked, [only], Some(prompt)) = (shape, messages, PROGRAM_PROMPTS.get(nth)) else {
        return None;
    };
    (only.role == crate::cloud::Role::User).then(|| GenerateRequest {
        messages: vec![ChatMessage::user(
            prompt.replace("{question}", only.content.trim()),
        )],
        max_tokens: PROGRAM_MAX_TOKENS,
        temperature: None,
        logprobs: None,
        choices: Vec::new(),
        plain: true,
        stop: vec![PROGRAM_END.into()],
    })
}

/// The local answer as shown, how sure the model was (0..1), and whether it is worth keeping.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub text: String,
    pub confidence: f64,
    /// How far the answer clears the bar for keeping it on the device (kept when ≥ 0); `None`
    /// for a shape no local answer is kept for (`threshold`).
    pub keep: Option<f64>,
    /// Why it is kept or not, for the user ("confidence 0.93 (at least 0.80)").
    pub why: String,
    /// What to show instead of `text` where the local answer is the answer whatever its
    /// verdict (`tandem answer --local`): a worked problem whose program
    /// reached another number ends with that number, which was right more often (below).
    pub local_only: Option<String>,
    /// The words answer stopped at the token limit: its last number is where it was cut off,
    /// not an answer (`cut_off`).
    cut: bool,
    /// The question allows a result below zero (`admits_below_zero`); where it does not, a
    /// negative number is no answer to it.
    below_zero: bool,
}

impl Judged {
    /// A short answer or a worked problem: kept when its confidence reaches the shape's
    /// threshold.
    fn by_confidence(shape: &Shape, text: String, confidence: f64) -> Self {
        let bar = threshold(shape);
        let why = match bar {
            Some(t) if confidence >= t => format!("confidence {confidence:.2} (at least {t:.2})"),
            Some(t) => format!("local confidence {confidence:.2} (below {t:.2})"),
            None => format!("local confidence {confidence:.2}"),
        };
        Judged {
            text,
            confidence,
            keep: bar.map(|t| confidence - t),
            why,
            local_only: None,
            cut: false,
            below_zero: true,
        }
    }

    /// A worked problem's answer in words, checked against the programs the model wrote for
    /// it (none: it wrote none): kept when two of the solutions reach the same number. The
    /// confidence stays the words answer's token probability (reported, not decisive: it
    /// told right from wrong at AUC 0.57-0.64 on dev GSM8K).
    ///
    /// A solution reaches no number where it was cut off at the token limit (its last number
    /// is where it stopped), nor where its number is below zero and the question allows no
    /// such result: a count or an amount of money below zero is a step taken the wrong way
    /// round ("33 - 58"), however many solutions repeat it. On the first 50 dev GSM8K rows
    /// through the real binary, 3 of the 6 kept answers that were wrong were of these kinds
    /// (two programs agreeing on -25 lollipops and on -500 pounds; reasoning cut off while
    /// looping on a sentence); none of the 675 dev GSM8K answers is negative.
    pub fn confirmed_by(mut self, programs: &[String]) -> Self {
        let below_zero = self.below_zero;
        let plausible = |v: Option<f64>| v.filter(|&v| below_zero || v >= 0.0);
        let said = if self.cut {
            None
        } else {
            final_number(&self.text)
        };
        let raw: Vec<Option<f64>> = programs
            .iter()
            .map(|p| super::program::answer(p.split(PROGRAM_END).next().unwrap_or("")))
            .collect();
        let words = plausible(said);
        let computed: Vec<Option<f64>> = raw.iter().map(|&c| plausible(c)).collect();
        let agree = |a: Option<f64>, b: Option<f64>| matches!((a, b), (Some(a), Some(b)) if same_number(a, b));
        let show_any = |v: Option<f64>| v.map_or("none".to_string(), shown);
        // What each solution reached, as the user reads it: the number even where it is no
        // answer, marked why.
        let show = |v: Option<f64>| match v {
            Some(x) if plausible(v).is_none() => format!("{}, below zero", shown(x)),
            _ => show_any(v),
        };
        let words_shown = if self.cut {
            "none, cut off at the length limit".to_string()
        } else {
            show(said)
        };
        let arithmetic = raw.iter().map(|&c| show(c)).collect::<Vec<_>>().join(", ");
        let by_words = computed.iter().any(|&c| agree(words, c));
        let by_programs = computed
            .iter()
            .enumerate()
            .find_map(|(i, &a)| computed[i + 1..].iter().any(|&b| agree(a, b)).then_some(a))
            .flatten();
        // The number the answer ends with where the words are not confirmed: the programs'
        // when they agree, else the first program's, which was right far more often than the
        // words' where the two disagreed (13 vs 2 of 27 dev GSM8K rows).
        let ending = by_programs.or_else(|| computed.iter().flatten().next().copied());
        let ended = |v: f64, how: &str| {
            format!(
                "{}\n\nAnswer: {} ({how}; the reasoning above reached {}, so check it)",
                self.text,
                shown(v),
                words_shown
            )
        };
        if by_words {
            self.keep = Some(1.0);
            self.why = format!(
                "two local solutions agree, in words and as arithmetic ({}); confidence {:.2}",
                show(words),
                self.confidence
            );
        } else if let Some(v) = by_programs {
            // Kept, with the number the two programs reached shown as the answer.
            self.keep = Some(1.0);
            self.text = ended(v, "computed as arithmetic twice");
            self.why = format!(
                "two local solutions agree, both as arithmetic ({}; in words: {}); confidence {:.2}",
                shown(v),
                words_shown,
                self.confidence
            );
        } else {
            self.keep = Some(-1.0);
            self.local_only = ending.map(|v| ended(v, "computed as arithmetic"));
            self.why = format!(
                "local solutions disagree (in words: {}; as arithmetic: {arithmetic}); confidence {:.2}",
                words_shown,
                self.confidence
            );
        }
        self
    }

    /// The words answer stopped at the token limit (the engine's finish reason "length"):
    /// what it wrote last is no final answer.
    pub fn cut_off(mut self) -> Self {
        self.cut = true;
        self
    }

    /// Whether a worked answer is settled by `programs` (its words agree with one of them):
    /// no further program is worth writing.
    pub fn settled_by(&self, programs: &[String]) -> bool {
        self.clone().confirmed_by(programs).kept()
    }

    /// Whether the answer stays on the device.
    pub fn kept(&self) -> bool {
        self.keep.is_some_and(|k| k >= 0.0)
    }
}

/// Reads the answer and its confidence from a generation of `request(shape, ..)`.
pub fn judge(shape: &Shape, prompt: &str, text: &str, tokens: &[TokenLogprob]) -> Judged {
    match shape {
        Shape::Choice { letters } => judge_choice(letters, prompt, text, tokens),
        Shape::Worked => {
            // The final answer's tokens: those after the last "Answer" (the model wrote the
            // line the instruction asked for), else the last number written.
            let conf = answer_tokens(tokens)
                .or_else(|| last_number(tokens))
                .map(geometric_mean)
                .unwrap_or(0.0);
            Judged {
                below_zero: admits_below_zero(prompt),
                ..Judged::by_confidence(shape, text.trim().to_string(), conf)
            }
        }
        Shape::Fact => Judged::by_confidence(
            shape,
            text.trim().to_string(),
            geometric_mean(&tokens[..tokens.len().min(FACT_TOKENS)]),
        ),
    }
}

/// The final number of an answer worked in words: on its last "Answer" line, else the last
/// number written ("$1,250.50" is 1250.5).
fn final_number(text: &str) -> Option<f64> {
    let last_number = |s: &str| -> Option<f64> {
        let mut found = None;
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_digit() {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_digit()
                        || ((b[i] == b',' || b[i] == b'.')
                            && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
                {
                    i += 1;
                }
                let negative = start > 0 && b[start - 1] == b'-';
                let v: f64 = s[start..i].replace(',', "").parse().ok()?;
                found = Some(if negative { -v } else { v });
            } else {
                i += 1;
            }
        }
        found
    };
    let lower = text.to_ascii_lowercase();
    let line = lower
        .lines()
        .rev()
        .find(|l| l.contains("answer") && l.chars().any(|c| c.is_ascii_digit()));
    match line {
        Some(l) => last_number(&l[l.rfind("answer").unwrap_or(0)..]),
        None => last_number(text),
    }
}

/// Whether a question allows a result below zero: it writes a negative number ("-5 degrees",
/// "−12") or speaks of one ("negative", "below zero", "minus").
fn admits_below_zero(question: &str) -> bool {
    let lower = question.to_lowercase();
    let negative_number = lower.char_indices().any(|(i, c)| {
        matches!(c, '-' | '\u{2212}')
            && lower[i + c.len_utf8()..].starts_with(|d: char| d.is_ascii_digit())
            && !lower[..i].ends_with(|p: char| p.is_alphanumeric())
    });
    negative_number
        || ["negative", "below zero", "minus"]
            .iter()
            .any(|w| lower.contains(w))
}

/// A number as a person writes it: 26, not 26.000000000000004; 0.75, not 0.7500000001.
fn shown(v: f64) -> String {
    let fixed = format!("{v:.6}");
    fixed
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_string()
}

fn same_number(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

/// A short answer is judged on its first tokens (where it names the fact); later tokens are
/// phrasing.
const FACT_TOKENS: usize = 12;

fn geometric_mean(tokens: &[TokenLogprob]) -> f64 {
    if tokens.is_empty() {
        return 0.0;
    }
    let sum: f64 = tokens.iter().map(|t| (t.p.max(1e-9) as f64).ln()).sum();
    (sum / tokens.len() as f64).exp()
}

/// The tokens of the final answer of a worked problem: after the last "Answer", up to the end
/// of that line, those that carry digits; `None` when there is no such line.
fn answer_tokens(tokens: &[TokenLogprob]) -> Option<&[TokenLogprob]> {
    let mut text = String::new();
    let mut starts = Vec::with_capacity(tokens.len());
    for t in tokens {
        starts.push(text.len());
        text.push_str(&t.text);
    }
    let lower = text.to_ascii_lowercase();
    let at = lower.rfind("answer")?;
    let first = starts.iter().rposition(|&s| s <= at)?;
    let rest = &tokens[first..];
    let end = rest
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, t)| t.text.contains('\n'))
        .map_or(rest.len(), |(i, _)| i);
    let line = &rest[..end];
    let a = line
        .iter()
        .position(|t| t.text.chars().any(|c| c.is_ascii_digit()))?;
    let b = line
        .iter()
        .rposition(|t| t.text.chars().any(|c| c.is_ascii_digit()))?;
    Some(&line[a..=b])
}

/// The tokens of the last number written (a worked answer without its "Answer" line).
fn last_number(tokens: &[TokenLogprob]) -> Option<&[TokenLogprob]> {
    let digit = |t: &TokenLogprob| t.text.chars().any(|c| c.is_ascii_digit());
    let b = tokens.iter().rposition(digit)?;
    let a = tokens[..=b]
        .iter()
        .rposition(|t| !digit(t) && !matches!(t.text.as_str(), "," | "."))
        .map_or(0, |i| i + 1);
    Some(&tokens[a..=b])
}

fn judge_choice(letters: &[char], prompt: &str, text: &str, tokens: &[TokenLogprob]) -> Judged {
    let mut mass = vec![0f64; letters.len()];
    if let Some(first) = tokens.first() {
        let alternatives: Vec<(String, f32)> = if first.top.is_empty() {
            vec![(first.text.clone(), first.p)]
        } else {
            first.top.clone()
        };
        for (tok, p) in alternatives {
            if let Some(i) = letter_of(&tok).and_then(|c| letters.iter().position(|&l| l == c)) {
                mass[i] += p as f64;
            }
        }
    }
    let total: f64 = mass.iter().sum();
    // The whole split, for calibration runs (`TANDEM_LOG=tandem_core::router::selfcheck=debug`).
    tracing::debug!(?letters, ?mass, "belief between the letters");
    let best = mass
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i);
    match best.filter(|_| total > 0.0) {
        Some(i) => {
            let opts = options(prompt);
            let letter = letters[i];
            let option = opts
                .iter()
                .find(|(c, _)| *c == letter)
                .map(|(_, t)| t.clone())
                .unwrap_or_default();
            // Normalised over the letters: how the model splits its belief between the
            // options. (Held to the letters, the engine reports either the free distribution
            // or the one masked to the letters, whichever it sampled from first; normalised,
            // the two are the same.)
            let belief: Vec<f64> = mass.iter().map(|m| m / total).collect();
            let confidence = belief[i];
            let texts: Vec<String> = opts.into_iter().map(|(_, t)| t).collect();
            let gain = super::keep::choice(prompt, &texts, &belief, letter);
            let why = if gain.guessing {
                format!(
                    "local confidence {confidence:.2}, near chance ({:.2}): the model is guessing",
                    1.0 / belief.len() as f64
                )
            } else if gain.keep >= 0.0 {
                format!(
                    "confidence {confidence:.2}; estimated right here {:.2}, in the cloud {:.2}: too little to gain by sending it",
                    gain.local, gain.strong
                )
            } else {
                format!(
                    "local confidence {confidence:.2}; estimated right here {:.2}, in the cloud {:.2}",
                    gain.local, gain.strong
                )
            };
            Judged {
                text: format!("{letter}. {option}").trim().to_string(),
                confidence,
                keep: Some(gain.keep),
                why,
                local_only: None,
                cut: false,
                below_zero: true,
            }
        }
        None => Judged {
            text: text.trim().to_string(),
            confidence: 0.0,
            keep: Some(-1.0),
            why: "the local model named no option".into(),
            local_only: None,
            cut: false,
            below_zero: true,
        },
    }
}

/// The option letter a token stands for ("B", " B", "B." ...).
fn letter_of(tok: &str) -> Option<char> {
    let t = tok.trim().trim_end_matches(['.', ')', ':']);
    let mut c = t.chars();
    match (c.next(), c.next()) {
        (Some(l), None) if l.is_ascii_uppercase() => Some(l),
        _ => None,
    }
}

/// Whether a local answer of this shape is tried and may be kept (`threshold` or, for multiple
/// choice, the gain rule of `keep.rs`).
pub fn attempted(shape: &Shape) -> bool {
    matches!(shape, Shape::Choice { .. } | Shape::Worked) || threshold(shape).is_some()
}

/// The confidence at or above which the local answer is kept, per shape; `None`: not by
/// confidence alone (multiple choice: `keep.rs` weighs the local model's belief against the
/// cloud's expected success), or no local attempt (worked problems: their confidence does not
/// tell right from wrong well enough to be worth the wait). Calibrated with the recommended
/// model (Qwen2.5-Coder-1.5B) on this project's development routing sets
/// (`bench/eval_answer.py`, 2026-12-02):
/// - multiple choice, read as plain text (2026-12-05; replaced on 2026-12-06 by the gain rule,
///   which on the same 100 questions, fitted on 1,000 others, sent 45% and recovered 69%):
///   0.48 sent 49% of 100 dev MMLU questions
///   to the cloud and recovered 59% of the gap to the strong model (local alone 47%, AUC 0.78);
///   on 400 dev questions through llama.cpp with the same file and prompt, 48.5% sent. (As a
///   chat turn, 0.447 had sent 49% and recovered 69% with local alone at 41%: the routed
///   accuracy is the same, 64-65%, but the answers kept are right more often, 58% -> 68%);
/// - worked problems: every token-probability signal tried on 39 dev GSM8K problems separated
///   right from wrong at AUC 0.57-0.64 (the final number's probability, the whole reasoning's
///   geometric mean, its lowest tokens), so confidence decides nothing here: the answer is
///   kept when two of three solutions reach the same number: in words, and as one or two
///   programs (`Judged::confirmed_by`; 2026-12-06, figures in `bench/RESULTS.md`);
/// - short facts: 0.80 on the 96 dev MMLU questions whose stem is a short question with a
///   short gold answer, asked without their options (2026-12-03; the model's one-sentence
///   answer counts as right when it contains the gold words): the model was right on 17%,
///   its confidence told right from wrong at AUC 0.61; 0.80 sends 77% of them to the cloud and
///   recovers 77% of the gap (the old 0.45 kept 84% of these mostly wrong answers), while 8 of
///   8 everyday facts ("capital of Italy", "who wrote Hamlet") scored 0.84-0.96 and stay local.
pub fn threshold(shape: &Shape) -> Option<f64> {
    match shape {
        Shape::Choice { .. } | Shape::Worked => None,
        Shape::Fact => Some(0.80),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(text: &str, p: f32) -> TokenLogprob {
        TokenLogprob {
            text: text.into(),
            p,
            top: Vec::new(),
        }
    }

    #[test]
    fn a_worked_answer_is_kept_when_two_of_its_solutions_agree() {
        let worked = |text: &str| Judged::by_confidence(&Shape::Worked, text.into(), 0.62);
        let progs = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let text = "16 - 3 - 4 = 9 eggs are left.\n9 * $2 = $18.\nAnswer: $18";
        let agreeing = "eggs = 16 - 3 - 4\nanswer = eggs * 2\n```\nQuestion: next";
        let j = worked(text).confirmed_by(&progs(&[agreeing]));
        assert!(j.kept(), "{}", j.why);
        assert!(worked(text).settled_by(&progs(&[agreeing])));
        assert_eq!(j.text, text);
        assert_eq!(j.confidence, 0.62);
        assert!(
            j.why.starts_with("two local solutions agree, in words"),
            "{}",
            j.why
        );
        assert_eq!(j.local_only, None);
        // Words and the second program agree: kept as well.
        let other = "answer = 16 * 2 / 3";
        assert!(worked(text).confirmed_by(&progs(&[other, agreeing])).kept());
        // Another number: not settled; alone on the device, the answer ends with the program's.
        assert!(!worked(text).settled_by(&progs(&[other])));
        let j = worked(text).confirmed_by(&progs(&[other]));
        assert!(!j.kept());
        assert!(
            j.local_only.as_deref().is_some_and(|t| t.starts_with(text)
                && t.ends_with("Answer: 10.666667 (computed as arithmetic; the reasoning above reached 18, so check it)")),
            "{:?}",
            j.local_only
        );
        // The two programs agree against the words: kept, ending with their number.
        let j = worked(text).confirmed_by(&progs(&[other, "a = 32\nanswer = a / 3"]));
        assert!(j.kept(), "{}", j.why);
        assert!(
            j.text.starts_with(text) && j.text.ends_with("Answer: 10.666667 (computed as arithmetic twice; the reasoning above reached 18, so check it)"),
            "{}",
            j.text
        );
        assert!(
            j.why.starts_with(
                "two local solutions agree, both as arithmetic (10.666667; in words: 18)"
            ),
            "{}",
            j.why
        );
        assert_eq!(shown(26.000000000000004), "26");
        assert_eq!(shown(-0.5), "-0.5");
        // Three different numbers, programs that are not plain arithmetic, or none: not kept.
        for programs in [
            progs(&["answer = 16 * 2", "answer = 17"]),
            progs(&[
                "for e in range(3):\n    answer = 18",
                "if True:\n    answer = 18",
            ]),
            progs(&[]),
        ] {
            let j = worked(text).confirmed_by(&programs);
            assert!(!j.kept(), "{programs:?}");
            assert!(j.why.starts_with("local solutions disagree"), "{}", j.why);
        }
        // No number in words, one program: nothing to confirm.
        assert!(!worked("I cannot tell.")
            .confirmed_by(&progs(&["answer = 18"]))
            .kept());
        assert_eq!(
            final_number("So it costs $1,250.50.\nAnswer: 1,250.50 dollars"),
            Some(1250.5)
        );
        assert_eq!(final_number("Answer: -4.\nThat is all."), Some(-4.0));
        assert_eq!(final_number("3 + 4 = 7 apples"), Some(7.0));
        assert!(attempted(&Shape::Worked));
    }

    #[test]
    fn a_solution_cut_off_or_below_zero_reaches_no_number() {
        let progs = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let q = "Joe has 33 lollipops and gives 2 away. How many are left?";
        let words = |text: &str| judge(&Shape::Worked, q, text, &[tok(text, 0.9)]);
        // Reasoning cut off at the length limit: where it stopped is no answer, so one program
        // that happens to reach that number does not confirm it.
        let looping = "1. Joe gave 2 lollipops. 2. Joe gave 2 lollipops. 3. Joe gave 2";
        assert!(words(looping).confirmed_by(&progs(&["answer = 2"])).kept());
        let j = words(looping)
            .cut_off()
            .confirmed_by(&progs(&["answer = 2"]));
        assert!(!j.kept());
        assert!(
            j.why
                .starts_with("local solutions disagree (in words: none, cut off at the length limit; as arithmetic: 2)"),
            "{}",
            j.why
        );
        assert!(!words(looping).cut_off().settled_by(&progs(&["answer = 2"])));
        // Two programs still settle it between them.
        assert!(words(looping)
            .cut_off()
            .confirmed_by(&progs(&["answer = 33 - 2", "left = 31\nanswer = left"]))
            .kept());
        // Two programs agreeing below zero where the question allows no such result: not kept,
        // and the words' number ends the local-only answer.
        let right = "33 - 2 = 31 lollipops left.\nAnswer: 31";
        let below = progs(&["answer = 2 - 33 + 6", "answer = 6 - 33 + 2"]);
        let j = words(right).confirmed_by(&below);
        assert!(!j.kept(), "{}", j.why);
        assert!(
            j.why.starts_with("local solutions disagree (in words: 31; as arithmetic: -25, below zero, -25, below zero)"),
            "{}",
            j.why
        );
        assert_eq!(j.local_only, None);
        // Nor do the words and a program agreeing below zero.
        let j = words("2 - 33 = -31\nAnswer: -31").confirmed_by(&progs(&["answer = 2 - 33"]));
        assert!(!j.kept(), "{}", j.why);
        // Where the question speaks of numbers below zero, they are answers like any other.
        for q in [
            "It is -5 degrees at dawn and 3 degrees colder at night. What is the temperature?",
            "The balance is 20 dollars; he spends 45. Give the balance as a negative number.",
        ] {
            let j = judge(&Shape::Worked, q, "Answer: -8", &[tok("Answer: -8", 0.9)]);
            assert!(j.confirmed_by(&progs(&["answer = -5 - 3"])).kept(), "{q}");
        }
        assert!(!admits_below_zero(
            "Tickets cost 3-4 dollars; 10 people go, non-stop."
        ));
        assert!(admits_below_zero("The score went from 4 to \u{2212}2."));
    }

    #[test]
    fn only_a_worked_problem_standing_alone_is_asked_as_a_program() {
        let one = vec![ChatMessage::user(
            "Tom has 3 apples and buys 4. How many now?",
        )];
        for nth in 0..2 {
            let r = program_request(&Shape::Worked, &one, nth).expect("a program request");
            assert!(r.plain && r.stop == vec!["```".to_string()]);
            let text = &r.messages[0].content;
            assert!(
                text.starts_with("Question: Tom has 3 apples") && text.ends_with("```python\n")
            );
        }
        assert_ne!(
            program_request(&Shape::Worked, &one, 0),
            program_request(&Shape::Worked, &one, 1)
        );
        assert!(program_request(&Shape::Worked, &one, 2).is_none());
        assert!(program_request(&Shape::Fact, &one, 0).is_none());
        let mut two = one.clone();
        two.insert(0, ChatMessage::new(crate::cloud::Role::Assistant, "Hello"));
        assert!(program_request(&Shape::Worked, &two, 0).is_none());
    }

    #[test]
    fn a_short_question_is_asked_for_a_short_answer() {
        let r = request(
            &Shape::Fact,
            vec![ChatMessage::new(
                crate::cloud::Role::User,
                "Where is Betelgeuse?",
            )],
            512,
        );
        assert_eq!(r.max_tokens, FACT_MAX_TOKENS);
        assert_eq!(r.messages.len(), 2);
        assert_eq!(r.messages[0].content, FACT_SYSTEM);
        assert_eq!(threshold(&Shape::Fact), Some(0.80));
    }

    #[test]
    fn a_question_that_stands_alone_is_read_as_plain_text() {
        let letters = vec!['A', 'B', 'C', 'D'];
        let shape = Shape::Choice {
            letters: letters.clone(),
        };
        let q = "Which is a prime?\nA. 4\nB. 5\nC. 6\nD. 8";
        let r = request(&shape, vec![ChatMessage::user(q)], 256);
        assert!(r.plain);
        assert_eq!(r.messages.len(), 1);
        assert_eq!(
            r.messages[0].content,
            format!("{CHOICE_HEADER}\n\n{q}\nAnswer:")
        );
        assert_eq!(r.choices, [" A", " B", " C", " D"]);
        assert_eq!(r.max_tokens, 1);
        // A prompt that already ends "Answer:" is not asked twice.
        let r = request(
            &shape,
            vec![ChatMessage::user(format!("{q}\nAnswer:"))],
            256,
        );
        assert_eq!(r.messages[0].content.matches("Answer:").count(), 1);
        // After a conversation the question only reads right as a chat turn.
        let history = vec![
            ChatMessage::user("Let's revise number theory."),
            ChatMessage::new(crate::cloud::Role::Assistant, "Sure."),
            ChatMessage::user(q),
        ];
        let r = request(&shape, history, 256);
        assert!(!r.plain);
        assert_eq!(r.messages[0].content, CHOICE_SYSTEM);
        assert_eq!(r.choices, ["A", "B", "C", "D"]);
        // The letter read after "Answer:" comes with its space.
        let first = TokenLogprob {
            text: " B".into(),
            p: 0.6,
            top: vec![(" B".into(), 0.6), (" D".into(), 0.3), (" A".into(), 0.1)],
        };
        let j = judge(&shape, q, " B", &[first]);
        assert_eq!(j.text, "B. 5");
        assert!((j.confidence - 0.6).abs() < 1e-6, "{}", j.confidence);
    }

    #[test]
    fn shapes_are_recognised() {
        assert_eq!(
            shape("Which is a prime?\nA. 4\nB. 5\nC. 6\nD. 8\nAnswer:"),
            Some(Shape::Choice {
                letters: vec!['A', 'B', 'C', 'D']
            })
        );
        assert_eq!(
            shape("Janet has 16 eggs and eats 3. She sells the rest at $2 each. How much does she make?"),
            Some(Shape::Worked)
        );
        assert_eq!(shape("What is the capital of Italy?"), Some(Shape::Fact));
        assert_eq!(shape("Write a poem about the sea."), None);
        assert_eq!(
            shape("Implement a python function that sorts 3 lists?"),
            None
        );
        assert_eq!(shape("What is the latest news about 2026 elections?"), None);
    }

    #[test]
    fn a_choice_is_read_from_the_letters_probabilities() {
        let first = TokenLogprob {
            text: "B".into(),
            p: 0.7,
            top: vec![("B".into(), 0.7), (" A".into(), 0.2), ("The".into(), 0.1)],
        };
        let j = judge(
            &Shape::Choice {
                letters: vec!['A', 'B', 'C'],
            },
            "Q\nA. one\nB. two\nC. three",
            "B",
            &[first],
        );
        assert_eq!(j.text, "B. two");
        let expected = 0.7 / 0.9;
        assert!((j.confidence - expected).abs() < 1e-6, "{}", j.confidence);
        // No letter at all: not trusted.
        let j = judge(
            &Shape::Choice {
                letters: vec!['A', 'B'],
            },
            "Q\nA. x\nB. y",
            "The",
            &[tok("The", 0.9)],
        );
        assert_eq!(j.confidence, 0.0);
    }

    #[test]
    fn a_worked_answer_is_judged_on_its_final_number() {
        let toks = [
            tok("16", 0.2),
            tok(" - 3 = 13", 0.3),
            tok("\n", 0.9),
            tok("Answer", 0.99),
            tok(":", 0.99),
            tok(" 2", 0.5),
            tok("6", 0.8),
        ];
        let j = judge(&Shape::Worked, "", "16 - 3 = 13\nAnswer: 26", &toks);
        assert!(
            (j.confidence - (0.5f64 * 0.8).sqrt()).abs() < 1e-6,
            "{}",
            j.confidence
        );
        // No answer line: the last number written.
        let j = judge(
            &Shape::Worked,
            "",
            "So she has 26",
            &[tok("So she has", 0.9), tok(" 2", 0.5), tok("6", 0.5)],
        );
        assert!((j.confidence - 0.5).abs() < 1e-6, "{}", j.confidence);
        // No number at all: no confidence.
        let j = judge(
            &Shape::Worked,
            "",
            "I do not know",
            &[tok("I do not know", 0.9)],
        );
        assert_eq!(j.confidence, 0.0);
    }
}
