//! The word pass: weekdays (dates without digits) and nationality/religion/politics (NRP) words.

use super::*;

impl QuasiRecognizer {
    // -----------------------------------------------------------------------------------------
    // Word pass: weekdays and NRP words (one Aho-Corasick scan).
    // -----------------------------------------------------------------------------------------

    /// Weekdays and NRP words. Capitalized words are found by a byte scan and looked up in a
    /// hash set (an automaton over every byte cost more than the rest of this recognizer);
    /// lower-case ones are checked only after "am", "are", "'m" ("I am cambodian").
    pub(super) fn word_pass(&self, text: &str, dates: &[(usize, usize)], out: &mut Vec<Candidate>) {
        let b = text.as_bytes();
        let mut hits: Vec<(usize, usize, WordKind)> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match find_in_range(b, i, b'A', b'Z') {
                Some(at) => i = at,
                None => break,
            }
            let s = i;
            let mut e = s + 1;
            while e < b.len() && b[e].is_ascii_alphabetic() {
                e += 1;
            }
            i = e;
            if (4..=15).contains(&(e - s))
                && self.maybe_word(&b[s..e])
                && !alnum_before(text, s)
                && !alnum_at(text, e)
            {
                if let Some(k) = self.lookup_word(&b[s..e]) {
                    hits.push((s, e, k));
                }
                continue;
            }
            // "I am cambodian", "We are proud saudis": lower-case NRP words after a self-description.
            let cue = match &b[s..e] {
                b"I" if b[e..].starts_with(b" am ") => Some(e + 4),
                b"I" if b[e..].starts_with(b"'m ") || b[e..].starts_with("’m ".as_bytes()) => {
                    Some(e + if b[e] == b'\'' { 3 } else { 5 })
                }
                b"We" | b"They" if b[e..].starts_with(b" are ") => Some(e + 5),
                _ => None,
            };
            if let Some(m) = cue {
                let mut s = m;
                for _ in 0..2 {
                    let mut e = s;
                    while e < b.len() && b[e].is_ascii_lowercase() {
                        e += 1;
                    }
                    if e == s || alnum_at(text, e) {
                        break;
                    }
                    if let Some(WordKind::Nrp) = self.lookup_word(&b[s..e]) {
                        hits.push((s, e, WordKind::Nrp));
                        break;
                    }
                    s = skip_blanks(b, e);
                }
            }
        }
        hits.sort_unstable_by_key(|h| h.0);
        hits.dedup_by_key(|h| h.0);
        let mut di = 0;
        for (s, e, kind) in hits {
            let raw = &text[s..e];
            let title = raw.chars().next().is_some_and(|c| c.is_uppercase());
            match kind {
                WordKind::Weekday => {
                    while di < dates.len() && dates[di].1 <= s {
                        di += 1;
                    }
                    if di < dates.len() && dates[di].0 <= s {
                        continue;
                    }
                    if title {
                        push(out, s, e, "DATE_TIME", Tier::QuasiIdentifier, 0.5);
                    }
                }
                WordKind::Nrp => {
                    let before = |w: &str| {
                        s >= w.len() && b[s - w.len()..s].eq_ignore_ascii_case(w.as_bytes())
                    };
                    let personal = [
                        "i am ",
                        "i'm ",
                        "we are ",
                        "he is ",
                        "she is ",
                        "they are ",
                        "proud ",
                        "as a ",
                        "as an ",
                        "i was ",
                        "he was ",
                        "she was ",
                        "being ",
                        "fellow ",
                        "am a ",
                        "am an ",
                        "is a ",
                        "is an ",
                    ]
                    .iter()
                    .any(|w| before(w));
                    let nx = skip_blanks(b, e);
                    let after = |w: &str| {
                        b.len() >= nx + w.len()
                            && b[nx..nx + w.len()].eq_ignore_ascii_case(w.as_bytes())
                    };
                    // Languages, country names and document types are not a person's group.
                    let language = [
                        "in ",
                        "speak ",
                        "speaks ",
                        "speaking ",
                        "learn ",
                        "learning ",
                        "into ",
                        "study ",
                        "studying ",
                        "studied ",
                        "teach ",
                        "teaching ",
                        "taught ",
                        "(",
                    ]
                    .iter()
                    .any(|w| before(w))
                        || [
                            "language",
                            "translation",
                            "version",
                            "subtitle",
                            "word",
                            "text",
                            "keyboard",
                            "dictionary",
                            "course",
                            "class",
                            "lesson",
                            "republic",
                            "islands",
                            "passport",
                            "id ",
                            "id.",
                            "identity",
                            "national",
                            "tax",
                            "phone",
                            "social",
                            "driver",
                            "licen",
                            "number",
                            "card",
                            "visa",
                            "resident",
                            "registration",
                        ]
                        .iter()
                        .any(|w| after(w))
                        || b.get(e) == Some(&b')');
                    let all_upper = raw.len() > 3 && raw.chars().all(|c| !c.is_lowercase());
                    let mut score: f32 = if title && !all_upper { 0.5 } else { 0.3 };
                    if personal {
                        score += 0.3;
                    }
                    if language {
                        score = score.min(0.3);
                    }
                    push(out, s, e, "NRP", Tier::QuasiIdentifier, score);
                }
            }
        }
    }
}
