//! Street addresses: numbered streets forward and backward from a house number, units, the
//! town/postcode tail, PO boxes and military addresses.

use super::*;

impl QuasiRecognizer {
    // ----- addresses --------------------------------------------------------------------------

    pub(super) fn military(
        &self,
        text: &str,
        p: usize,
        q: usize,
        out: &mut Vec<Candidate>,
    ) -> Option<usize> {
        // "PSC 0413, Box 8144\nAPO AA 42323", "Unit 7349 Box 6067\nDPO AE 99081"
        let wb = floor_boundary(text, p.saturating_sub(6));
        let pre = &text[wb..p];
        let lp = pre.to_ascii_lowercase();
        if let Some(k) = ["psc ", "unit ", "cmr "].iter().find_map(|w| lp.rfind(w)) {
            let s = wb + k;
            if !alnum_before(text, s) {
                if let Some(m) = self.re_military.find(&text[s..]) {
                    let e = s + m.end();
                    push(out, s, e, "STREET_ADDRESS", Tier::Contact, 0.9);
                    return Some(e);
                }
            }
        }
        // "USNS Møller\nFPO AA 85844": triggered at the final five digits.
        if q - p == 5 && !alnum_at(text, q) {
            let wb = floor_boundary(text, p.saturating_sub(64));
            if let Some(m) = self.re_ship.find(&text[wb..p]) {
                let s = wb + m.start();
                if !alnum_before(text, s) {
                    push(out, s, q, "STREET_ADDRESS", Tier::Contact, 0.9);
                    return Some(q);
                }
            }
        }
        None
    }

    /// Reads up to `max` words on one line starting at `i` (blanks between them only).
    pub(super) fn words_from(&self, text: &str, mut i: usize, max: usize) -> Vec<Word> {
        let b = text.as_bytes();
        let mut words = Vec::new();
        while words.len() < max {
            let Some(e) = word_at(text, i) else { break };
            let mut end = e;
            let lower = text[i..e].to_lowercase();
            if lexicon().unit_words.contains(&lower.as_str()) {
                break;
            }
            // An abbreviation's dot belongs to the word ("St.", "ul.", "u.").
            if e < b.len()
                && b[e] == b'.'
                && lower.chars().count() <= 4
                && (self.post_en.contains(lower.as_str())
                    || self.post_lc.contains(lower.as_str())
                    || self.pre.contains(lower.as_str()))
            {
                end = e + 1;
            }
            words.push(Word {
                start: i,
                end,
                lower,
            });
            let n = skip_blanks(b, end);
            if n == end || n >= b.len() || !char_at(text, n).is_some_and(|c| c.is_alphabetic()) {
                break;
            }
            i = n;
        }
        words
    }

    pub(super) fn has_suffix(&self, w: &str) -> bool {
        let n = w.chars().count();
        lexicon()
            .street_endings
            .iter()
            .any(|s| w.ends_with(s) && n >= s.chars().count() + 2)
    }

    /// A street-type word after the name: English ones title-case ("Road"; "road" only in an
    /// all-lower-case address), the Nordic/Hungarian/... ones lower-case ("gate", "utca").
    pub(super) fn is_post(&self, text: &str, w: &Word, all_lower: bool) -> bool {
        let raw = &text[w.start..w.end];
        let key = w.lower.as_str();
        (is_title(raw) && self.post_en.contains(key))
            || (!has_upper(raw)
                && (self.post_lc.contains(key) || (all_lower && self.post_en.contains(key))))
    }

