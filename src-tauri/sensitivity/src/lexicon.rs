//! Sensitive *content* that no identifier pattern captures: health conditions and medications,
//! personal finances, legal matters. Terms alone are common in public questions ("what is
//! diabetes?"), so a term only counts when personal context surrounds it. The terms and context
//! words are data (`data/lexicons.toml`); this file keeps the matching.

use std::sync::OnceLock;

use crate::bytescan;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Anchored, Input, MatchKind, StartKind};

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
    /// Terms that count only in material the user brought to a personal request (an attached
    /// note, an exported record), never in a prompt on their own: "my final exam" is an
    /// everyday question to the cloud; a professor's notes on "the midterm grades" are not.
    #[serde(default)]
    material_only: bool,
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
/// phrase is within 48 bytes before or 24 after the term, or before the list the term is an
/// item of (`list_lead_in`).
fn personal_context(text: &str, start: usize, end: usize) -> bool {
    let ctx = &data().context;
    let (before, after) = context_around(text, start, end, 48);
    let after = &after[..floor_boundary(&after, 24)];
    let personal_word = |s: &str| {
        s.split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .any(|w| {
                let w = w.strip_suffix("'s").unwrap_or(w);
                ctx.personal.iter().any(|p| p == w)
            })
    };
    personal_word(&before)
        || personal_word(after)
        || named_possessive_before(text, start)
        || ctx
            .result_cues
            .iter()
            .any(|c| before.contains(c.as_str()) || after.contains(c.as_str()))
        || list_lead_in(text, start).is_some_and(|lead| {
            let (before, _) = context_around(text, lead, lead, 48);
            personal_word(&before)
        })
}

