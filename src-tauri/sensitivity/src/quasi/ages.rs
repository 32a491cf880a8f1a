//! Ages: "34 years old", "aged 34", "I'm 34" (a number with an age word before or after it).

use super::*;

impl QuasiRecognizer {
    // ----- ages -------------------------------------------------------------------------------

    pub(super) fn age(
        &self,
        text: &str,
        p: usize,
        q: usize,
        out: &mut Vec<Candidate>,
    ) -> Option<usize> {
        if q - p > 3 {
            return None;
        }
        let v = parse_u32(&text[p..q]);
        if v > 125 {
            return None;
        }
        let b = text.as_bytes();
        let after_shape = b
            .get(q)
            .is_some_and(|c| matches!(c, b' ' | b'-' | b'y' | b'Y' | b'\t'));
        if after_shape && self.re_age_after.is_match(&text[p..]) {
            push(out, p, q, "AGE", Tier::QuasiIdentifier, 0.85);
            return Some(q);
        }
        if p < 3 || !matches!(b[p - 1], b' ' | b'\t') {
            return None;
        }
        let wb = floor_boundary(text, p.saturating_sub(24));
        if !self.re_age_before.is_match(&text[wb..p]) {
            return None;
        }
        let caps = self.re_age_before.captures(&text[wb..p])?;
        let m0 = caps.get(0)?;
        if alnum_before(text, wb + m0.start()) {
            return None;
        }
        // Only a number that ends the clause is an age ("I'm 5 minutes away" is not).
        let end_ok = q >= b.len()
            || matches!(
                b[q],
                b'.' | b',' | b'!' | b'?' | b';' | b')' | b'\n' | b'\r'
            )
            || text[q..].starts_with(" and ")
            || text[q..].starts_with(" now")
            || text[q..].starts_with(" next")
            || text[q..].starts_with(" this")
            || text[q..].starts_with(" today")
            || text[q..].starts_with(" in ")
            || text[q..].starts_with(" on ");
        if q < b.len() && b[q] == b'.' && q + 1 < b.len() && b[q + 1].is_ascii_digit() {
            return None;
        }
        if !end_ok {
            return None;
        }
        let score = if caps.get(1).is_some() {
            0.85
        } else if caps.get(2).is_some() {
            0.7
        } else if caps.get(3).is_some() {
            0.65
        } else {
            0.55
        };
        if v == 0 {
            return None;
        }
        push(out, p, q, "AGE", Tier::QuasiIdentifier, score);
        Some(q)
    }
}