    /// Classifies `words` as a street name; `None` when they cannot be one.
    pub(super) fn classify(&self, text: &str, words: &[Word]) -> Option<StreetKind> {
        if words.is_empty() {
            return None;
        }
        let first_pre = self.pre.contains(words[0].lower.as_str());
        let last = &words[words.len() - 1];
        let all_lower = words.iter().all(|w| !has_upper(&text[w.start..w.end]));
        let post = words.len() >= 2 && self.is_post(text, last, all_lower);
        let suffix = self.has_suffix(&last.lower) && is_title(&text[last.start..last.end]);
        let mut lower_name = false;
        for (k, w) in words.iter().enumerate() {
            let raw = &text[w.start..w.end];
            let key = w.lower.as_str();
            if self.stop.contains(key) && !(k > 0 && self.particles.contains(key)) {
                return None;
            }
            // A joining word cannot open a name ("der Hauptstraße 5" is "Hauptstraße 5").
            if k == 0 && self.particles.contains(key) && !is_title(raw) {
                return None;
            }
            let type_word = (k == 0 && first_pre) || (k + 1 == words.len() && post);
            if !is_title(raw) && !self.particles.contains(key) && !type_word {
                lower_name = true;
            }
        }
        // A street name needs a name besides its type word.
        if words.len() == 1 && first_pre {
            return None;
        }
        if first_pre && words.len() >= 2 {
            return Some(if lower_name {
                StreetKind::LowerTyped
            } else {
                StreetKind::Typed
            });
        }
        if lower_name {
            return if post || suffix {
                Some(StreetKind::LowerTyped)
            } else {
                None
            };
        }
        if post || suffix {
            return Some(StreetKind::Typed);
        }
        if self.not_head.contains(words[0].lower.as_str()) {
            return None;
        }
        Some(StreetKind::Untyped)
    }

    pub(super) fn address(&self, text: &str, p: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        let b = text.as_bytes();
        let (fwd_ok, bwd_ok) = self.address_shape(text, p);
        if !fwd_ok && !bwd_ok {
            return None;
        }
        let fwd = if fwd_ok {
            self.address_forward(text, p)
        } else {
            None
        };
        let bwd = if bwd_ok {
            self.address_backward(text, p)
        } else {
            None
        };
        let core = match (fwd, bwd) {
            // "Λεωφόρος Συγγρού 119 Nino Point": a typed name before the number and more after.
            (Some(f), Some(bk)) if bk.2 == StreetKind::Typed && bk.0 < f.0 => {
                Some((bk.0, f.1.max(bk.1), StreetKind::Typed, f.3))
            }
            (Some(f), _) => Some(f),
            (None, bk) => bk,
        };
        let (mut s, mut e, kind, lead) = core?;
        let mut score: f32 = match kind {
            StreetKind::Typed => {
                if lead {
                    0.7
                } else {
                    0.65
                }
            }
            StreetKind::LowerTyped => 0.45,
            StreetKind::Untyped => {
                if lead {
                    0.45
                } else {
                    0.35
                }
            }
        };
        // "the corner of X and Y"
        let ends_ci =
            |w: &[u8]| s >= w.len() && text.as_bytes()[s - w.len()..s].eq_ignore_ascii_case(w);
        if ends_ci(b"corner of ") {
            let cut = if ends_ci(b"the corner of ") { 14 } else { 10 };
            s -= cut;
            let after_and = if text[e..].starts_with(" and ") {
                Some(e + 5)
            } else {
                None
            };
            if let Some(a) = after_and {
                let ws = self.words_from(text, a, 4);
                let n = ws
                    .iter()
                    .take_while(|w| {
                        is_title(&text[w.start..w.end]) || self.particles.contains(w.lower.as_str())
                    })
                    .count();
                if n > 0 {
                    e = ws[n - 1].end;
                }
            }
            score += 0.25;
        }
        // A unit written before the street ("Apt. 675 62314 Mellemvej 32").
        let pre = &text[floor_boundary(text, s.saturating_sub(16))..s];
        if let Some(m) = self.re_unit.find_iter(pre).last() {
            let ms = s - pre.len() + m.start();
            let tail_blank = text[ms + m.len()..s]
                .bytes()
                .all(|c| c == b' ' || c == b'\t');
            if tail_blank && !text[ms..ms + m.len()].contains('\n') {
                let trimmed = ms + (m.len() - m.as_str().trim_start().len());
                s = trimmed;
                score += 0.15;
            }
        }
        // "on Hoge Wei 32 St.", "lives on Grössgstötten 50 street": a street word right after.
        let after = &text[e..ceil_boundary(text, e + 8)];
        if after.starts_with(" St.") || after.starts_with(" street") || after.starts_with(" Street")
        {
            score += 0.15;
        }
        // Units after the street.
        let mut units = 0;
        while units < 3 {
            let Some(m) = self.re_unit.find(&text[e..]) else {
                break;
            };
            e += m.end();
            units += 1;
        }
        if units > 0 {
            score += 0.15;
        }
        // City, region, postcode, country that follow directly.
        let core_lower = !has_upper(&text[s..e]);
        let (te, postcode, segs) = self.tail(text, e, core_lower);
        if te > e {
            e = te;
            score += if postcode {
                0.2
            } else if segs >= 2 {
                0.15
            } else {
                0.1
            };
        }
        let ctx_before = lower_before(text, s, 48);
        if contains_any(&ctx_before, lexicon().address_context) {
            score += 0.15;
        }
        let _ = b;
        // Weak findings are not emitted, so they cannot shadow a date or age in the same place.
        if score < 0.5 {
            return None;
        }
        push(out, s, e, "STREET_ADDRESS", Tier::Contact, score.min(0.95));
        Some(e)
    }

