//! Name shapes the names model misses or cuts short, by rule: a surname after a title ("Mrs.
//! Labrie", "Dr. Wells") and a middle initial between two names ("Clara R. Dickson", found by
//! the model as "Clara" and "Dickson", or not at all).

use std::sync::OnceLock;

use regex::Regex;

use super::types::{Candidate, Tier};

/// Titles before a surname (data; matched case-sensitively, with or without a period).
const TITLES: &[&str] = &["Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof", "Sir", "Dame"];

fn patterns() -> &'static (Regex, Regex) {
    static P: OnceLock<(Regex, Regex)> = OnceLock::new();
    P.get_or_init(|| {
        let name = r"\p{Lu}[\p{Ll}\p{M}'’\-]+";
        let titled = Regex::new(&format!(
            r"\b(?:{})\.?[ \t]+(?P<n>{name}(?:[ \t]+{name})?)\b",
            TITLES.join("|")
        ));
        let initial = Regex::new(&format!(r"\b{name}[ \t]+\p{{Lu}}\.?[ \t]+{name}\b"));
        match (titled, initial) {
            (Ok(a), Ok(b)) => (a, b),
            _ => unreachable!("name patterns compile"),
        }
    })
}

/// Adds or widens PERSON spans for the shapes above (byte offsets). A titled surname is a name
/// on its own; a "First M. Last" run only where the model or the rules already saw a name in
/// it (a capitalised run with an initial is also "Section A. Smith"-like text). Never replaces
/// a span of another label.
pub(crate) fn complete_names(text: &str, mut kept: Vec<Candidate>) -> Vec<Candidate> {
    let (titled, initial) = patterns();
    let mut add: Vec<(usize, usize)> = Vec::new();
    for c in titled.captures_iter(text) {
        if let Some(m) = c.name("n") {
            add.push((m.start(), m.end()));
        }
    }
    // Only around names already seen (the pattern has no literal to skip text by).
    for k in kept.iter().filter(|k| k.label == "PERSON") {
        let lo = floor(text, k.start.saturating_sub(48));
        let hi = ceil(text, (k.end + 48).min(text.len()));
        for m in initial.find_iter(&text[lo..hi]) {
            let (s, e) = (lo + m.start(), lo + m.end());
            if k.start < e && k.end > s && !add.contains(&(s, e)) {
                add.push((s, e));
            }
        }
    }
    if add.is_empty() {
        return kept;
    }
    for (s, e) in add {
        let overlapping = |k: &Candidate| k.start < e && k.end > s;
        // Another label's span wins (an address, an ID); a PERSON span inside is widened.
        if kept
            .iter()
            .any(|k| overlapping(k) && (k.label != "PERSON" || k.start < s || k.end > e))
        {
            continue;
        }
        let score = kept
            .iter()
            .filter(|k| overlapping(k))
            .map(|k| k.score)
            .fold(0.8f32, f32::max);
        kept.retain(|k| !overlapping(k));
        kept.push(Candidate {
            start: s,
            end: e,
            label: "PERSON",
            tier: Tier::QuasiIdentifier,
            score,
            detector: "rules",
        });
    }
    kept.sort_by_key(|k| k.start);
    kept
}

fn floor(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(text: &str, s: &str) -> Candidate {
        let start = text.find(s).unwrap();
        Candidate {
            start,
            end: start + s.len(),
            label: "PERSON",
            tier: Tier::QuasiIdentifier,
            score: 0.9,
            detector: "ner",
        }
    }

    fn names(text: &str, kept: Vec<Candidate>) -> Vec<&str> {
        complete_names(text, kept)
            .into_iter()
            .map(|c| &text[c.start..c.end])
            .collect()
    }

    #[test]
    fn titles_and_middle_initials_complete_names() {
        let t = "For my take on Mrs. Labrie, see Dr Wells.";
        assert_eq!(names(t, vec![]), ["Labrie", "Wells"]);
        let t = "Ask Clara R. Dickson today.";
        assert_eq!(
            names(t, vec![person(t, "Clara"), person(t, "Dickson")]),
            ["Clara R. Dickson"]
        );
        // Without a name seen in it, a capitalised run with an initial is left alone.
        assert!(names("See Section A. Smith", vec![]).is_empty());
    }
}
