//! Dates: ISO, numeric, day-month-name and month-name-first forms, bare years in context.

use super::*;

impl QuasiRecognizer {
    // ----- dates ------------------------------------------------------------------------------

    pub(super) fn date(
        &self,
        text: &str,
        p: usize,
        q: usize,
        out: &mut Vec<Candidate>,
    ) -> Option<usize> {
        let rest = &text[p..];
        let dob = |s: usize| -> bool {
            let before = lower_before(text, s, 40);
            contains_any(&before, lexicon().birth_words)
        };
        let finish = |s: usize, e: usize, score: f32, out: &mut Vec<Candidate>| -> usize {
            let mut end = e;
            if let Some(m) = self.re_time_after.find(&text[end..]) {
                if !alnum_at(text, end + m.end()) {
                    end += m.end();
                }
            }
            let score = if dob(s) { score.max(0.95) } else { score };
            push(out, s, end, "DATE_TIME", Tier::QuasiIdentifier, score);
            end
        };
        let ok_end = |e: usize| -> bool {
            // Not followed by more digits or by a version-like continuation ("1.2.3.4").
            let nb = text.as_bytes();
            if alnum_at(text, e) {
                return false;
            }
            if e + 1 < nb.len()
                && matches!(nb[e], b'.' | b'/' | b'-' | b':')
                && nb[e + 1].is_ascii_digit()
            {
                return false;
            }
            true
        };
        let prevc = char_before(text, p);
        if prevc.is_some_and(|c| matches!(c, '.' | '/' | ':' | '-' | '+' | '#' | '_')) {
            return None;
        }
        let b = text.as_bytes();
        let nxt = b.get(q).copied().unwrap_or(b'\n');
        // Month name before the number ("March 3rd, 1987", "Monday, June 5", "May 2020").
        let wb = floor_boundary(text, p.saturating_sub(32));
        let month_shape = p >= 4
            && matches!(b[p - 1], b' ' | b'\t' | b',')
            && (b[p - 2].is_ascii_alphabetic() || b[p - 2] == b'.' || b[p - 2] == b',');
        if let Some(m) = if month_shape {
            self.re_month_before.find(&text[wb..p])
        } else {
            None
        } {
            let s = wb + m.start();
            if !alnum_before(text, s) {
                if let Some(c) = self.re_month_first.captures(rest) {
                    let n = c.get(1).map_or("", |x| x.as_str());
                    let e = p + c.get(0).map_or(0, |x| x.end());
                    let v = parse_u32(n);
                    if ok_end(e) {
                        if n.len() <= 2 && (1..=31).contains(&v) {
                            let score = if c.get(2).is_some() { 0.85 } else { 0.65 };
                            return Some(finish(s, e, score, out));
                        }
                        if n.len() == 4 && (1000..=2199).contains(&v) {
                            return Some(finish(s, e, 0.65, out));
                        }
                    }
                }
            }
        }
        if !matches!(nxt, b'-' | b'/' | b'.' | b' ' | b's' | b'n' | b'r' | b't') {
            return None;
        }
        if let Some(m) = self.re_iso.find(rest) {
            let e = p + m.end();
            if ok_end(e) {
                return Some(finish(p, e, 0.85, out));
            }
        }
        if let Some(c) = self.re_numdate.captures(rest) {
            let (a, s1, bb, s2, y) = (&c[1], &c[2], &c[3], &c[4], &c[5]);
            let e = p + c.get(0).map_or(0, |x| x.end());
            if s1 == s2 && ok_end(e) {
                let (va, vb, vy) = (parse_u32(a), parse_u32(bb), parse_u32(y));
                let valid = if a.len() == 4 {
                    // 2021/05/21 style: year first.
                    y.len() <= 2
                        && (1..=12).contains(&vb)
                        && (1..=31).contains(&vy)
                        && (1800..=2199).contains(&va)
                } else {
                    let dm = (1..=31).contains(&va) && (1..=12).contains(&vb);
                    let md = (1..=12).contains(&va) && (1..=31).contains(&vb);
                    (dm || md) && (y.len() == 2 || (1800..=2199).contains(&vy))
                };
                if valid {
                    let score = if y.len() == 4 || a.len() == 4 {
                        0.8
                    } else if s1 == "/" {
                        0.65
                    } else {
                        0.5
                    };
                    return Some(finish(p, e, score, out));
                }
            }
        }
        let name_shape = q - p <= 2 && rest.len() > 4 && {
            let k = skip_blanks(
                b,
                q + if matches!(nxt, b's' | b'n' | b'r' | b't') {
                    2
                } else {
                    0
                },
            );
            k > q
                && b.get(k)
                    .is_some_and(|c| c.is_ascii_uppercase() || *c == b'o')
        };
        if let Some(c) = if name_shape {
            self.re_day_month_name.captures(rest)
        } else {
            None
        } {
            let d = parse_u32(&c[1]);
            let e = p + c.get(0).map_or(0, |x| x.end());
            if (1..=31).contains(&d) && !alnum_at(text, e) {
                let score = if c.get(2).is_some() { 0.85 } else { 0.65 };
                return Some(finish(p, e, score, out));
            }
        }
        if let Some(c) = self.re_monthyear_num.captures(rest) {
            let e = p + c.get(0).map_or(0, |x| x.end());
            let (m, y) = (parse_u32(&c[1]), parse_u32(&c[2]));
            if (1..=12).contains(&m) && (1900..=2099).contains(&y) && ok_end(e) {
                return Some(finish(p, e, 0.55, out));
            }
        }
        if let Some(c) = self.re_daymonth_num.captures(rest) {
            let e = p + c.get(0).map_or(0, |x| x.end());
            let (a, bb) = (parse_u32(&c[1]), parse_u32(&c[2]));
            let valid = ((1..=12).contains(&a) && (1..=31).contains(&bb))
                || ((1..=31).contains(&a) && (1..=12).contains(&bb));
            if valid && ok_end(e) {
                // "1/2" is as often a fraction: only with date words around.
                let before = lower_before(text, p, 24);
                let ctx = contains_any(&before, lexicon().short_date_words);
                if ctx {
                    return Some(finish(p, e, 0.55, out));
                }
            }
        }
        None
    }

