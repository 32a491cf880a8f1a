//! Fragments and redaction: splits scanned text into sentence-sized fragments, rates each, and
//! renders the text exactly as a cloud provider would receive it (maskable spans replaced by
//! placeholders, `local_only` fragments withheld).

use super::pseudonym::Pseudonymizer;
use super::{is_content, Provenance, ScanReport, Scanner, Span, Verdict};
use serde::Serialize;

/// A sentence-sized piece of a scanned text, in code point offsets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fragment {
    pub start: usize,
    pub end: usize,
    pub verdict: Verdict,
    /// Indices into the report's `spans` that lie in this fragment.
    pub spans: Vec<usize>,
}

/// Splits at sentence boundaries (`sentences`: UAX #29, fast for ASCII), never inside a span: a span that crosses a
/// boundary (a multi-line address) joins the fragments it touches.
pub fn fragments(text: &str, report: &ScanReport, provenance: Provenance) -> Vec<Fragment> {
    let mut bounds: Vec<(usize, usize)> = Vec::new(); // code points
    let mut cp = 0usize;
    for (s, e) in super::sentences::sentence_bounds(text) {
        let piece = &text[s..e];
        // Code points; the byte length is the count for ASCII (almost every sentence).
        let n = if piece.is_ascii() {
            piece.len()
        } else {
            piece.chars().count()
        };
        bounds.push((cp, cp + n));
        cp += n;
    }
    // Merge fragments that a span crosses. Spans are sorted by start and do not overlap, so
    // one forward pointer keeps this linear.
    let spans = &report.spans;
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(bounds.len());
    let mut k = 0usize;
    for (s, e) in bounds {
        let crossing = match merged.last() {
            Some(&(_, last_end)) => {
                while k < spans.len() && spans[k].end <= last_end {
                    k += 1;
                }
                k < spans.len() && spans[k].start < last_end
            }
            None => false,
        };
        match merged.last_mut() {
            Some(last) if crossing => last.1 = e,
            _ => merged.push((s, e)),
        }
    }
    let masked = report.mask_flags();
    let mut k = 0usize;
    merged
        .into_iter()
        .map(|(start, end)| {
            while k < spans.len() && spans[k].end <= start {
                k += 1;
            }
            let mut idx = Vec::new();
            let mut j = k;
            while j < spans.len() && spans[j].start < end {
                idx.push(j);
                j += 1;
            }
            let verdict = if provenance == Provenance::SensitiveSource
                || idx.iter().any(|&i| is_content(&spans[i].label))
            {
                Verdict::LocalOnly
            } else if idx.iter().any(|&i| masked[i]) {
                Verdict::Maskable
            } else {
                Verdict::Public
            };
            Fragment {
                start,
                end,
                verdict,
                spans: idx,
            }
        })
        .collect()
}

/// What leaves the device for one text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Redaction {
    /// The text as the cloud sees it.
    pub text: String,
    /// Number of spans replaced by placeholders.
    pub masked: usize,
    /// Number of fragments withheld because their meaning is private.
    pub withheld: usize,
    pub fragments: Vec<Fragment>,
}

/// Marker put where a `local_only` fragment was withheld, so the cloud model knows something
/// was there without learning what.
pub const WITHHELD: &str = "[WITHHELD]";

/// Scans `text` and renders what a cloud provider would receive.
pub fn redact(
    scanner: &Scanner,
    pseudonymizer: &mut Pseudonymizer,
    text: &str,
    provenance: Provenance,
) -> Redaction {
    let report = scanner.scan_with(text, provenance);
    redact_report(pseudonymizer, text, &report, provenance)
}