    /// Cheap look at the words around a number before any real parsing: can it start an
    /// address (next word capitalized, a number, or a street-type word) or end one (previous word
    /// capitalized, an abbreviation, or a street-type word)?
    pub(super) fn address_shape(&self, text: &str, p: usize) -> (bool, bool) {
        let b = text.as_bytes();
        let typed = |w: &str| -> bool {
            if w.len() > 12 {
                return false;
            }
            let mut buf = [0u8; 12];
            let lw: &str = if w.is_ascii() {
                for (d, s) in buf.iter_mut().zip(w.bytes()) {
                    *d = s.to_ascii_lowercase();
                }
                std::str::from_utf8(&buf[..w.len()]).unwrap_or("")
            } else {
                return self.pre.contains(w.to_lowercase().as_str())
                    || self.post_lc.contains(w.to_lowercase().as_str());
            };
            self.pre.contains(lw) || self.post_lc.contains(lw)
        };
        let fwd = house_num_at(text, p).is_some_and(|e| {
            let n = skip_blanks(b, e);
            n > e
                && match char_at(text, n) {
                    Some(c) if c.is_ascii_digit() || c.is_uppercase() => true,
                    Some(c) if c.is_alphabetic() => {
                        word_at(text, n).is_some_and(|we| typed(&text[n..we]))
                    }
                    _ => false,
                }
        });
        let bwd = p >= 2 && matches!(b[p - 1], b' ' | b'\t') && {
            let mut j = p - 1;
            if b[j - 1] == b'.' {
                j -= 1;
            }
            let mut st = j;
            while let Some(c) = char_before(text, st) {
                if c.is_alphabetic() || matches!(c, '-' | '\'' | '’') || is_mark(c) {
                    st -= c.len_utf8();
                } else {
                    break;
                }
            }
            st < j && (is_title(&text[st..j]) || typed(&text[st..j]) || j < p - 1)
        };
        (fwd, bwd)
    }

