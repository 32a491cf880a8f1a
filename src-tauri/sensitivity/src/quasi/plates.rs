//! Postcodes with context and vehicle registration plates (UK, TR, IN, NG, DE).

use super::*;

impl QuasiRecognizer {
    // ----- postcodes --------------------------------------------------------------------------

    pub(super) fn zip_with_context(
        &self,
        text: &str,
        p: usize,
        q: usize,
        out: &mut Vec<Candidate>,
    ) -> Option<usize> {
        let wb = floor_boundary(text, p.saturating_sub(28));
        let caps = self.re_zip_ctx.captures(&text[wb..p])?;
        let b = text.as_bytes();
        let n = q - p;
        let mut end = q;
        if n == 5
            && q + 5 <= b.len()
            && b[q] == b'-'
            && b[q + 1..q + 5].iter().all(u8::is_ascii_digit)
            && !alnum_at(text, q + 5)
        {
            end = q + 5;
        } else if n == 3
            && q + 3 <= b.len()
            && b[q] == b' '
            && b[q + 1..q + 3].iter().all(u8::is_ascii_digit)
            && !alnum_at(text, q + 3)
        {
            end = q + 3; // Swedish/Czech "340 12"
        }
        if alnum_at(text, end) || !(3..=6).contains(&n) {
            return None;
        }
        if caps.get(2).is_some() {
            let v = parse_u32(&text[p..q]);
            if n == 5 && (1001..=99998).contains(&v) {
                push(out, p, q, "DE_PLZ", Tier::QuasiIdentifier, 0.85);
                return Some(q);
            }
            return None;
        }
        push(
            out,
            p,
            end,
            "ZIP_CODE",
            Tier::QuasiIdentifier,
            if n == 5 { 0.85 } else { 0.75 },
        );
        Some(end)
    }

    pub(super) fn plate_context(&self, text: &str, s: usize, e: usize) -> bool {
        let before = lower_before(text, s, 40);
        let after = text[e..ceil_boundary(text, e + 16)].to_lowercase();
        let lex = lexicon();
        contains_any(&before, lex.plate_words_before) || contains_any(&after, lex.plate_words_after)
    }