pub fn redact_report(
    pseudonymizer: &mut Pseudonymizer,
    text: &str,
    report: &ScanReport,
    provenance: Provenance,
) -> Redaction {
    let frags = fragments(text, report, provenance);
    let mask = report.mask_flags();
    let personal = masks_entities(text, report);
    let known = if personal {
        super::entities::names_in(text)
    } else {
        Vec::new()
    };
    let mut out = String::with_capacity(text.len());
    let (mut masked, mut withheld) = (0, 0);
    let mut chars = text.chars();
    let mut prev_withheld = false;
    for f in &frags {
        let piece: String = chars.by_ref().take(f.end - f.start).collect();
        match f.verdict {
            Verdict::LocalOnly => {
                if !prev_withheld {
                    out.push_str(WITHHELD);
                    // Keep the fragment's trailing whitespace so the layout survives.
                    let trail: String = piece
                        .chars()
                        .rev()
                        .take_while(|c| c.is_whitespace())
                        .collect();
                    out.extend(trail.chars().rev());
                    if trail.is_empty() {
                        out.push(' ');
                    }
                }
                withheld += 1;
                prev_withheld = true;
            }
            _ => {
                prev_withheld = false;
                let mut local: Vec<Span> = f
                    .spans
                    .iter()
                    .filter(|&&i| mask[i])
                    .map(|&i| &report.spans[i])
                    .filter(|s| s.start >= f.start && s.end <= f.end)
                    .map(|s| Span {
                        start: s.start - f.start,
                        end: s.end - f.start,
                        ..s.clone()
                    })
                    .collect();
                if personal {
                    add_entities(&piece, &known, &mut local);
                    add_unknown_words(&piece, &mut local);
                }
                masked += local.len();
                let m = pseudonymizer.mask(&piece, &local.iter().collect::<Vec<_>>());
                out.push_str(&m.text);
            }
        }
    }
    Redaction {
        text: out,
        masked,
        withheld,
        fragments: frags,
    }
}

/// Organisation and place names, links and codes identify people next to a personal
/// identifier, and in the user's own material: redaction masks them in such texts. A
/// question about the world ("Where is Plovdiv?") keeps them.
pub fn masks_entities(text: &str, report: &ScanReport) -> bool {
    report
        .spans
        .iter()
        .any(|s| !super::is_context_only(&s.label) && !is_content(&s.label))
        || reads_personal(text)
}

/// Whether a text reads as the user's own material rather than a question about the world:
/// first-person words ("my", "we", "I'm"), a letter's greeting or closing, or pasted material
/// (80 words or more: a CV, a press release, an email thread). Measured on the development
/// sets: 66% of PUPA's private requests read so, 5% of GSM8K and 23% of MMLU questions
/// (long reading passages mostly) — those lose their names to placeholders, the price of not
/// sending the user's names, places and organisations (bench/RESULTS.md, "Delegation").
pub fn reads_personal(text: &str) -> bool {
    const FIRST_PERSON: &[&str] = &[
        "I", "I'm", "I've", "I'd", "I'll", "me", "my", "My", "mine", "myself", "we", "We", "our",
        "Our", "ours", "us", "we're", "We're", "we've", "We've",
    ];
    const LETTER: &[&str] = &["Dear", "Regards", "Sincerely"];
    let mut words = 0usize;
    for w in text.split_whitespace() {
        words += 1;
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’');
        let w = w.trim_end_matches(['\'', '’']);
        let straight = w.replace('’', "'");
        if FIRST_PERSON.contains(&straight.as_str()) || LETTER.contains(&w) {
            return true;
        }
    }
    words >= 80
}

/// Code point ranges of the entities `masks_entities` texts lose to placeholders.
pub fn entity_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    add_found(text, super::entities::find_named(text), &mut spans);
    spans.into_iter().map(|s| (s.start, s.end)).collect()
}

