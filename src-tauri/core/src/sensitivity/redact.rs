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
    // Organisation and place names, links and codes identify people only next to a personal
    // identifier: mask them too in such texts.
    let personal = report
        .spans
        .iter()
        .any(|s| !super::is_context_only(&s.label) && !is_content(&s.label));
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
                    add_entities(&piece, &mut local);
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

/// Adds entity spans of `piece` that do not overlap `spans` (code point offsets), keeping order.
fn add_entities(piece: &str, spans: &mut Vec<Span>) {
    let found = super::entities::find(piece);
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
    for e in found {
        let (s, t) = (cp_of(e.start), cp_of(e.end));
        let i = existing.partition_point(|&(start, _)| start < t);
        if t <= s || (i > 0 && existing[i - 1].1 > s) {
            continue;
        }
        spans.push(Span {
            start: s,
            end: t,
            label: e.label.to_string(),
            tier: super::Tier::QuasiIdentifier,
            score: 0.5,
            detector: "entities".into(),
        });
    }
    spans.sort_by_key(|x| x.start);
}