    /// Tokens that begin with letters before the digit run: plates, UK postcodes.
    pub(super) fn letter_led(
        &self,
        text: &str,
        p: usize,
        out: &mut Vec<Candidate>,
    ) -> Option<usize> {
        let b = text.as_bytes();
        // Candidate starts: the letters glued to the run, or letters before one separator.
        let mut starts: [usize; 3] = [usize::MAX; 3];
        let mut k = p;
        while k > 0 && p - k < 3 && b[k - 1].is_ascii_alphabetic() {
            k -= 1;
        }
        if k < p {
            starts[0] = k;
        } else if p >= 2 && matches!(b[p - 1], b' ' | b'-') {
            let mut j = p - 1;
            while j > 0 && (p - 1) - j < 3 && b[j - 1].is_ascii_alphabetic() {
                j -= 1;
            }
            if j < p - 1 {
                starts[0] = j;
            }
            // German "B-AB-1234": one more letter group before a hyphen.
            if j >= 2 && j < p - 1 && b[j - 1] == b'-' {
                let mut h = j - 1;
                while h > 0
                    && (j - 1) - h < 3
                    && (b[h - 1].is_ascii_uppercase() || b[h - 1] >= 0xC3)
                {
                    h -= 1;
                }
                if h < j - 1 && text.is_char_boundary(h) {
                    starts[1] = h;
                }
            }
        }
        let mut best: Option<(usize, usize, &'static str, f32)> = None;
        for &s in starts.iter().filter(|&&s| s != usize::MAX) {
            if alnum_before(text, s) || !text.is_char_boundary(s) {
                continue;
            }
            if let Some((e, label, score)) = self.token_plate(text, s) {
                if e > p && best.is_none_or(|bst| score > bst.3) {
                    best = Some((s, e, label, score));
                }
            }
        }
        let (s, e, label, score) = best?;
        push(out, s, e, label, Tier::QuasiIdentifier, score);
        Some(e)
    }

    /// Best plate or UK postcode that starts exactly at `s` and ends on a token boundary.
    pub(super) fn token_plate(&self, text: &str, s: usize) -> Option<(usize, &'static str, f32)> {
        let rest = &text[s..];
        let mut best: Option<(usize, &'static str, f32)> = None;
        let mut consider = |e: usize, label: &'static str, score: f32| {
            if !alnum_at(text, s + e) && best.is_none_or(|b| score > b.2) {
                best = Some((s + e, label, score));
            }
        };
        let ctx = |e: usize| self.plate_context(text, s, s + e);
        if let Some(m) = self.re_uk_postcode.captures(rest) {
            let e = m.get(0).map_or(0, |x| x.end());
            let spaced = !m[1].is_empty();
            let before = lower_before(text, s, 40);
            let c = contains_any(&before, lexicon().uk_postcode_words);
            let score = match (spaced, c) {
                (true, true) => 0.85,
                (true, false) => 0.7,
                (false, true) => 0.7,
                (false, false) => 0.5,
            };
            consider(e, "UK_POSTCODE", score);
        }
        if let Some(m) = self.re_uk_plate.captures(rest) {
            let age = parse_u32(&m[2]);
            let e = m.get(0).map_or(0, |x| x.end());
            if (2..=25).contains(&age) || (51..=75).contains(&age) {
                let upper = m[1].bytes().all(|c| c.is_ascii_uppercase())
                    && m[4].bytes().all(|c| c.is_ascii_uppercase());
                let mixed = !upper && m[0].bytes().any(|c| c.is_ascii_uppercase());
                if !mixed {
                    let score = if ctx(e) {
                        0.85
                    } else if upper {
                        if m[3].is_empty() {
                            0.55
                        } else {
                            0.65
                        }
                    } else {
                        0.5
                    };
                    consider(e, "UK_VEHICLE_REGISTRATION", score);
                }
            }
        }
        if let Some(m) = self.re_uk_plate_prefix.find(rest) {
            let e = m.end();
            consider(e, "UK_VEHICLE_REGISTRATION", if ctx(e) { 0.8 } else { 0.5 });
        }
        if let Some(c) = self.re_in_plate.captures(rest) {
            let e = c.get(0).map_or(0, |x| x.end());
            if lexicon().in_plate_states.contains(&&c[1]) {
                consider(
                    e,
                    "IN_VEHICLE_REGISTRATION",
                    if ctx(e) { 0.85 } else { 0.6 },
                );
            }
        }
        if let Some(c) = self.re_ng_plate.captures(rest) {
            let e = c.get(0).map_or(0, |x| x.end());
            let score = if ctx(e) {
                0.85
            } else if &c[1] == "-" {
                0.55
            } else if &c[1] == " " {
                0.5
            } else {
                0.4
            };
            consider(e, "NG_VEHICLE_REGISTRATION", score);
        }
        if let Some(m) = self.re_de_plate.find(rest) {
            let e = m.end();
            consider(e, "DE_KFZ", if ctx(e) { 0.85 } else { 0.55 });
        }
        best
    }

    /// Turkish plates start with the province number ("34 ABC 1234").
    pub(super) fn plate_digit_led(
        &self,
        text: &str,
        p: usize,
        out: &mut Vec<Candidate>,
    ) -> Option<usize> {
        if char_before(text, p).is_some_and(|c| matches!(c, '-' | '.' | '/' | ':' | ',')) {
            return None;
        }
        let c = self.re_tr_plate.captures(&text[p..])?;
        let e = p + c.get(0)?.end();
        if alnum_at(text, e) {
            return None;
        }
        let letters = &c[3];
        let upper = letters.bytes().all(|x| x.is_ascii_uppercase());
        if !upper && letters.bytes().any(|x| x.is_ascii_uppercase()) {
            return None;
        }
        let (sp1, sp2) = (!c[2].is_empty(), !c[4].is_empty());
        if sp1 != sp2 {
            return None;
        }
        // A lower-case everyday word between two numbers is prose ("between 10 and 20",
        // "5 to 10"), not a plate, unless a plate word says otherwise.
        if !upper
            && super::super::words::CommonWords::system().is_some_and(|d| d.knows(letters))
            && !self.plate_context(text, p, e)
        {
            return None;
        }
        let ll = letters.to_ascii_uppercase();
        if matches!(
            ll.as_str(),
            "AM" | "PM"
                | "A"
                | "I"
                | "AD"
                | "BC"
                | "AN"
                | "AT"
                | "IN"
                | "ON"
                | "OF"
                | "TO"
                | "OR"
                | "BY"
                | "KG"
                | "KM"
                | "CM"
                | "MM"
                | "MB"
                | "GB"
                | "KB"
                | "TB"
                | "MG"
                | "ML"
        ) && !self.plate_context(text, p, e)
        {
            return None;
        }
        let score = if self.plate_context(text, p, e) {
            0.85
        } else if !upper {
            0.5
        } else if !sp1 {
            0.6
        } else if letters.len() >= 2 {
            0.55
        } else {
            0.5
        };
        push(out, p, e, "TR_LICENSE_PLATE", Tier::QuasiIdentifier, score);
        Some(e)
    }
}