/// Code point ranges of the words of `text` no everyday-word list knows (names the capital
/// letter rules cannot see: "linkedin", "belarus", other scripts, codes), everyday acronyms
/// ("IBAN", "USA") excepted; `None` when the system has no word list.
pub fn unknown_word_spans(text: &str) -> Option<Vec<(usize, usize)>> {
    let words = super::CommonWords::system()?;
    let spans = words.unknown_spans(text);
    if spans.is_empty() {
        return Some(spans);
    }
    let chars: Vec<char> = text.chars().collect();
    Some(
        spans
            .into_iter()
            .filter(|&(a, b)| {
                let w: String = chars[a..b].iter().collect();
                !super::entities::is_plain_word(&w)
            })
            .collect(),
    )
}

/// Adds the words of `piece` no everyday-word list knows as entity spans where no span lies.
fn add_unknown_words(piece: &str, spans: &mut Vec<Span>) {
    let mut taken: Vec<(usize, usize)> = spans.iter().map(|x| (x.start, x.end)).collect();
    taken.sort_unstable();
    let before = spans.len();
    for (a, b) in unknown_word_spans(piece).unwrap_or_default() {
        let i = taken.partition_point(|&(_, end)| end <= a);
        if taken.get(i).is_some_and(|&(s, _)| s < b) {
            continue;
        }
        spans.push(Span {
            start: a,
            end: b,
            label: "ENTITY".to_string(),
            tier: super::Tier::QuasiIdentifier,
            score: 0.5,
            detector: "words".into(),
        });
    }
    if spans.len() > before {
        spans.sort_by_key(|x| x.start);
    }
}

/// Adds entity spans of `piece` that do not overlap `spans` (code point offsets), keeping order.
fn add_entities(piece: &str, known: &[String], spans: &mut Vec<Span>) {
    add_found(piece, super::entities::find(piece, known), spans);
}

/// Adds `found` (entities of `piece`) as spans where no detector span lies.
fn add_found(piece: &str, found: Vec<super::entities::Entity>, spans: &mut Vec<Span>) {
    if found.is_empty() {
        return;
    }
    // Byte → code point for the entity bounds, in one pass.
    let mut cps = Vec::with_capacity(found.len() * 2);
    let mut marks: Vec<usize> = found.iter().flat_map(|e| [e.start, e.end]).collect();
    marks.sort_unstable();
    let mut it = piece
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(piece.len()))
        .enumerate()
        .peekable();
    for m in &marks {
        while let Some(&(cp, b)) = it.peek() {
            if b >= *m {
                cps.push((*m, cp));
                break;
            }
            it.next();
        }
    }
    // `cps` is sorted by byte mark; the existing spans are sorted and disjoint.
    let cp_of = |b: usize| {
        cps.binary_search_by_key(&b, |&(m, _)| m)
            .map_or(0, |i| cps[i].1)
    };
    let existing: Vec<(usize, usize)> = spans.iter().map(|x| (x.start, x.end)).collect();
    let chars: Vec<char> = piece.chars().collect();
    for e in found {
        let (s, t) = (cp_of(e.start), cp_of(e.end));
        // The parts of the entity no detector span covers ("Longport Patrolman" before a
        // detected "Alec Morelli"), each trimmed of spaces and punctuation.
        let mut free = Vec::new();
        let mut at = s;
        let first = existing.partition_point(|&(_, end)| end <= s);
        for &(a, b) in existing[first..].iter().take_while(|&&(a, _)| a < t) {
            free.push((at, a.max(at)));
            at = at.max(b);
        }
        free.push((at, t));
        for (mut a, mut b) in free {
            while a < b && !chars[a].is_alphanumeric() {
                a += 1;
            }
            while b > a && !chars[b - 1].is_alphanumeric() {
                b -= 1;
            }
            if b < a + 2 {
                continue;
            }
            let word: String = chars[a..b].iter().collect();
            if super::entities::is_plain_word(&word) {
                continue;
            }
            spans.push(Span {
                start: a,
                end: b,
                label: e.label.to_string(),
                tier: super::Tier::QuasiIdentifier,
                score: 0.5,
                detector: "entities".into(),
            });
        }
    }
    spans.sort_by_key(|x| x.start);
}