    /// Number first: "[12] 34 Main Street", "12 Via Roma 5", "29 Rue de Tanger", "20789 Allika 46".
    pub(super) fn address_forward(
        &self,
        text: &str,
        p: usize,
    ) -> Option<(usize, usize, StreetKind, bool)> {
        let b = text.as_bytes();
        let mut pos = p;
        let mut nums = 0;
        while nums < 2 {
            let Some(e) = house_num_at(text, pos) else {
                break;
            };
            let n = skip_blanks(b, e);
            if n == e {
                break;
            }
            nums += 1;
            pos = n;
            if !b.get(pos).is_some_and(u8::is_ascii_digit) {
                break;
            }
        }
        if nums == 0 || !char_at(text, pos).is_some_and(|c| c.is_alphabetic()) {
            return None;
        }
        let words = self.words_from(text, pos, 6);
        if words.is_empty() {
            return None;
        }
        let wend = words[words.len() - 1].end;
        // Name then its own number: "Via Franscini 71" after a leading number.
        let n = skip_blanks(b, wend);
        if n > wend {
            if let Some(ne) = house_num_at(text, n) {
                if let Some(k) = self.classify(text, &words) {
                    return Some((p, ne, k, true));
                }
            }
        }
        // Otherwise the longest prefix of words that ends in a street type ("12 Main St").
        for k in (1..=words.len()).rev() {
            let ws = &words[..k];
            let last = &ws[k - 1];
            let all_lower = ws.iter().all(|w| !has_upper(&text[w.start..w.end]));
            let typed_end =
                k >= 2 && self.is_post(text, last, all_lower) || self.has_suffix(&last.lower);
            let pre_led = self.pre.contains(words[0].lower.as_str()) && k >= 2;
            if typed_end || (pre_led && k == words.len()) {
                if let Some(kind) = self.classify(text, ws) {
                    if kind != StreetKind::Untyped {
                        return Some((p, ws[k - 1].end, kind, nums == 2));
                    }
                }
            }
        }
        // Prefix-typed names followed by more words: cut at the first stop word.
        if self.pre.contains(words[0].lower.as_str()) {
            let k = words
                .iter()
                .position(|w| self.stop.contains(w.lower.as_str()))
                .unwrap_or(words.len())
                .min(4);
            if k >= 2 {
                if let Some(kind) = self.classify(text, &words[..k]) {
                    return Some((p, words[k - 1].end, kind, nums == 2));
                }
            }
        }
        None
    }

    /// Name first: "Parijsstraat 8", "Via dei Fiorentini 17", "P.O. Box 242", "Allika 46".
    pub(super) fn address_backward(
        &self,
        text: &str,
        p: usize,
    ) -> Option<(usize, usize, StreetKind, bool)> {
        let b = text.as_bytes();
        let ne = house_num_at(text, p)?;
        if p == 0 || !matches!(b[p - 1], b' ' | b'\t') {
            return None;
        }
        let wb = floor_boundary(text, p.saturating_sub(20));
        if let Some(m) = self.re_pobox_end.find(&text[wb..p]) {
            let s = wb + m.start();
            if !alnum_before(text, s) {
                return Some((s, ne, StreetKind::Typed, false));
            }
        }
        // Collect up to five words before the number on the same line.
        let mut starts: Vec<usize> = Vec::new();
        let mut i = p;
        while starts.len() < 5 {
            let mut j = i;
            while j > 0 && matches!(b[j - 1], b' ' | b'\t') {
                j -= 1;
            }
            if j == i || j == 0 {
                break;
            }
            // Walk back over one word (letters, joiners, an abbreviation dot).
            let mut k = j;
            if b[k - 1] == b'.' {
                k -= 1;
            }
            let mut st = k;
            while let Some(c) = char_before(text, st) {
                if c.is_alphabetic() || matches!(c, '-' | '\'' | '’') || is_mark(c) {
                    st -= c.len_utf8();
                } else {
                    break;
                }
            }
            if st == k || !char_at(text, st).is_some_and(|c| c.is_alphabetic()) {
                break;
            }
            // "B. 400 N" on its own line is an option or list label, not a street called B.
            let mut ls = st;
            while ls > 0 && matches!(b[ls - 1], b' ' | b'\t') {
                ls -= 1;
            }
            if k - st == 1 && k < j && (ls == 0 || b[ls - 1] == b'\n') {
                break;
            }
            starts.push(st);
            i = st;
        }
        if starts.is_empty() {
            return None;
        }
        starts.reverse();
        // Prefer the span that starts at a prefix street type; else the longest valid tail.
        let words: Vec<Word> = self
            .words_from(text, starts[0], 6)
            .into_iter()
            .filter(|w| w.end <= p)
            .collect();
        if words.is_empty() {
            return None;
        }
        for k in 0..words.len() {
            if self.pre.contains(words[k].lower.as_str()) && words.len() - k >= 2 {
                if let Some(kind) = self.classify(text, &words[k..]) {
                    return Some((words[k].start, ne, kind, false));
                }
            }
        }
        for k in 0..words.len() {
            if let Some(kind) = self.classify(text, &words[k..]) {
                if kind == StreetKind::LowerTyped {
                    continue;
                }
                return Some((words[k].start, ne, kind, false));
            }
        }
        None
    }