/// Where the clause that introduces a list ends, when the term at `start` is one of its later
/// items ("if I'm interested in: skydiving, hiking, shoplifting"): every item is a word or
/// three, and the term has the list's context however long the list runs.
fn list_lead_in(text: &str, start: usize) -> Option<usize> {
    let mut at = start;
    let mut items = 0;
    loop {
        let head = text[..at].trim_end();
        // The separator before this item, looked for only as far back as an item or a lead-in
        // needs (none: the item starts the text, or is longer than any item): each term's walk
        // stays short however long the text.
        let from = floor_boundary(head, head.len().saturating_sub(64));
        let found = head[from..]
            .rfind([',', ':', ';', '.', '!', '?', '\n'])
            .map(|i| from + i);
        let item = &head[found.map_or(from, |i| i + 1)..];
        let short = item.split_whitespace().count() <= 3 && item.len() <= 32;
        if at != start && !short {
            // This item is the lead-in itself ("I enjoy things such as skydiving").
            return (items > 0).then_some(head.len());
        }
        let i = found?;
        match head.as_bytes()[i] {
            // A list longer than this is data (a CSV row, a JSON array), not an enumeration in
            // a sentence; the bound also keeps the walk linear over such rows.
            b',' if items < 32 => {
                items += 1;
                at = i;
            }
            // "…interested in: skydiving, hiking": the lead-in ends at the colon.
            b':' => return (items > 0).then_some(i),
            _ => return None,
        }
    }
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
    /// Anchored: run only at the word starts the prefix sets let through.
    matcher: AhoCorasick,
    /// Label, tier and `material_only` per pattern index.
    kinds: Vec<(&'static str, Tier, bool)>,
    /// The first four bytes of every term (`key`), hashed into a 2^16-bit set: most words of
    /// prose start no term and are passed over after one lookup (the automaton over every
    /// byte cost twice as much).
    starts: WordSet,
}

/// A 2^16-bit set over hashed keys: a prefilter, so a collision costs only a lookup.
struct WordSet(Vec<u64>);

impl WordSet {
    fn new() -> Self {
        WordSet(vec![0; 1024])
    }

    #[inline(always)]
    fn slot(key: u32) -> (usize, u64) {
        let h = key.wrapping_mul(0x9E37_79B1) >> 16;
        ((h >> 6) as usize, 1u64 << (h & 63))
    }

    fn insert(&mut self, key: u32) {
        let (i, bit) = Self::slot(key);
        self.0[i] |= bit;
    }

    #[inline(always)]
    fn has(&self, key: u32) -> bool {
        let (i, bit) = Self::slot(key);
        self.0[i] & bit != 0
    }
}

/// The first four bytes of `b` (at least three), ASCII letters folded to lower case; a fourth
/// byte that is missing or no word byte reads as a blank, so a three-letter term and the word
/// it is written as share one key ("ibs" in "ibs," and "ibs"). Other bytes map somewhere
/// consistent: candidates are verified by the automaton.
#[inline(always)]
fn key(b: &[u8]) -> u32 {
    let k = u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16;
    let fourth = b
        .get(3)
        .copied()
        .filter(|&c| c.is_ascii_alphanumeric() || c == b'_')
        .unwrap_or(b' ');
    (k | u32::from(fourth) << 24) | 0x2020_2020
}

impl LexiconRecognizer {
    pub fn new() -> Self {
        let mut patterns: Vec<&str> = Vec::new();
        let mut kinds = Vec::new();
        for lexicon in &data().lexicon {
            for term in &lexicon.terms {
                patterns.push(term);
                kinds.push((lexicon.label.as_str(), lexicon.tier, lexicon.material_only));
            }
        }
        // A full DFA (the lexicon is small), anchored at the word starts that pass the sets.
        let matcher = AhoCorasickBuilder::new()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .start_kind(StartKind::Anchored)
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .expect("static lexicon");
        let mut starts = WordSet::new();
        for p in &patterns {
            // Every term is ASCII, starts with a letter and has at least three bytes (the
            // unit test holds the data to that).
            starts.insert(key(p.as_bytes()));
        }
        Self {
            matcher,
            kinds,
            starts,
        }
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
        let b = text.as_bytes();
        // At each word start (an ASCII letter after a byte that is no letter, digit or '_'; a
        // byte of a multi-byte character counts as a boundary here and `whole_word` judges it
        // exactly below). Matches do not overlap, as with a plain search.
        bytescan::for_each(
            b,
            |m, carry| m.letters & !(m.word << 1 | carry),
            |m| m.word,
            |i| {
                if i + 3 > b.len() || !self.starts.has(key(&b[i..])) {
                    return i;
                }
                // The longest term here that is a whole word: "ibs" must not fire inside
                // "ribs", and "salary increase_x" still holds "salary".
                let mut end = b.len();
                loop {
                    let input = Input::new(text).range(i..end).anchored(Anchored::Yes);
                    let Some(m) = self.matcher.find(input) else {
                        return i;
                    };
                    if whole_word(text, i, m.end()) {
                        self.push(text, m.pattern().as_usize(), i, m.end(), out);
                        return m.end();
                    }
                    end = m.end() - 1;
                }
            },
        );
    }
}

impl LexiconRecognizer {
    fn push(&self, text: &str, pattern: usize, s: usize, e: usize, out: &mut Vec<Candidate>) {
        let (label, tier, material_only) = self.kinds[pattern];
        let personal = !material_only && personal_context(text, s, e);
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
        assert_eq!(d.lexicon.len(), 7);
        for l in &d.lexicon {
            let reg = crate::labels::get(&l.label).expect("lexicon label registered");
            assert_eq!(reg.kind, crate::labels::LabelKind::Content, "{}", l.label);
            assert_eq!(reg.tier, l.tier, "{}", l.label);
            assert!(l.terms.len() >= 20, "{}: terms lost", l.label);
            for t in &l.terms {
                assert_eq!(t.trim(), t, "{}: {t:?} has spaces around it", l.label);
                // The word-start prefilter in `find` relies on these.
                assert!(
                    t.is_ascii()
                        && t.len() >= 3
                        && t.starts_with(|c: char| c.is_ascii_alphabetic()),
                    "{}: {t:?} must be ASCII, start with a letter and have 3 bytes or more",
                    l.label
                );
            }
        }
        assert!(!d.context.personal.is_empty() && !d.context.amount_markers.is_empty());
    }

    /// The word-start scan finds exactly what a plain search of every term finds: each whole-
    /// word occurrence, in any case, leftmost first and longest at a start, none overlapping.
    #[test]
    fn the_word_start_scan_finds_every_whole_word_term() {
        let terms: Vec<&str> = data()
            .lexicon
            .iter()
            .flat_map(|l| l.terms.iter().map(String::as_str))
            .collect();
        // Terms in every casing, glued into words ("ribs", "hivx", "_ibs"), after digits,
        // multi-byte letters and punctuation, across 64-byte chunk edges.
        let glue = [
            " ", "  ", "x", "_", "9", "é", "’", ", ", ".\n", "-", "(", "\"", "Ü",
        ];
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        let mut text = String::new();
        while text.len() < 60_000 {
            text.push_str(glue[next(glue.len())]);
            let t = terms[next(terms.len())];
            match next(3) {
                0 => text.push_str(t),
                1 => text.push_str(&t.to_uppercase()),
                _ => text.push_str(&t[..t.len() - 1]),
            }
        }
        let mut want: Vec<(usize, usize)> = Vec::new();
        let lower = text.to_ascii_lowercase();
        let mut i = 0;
        while i < lower.len() {
            let best = terms
                .iter()
                .filter(|t| lower[i..].starts_with(&t.to_ascii_lowercase()))
                .map(|t| i + t.len())
                .filter(|&e| whole_word(&text, i, e))
                .max();
            match best {
                Some(e) => {
                    want.push((i, e));
                    i = e;
                }
                None => i += lower[i..].chars().next().map_or(1, char::len_utf8),
            }
        }
        let mut got = Vec::new();
        LexiconRecognizer::new().find(&text, &mut got);
        let got: Vec<(usize, usize)> = got.iter().map(|c| (c.start, c.end)).collect();
        assert!(want.len() > 500, "the text holds terms: {}", want.len());
        let diff: Vec<String> = want
            .iter()
            .filter(|w| !got.contains(w))
            .map(|&(s, e)| {
                format!(
                    "missed {s} {:?} {:?}",
                    &text[crate::types::floor_boundary(&text, s.saturating_sub(12))
                        ..crate::types::floor_boundary(&text, e + 40)],
                    got.iter()
                        .filter(|g| g.1 > s.saturating_sub(30) && g.0 < e + 30)
                        .map(|g| &text[g.0..g.1])
                        .collect::<Vec<_>>()
                )
            })
            .chain(got.iter().filter(|g| !want.contains(g)).map(|&(s, e)| {
                format!(
                    "extra {:?}",
                    &text[s.saturating_sub(12)..(e + 6).min(text.len())]
                )
            }))
            .collect();
        assert!(diff.is_empty(), "{diff:#?}");
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
        // Care for the mind and for addiction; a contract and an offence one commits.
        assert_eq!(
            labels("She has kept her sobriety since the counseling started")
                .into_iter()
                .map(|(l, _)| l)
                .collect::<Vec<_>>(),
            ["HEALTH_CONDITION", "HEALTH_CONDITION"]
        );
        assert_eq!(
            labels("a change in her contract status with the press")[0].0,
            "LEGAL_MATTER"
        );
        assert_eq!(labels("I was caught shoplifting once")[0].0, "LEGAL_MATTER");
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
        // Beliefs, orientation and the private life a confidant hears of (GDPR art. 9 and
        // beyond), a relapse, harm suffered: private beside a person, a topic without one.
        assert_eq!(
            labels("Tom has been open about his personal beliefs and his faith")[0].0,
            "PRIVATE_LIFE"
        );
        assert_eq!(
            labels("I had a relapse last night and I feel terrible")[0].0,
            "HEALTH_CONDITION"
        );
        assert_eq!(
            labels("I experienced a harassment in the neighborhood")[0].0,
            "LEGAL_MATTER"
        );
        assert_eq!(
            labels("She recently went through a breakup with her partner")[0].0,
            "PRIVATE_LIFE"
        );
        assert!(labels("What does sexual orientation mean in law?").is_empty());
        // An item of a list has the context of the clause that introduces it.
        assert_eq!(
            labels("Suggest 20 hobbies, if I'm interested in such things as: skydiving, hiking, shoplifting, sports")[0].1,
            "shoplifting"
        );
        assert_eq!(
            labels("I enjoy things such as skydiving, hiking, rock climbing, shoplifting")[0].1,
            "shoplifting"
        );
        assert!(labels("Common offences are: speeding, fraud, vandalism, shoplifting").is_empty());
        assert!(labels("The leaflet names the main risks: smoking, obesity, diabetes").is_empty());
        // A long flat row is data: past 32 items no lead-in counts (and each term's walk back
        // is bounded, so a row of 30,000 terms is read in linear time).
        let row = format!("I noted: {}diabetes", "flu, ".repeat(40));
        assert!(labels(&row).is_empty());
        let row = format!("Noted: {}", "diabetes, ".repeat(30_000));
        assert!(labels(&row).is_empty());
        let prose = format!("Noted {}", "diabetes and ".repeat(30_000));
        assert!(labels(&prose).is_empty());
        // "came out" alone is an outing, not a disclosure: only "came out as" counts.
        assert!(labels("last week, when Abby came out to see her").is_empty());
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