    pub(super) fn bare_year(
        &self,
        text: &str,
        p: usize,
        q: usize,
        out: &mut Vec<Candidate>,
    ) -> Option<usize> {
        if q - p != 4 {
            return None;
        }
        let y = parse_u32(&text[p..q]);
        if !(1900..=2039).contains(&y) {
            return None;
        }
        let b = text.as_bytes();
        // Part of a digit group (IBAN, phone) or an expression: not a year.
        if q < b.len()
            && matches!(b[q], b'%' | b':' | b'/' | b'.' | b',' | b'-' | b'x' | b's')
            && q + 1 < b.len()
            && b[q + 1].is_ascii_alphanumeric()
        {
            return None;
        }
        if alnum_at(text, q) {
            return None;
        }
        if q + 1 < b.len() && b[q] == b' ' && b[q + 1].is_ascii_digit() {
            return None;
        }
        if p >= 2 && b[p - 1] == b' ' && b[p - 2].is_ascii_digit() {
            return None;
        }
        if let Some(c) = char_before(text, p) {
            if matches!(c, '.' | ',' | '/' | ':' | '-' | '#' | '+' | '=' | '_') {
                return None;
            }
        }
        let before = lower_before(text, p, 20);
        let trimmed = before.trim_end();
        let ends_word = |w: &str| {
            trimmed.ends_with(w)
                && !trimmed[..trimmed.len() - w.len()]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric())
        };
        let mut score = 0.35;
        // Words after which a four-digit number is nearly always a year.
        let strong = [
            "since",
            "during",
            "of",
            "until",
            "till",
            "circa",
            "year",
            "born",
            "early",
            "late",
            "mid",
            "spring",
            "summer",
            "autumn",
            "winter",
            "throughout",
        ]
        .iter()
        .any(|w| ends_word(w));
        // Words after which it may be a count ("in 2000 cases", "by 2000 votes").
        let weak = ["in", "from", "by", "before", "after", "around", "fall"]
            .iter()
            .any(|w| ends_word(w));
        if strong {
            score = 0.5;
        } else if weak {
            let after = &text[q..ceil_boundary(text, q + 16)];
            let plural_next = after.strip_prefix(' ').is_some_and(|w| {
                let word: String = w.chars().take_while(|c| c.is_alphabetic()).collect();
                word.len() > 3
                    && word.ends_with('s')
                    && word.chars().all(|c| c.is_lowercase())
                    && !matches!(word.as_str(), "was" | "has" | "does" | "goes")
            });
            if !plural_next {
                score = 0.5;
            }
        }
        if before.contains("born") {
            score = 0.75;
        }
        push(out, p, q, "DATE_TIME", Tier::QuasiIdentifier, score);
        Some(q)
    }
}