    /// City / region / postcode / country segments after an address; returns (end, had
    /// postcode, segments).
    pub(super) fn tail(&self, text: &str, start: usize, lower_ok: bool) -> (usize, bool, usize) {
        let b = text.as_bytes();
        let mut pos = start;
        let mut segs = 0;
        let mut postcode = false;
        let mut first_plain = false;
        let mut after_postcode_newline = false;
        while segs < 6 && pos - start < 200 {
            let Some(sep) = self.re_sep.find(&text[pos..]) else {
                break;
            };
            let sep_s = sep.as_str();
            let plain = !sep_s.contains(',') && !sep_s.contains('\n');
            if postcode && sep_s.contains('\n') {
                after_postcode_newline = true;
            }
            if after_postcode_newline {
                break;
            }
            let a = pos + sep.end();
            if a >= b.len() {
                break;
            }
            let rest = &text[a..];
            let seg_end = if let Some(m) = self.re_postcode.find(rest) {
                let e = a + m.end();
                let bad = alnum_at(text, e)
                    || (e + 1 < b.len()
                        && matches!(b[e], b' ' | b'-' | b'.')
                        && b[e + 1].is_ascii_digit());
                if bad {
                    None
                } else {
                    Some((e, true))
                }
            } else {
                None
            };
            let seg_end = seg_end.or_else(|| {
                if segs == 0 {
                    return None;
                }
                let m = self.re_region.find(rest)?;
                let e = a + m.end();
                if alnum_at(text, e) {
                    return None;
                }
                // A region code ends the line or precedes the postcode.
                let nxt = b.get(e).copied();
                let then_pc = self
                    .re_sep
                    .find(&text[e..])
                    .is_some_and(|s| self.re_postcode.is_match(&text[e + s.end()..]));
                if nxt.is_none()
                    || matches!(
                        nxt,
                        Some(b'\n' | b'\r' | b',' | b'.' | b';' | b'!' | b'?' | b')')
                    )
                    || then_pc
                {
                    Some((e, false))
                } else {
                    None
                }
            });
            let seg_end = seg_end.or_else(|| {
                let m = self.re_place.find(rest).or_else(|| {
                    if lower_ok && !plain {
                        self.re_place_lc.find(rest)
                    } else {
                        None
                    }
                })?;
                let e = a + m.end();
                let first: String = m
                    .as_str()
                    .chars()
                    .take_while(|c| c.is_alphabetic() || *c == '-')
                    .collect::<String>()
                    .to_lowercase();
                // A lone street word ("Sludevej 13 St.") is not a city; "St Georges" is.
                let lone_type = self.post_en.contains(first.as_str())
                    && first.len() + 1 >= m.as_str().trim_end_matches('.').len();
                if self.not_place.contains(first.as_str())
                    || lone_type
                    || b.get(e) == Some(&b':')
                    || alnum_at(text, e)
                {
                    return None;
                }
                if b.get(e) == Some(&b'@')
                    || (b.get(e) == Some(&b'.')
                        && b.get(e + 1).is_some_and(|c| c.is_ascii_alphabetic()))
                {
                    return None;
                }
                Some((e, false))
            });
            let Some((e, pc)) = seg_end else { break };
            if segs == 0 {
                first_plain = plain;
            }
            segs += 1;
            postcode |= pc;
            pos = e;
        }
        if segs == 0 {
            return (start, false, 0);
        }
        // A tail joined by a blank only must end its clause, or it is the next sentence.
        if first_plain && !postcode {
            let nxt = b.get(pos).copied();
            if !(nxt.is_none()
                || matches!(
                    nxt,
                    Some(b'\n' | b'\r' | b'.' | b',' | b';' | b'!' | b'?' | b')')
                ))
            {
                return (start, false, 0);
            }
        }
        (pos, postcode, segs)
    }
}
