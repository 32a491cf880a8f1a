//! Titles: honorifics ("Mr.", "Dr.", "Miss") found at '.' bytes, and job titles ("Rolling
//! machine operator") where a sentence or a layout says a person holds them.

use super::*;

impl QuasiRecognizer {
    // -----------------------------------------------------------------------------------------
    // Honorifics: found at '.' bytes ("Mr.", "Mrs.", "Ms.", "Dr.", "Prof.") plus "Miss".
    // -----------------------------------------------------------------------------------------

    pub(super) fn title_pass(&self, text: &str, out: &mut Vec<Candidate>) {
        let b = text.as_bytes();
        let followed_by_name = |e: usize| -> bool {
            let n = skip_blanks(b, e);
            n > e && char_at(text, n).is_some_and(|c| c.is_uppercase())
        };
        for d in memchr::memchr_iter(b'.', b) {
            let s = (d.saturating_sub(4)..d).find(|&s| {
                let w = &b[s..d];
                matches!(
                    w,
                    b"Mr"
                        | b"Mrs"
                        | b"Ms"
                        | b"Dr"
                        | b"Prof"
                        | b"Mx"
                        | b"MR"
                        | b"MRS"
                        | b"MS"
                        | b"DR"
                )
            });
            let Some(s) = s else { continue };
            if alnum_before(text, s) || !followed_by_name(d + 1) {
                continue;
            }
            // "Cheriton Dr. Apt": a street type after a capitalized word, not a title.
            if &b[s..d] == b"Dr" {
                let mut j = s;
                while j > 0 && b[j - 1] == b' ' {
                    j -= 1;
                }
                if j < s && char_before(text, j).is_some_and(|c| c.is_alphabetic()) {
                    let mut k = j;
                    while let Some(c) = char_before(text, k) {
                        if c.is_alphabetic() {
                            k -= c.len_utf8()
                        } else {
                            break;
                        }
                    }
                    if text[k..j].chars().next().is_some_and(|c| c.is_uppercase()) {
                        continue;
                    }
                }
            }
            push(out, s, d + 1, "TITLE", Tier::QuasiIdentifier, 0.6);
        }
        for m in memchr::memmem::find_iter(b, b"Miss ") {
            if !alnum_before(text, m) && followed_by_name(m + 4) {
                push(out, m, m + 4, "TITLE", Tier::QuasiIdentifier, 0.55);
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Job titles: a short phrase ending in an occupation word (data: `occupation_heads`), where
    // a person is said to hold it: "worked ... as Rolling machine operator", "Jane Roe, the
    // Technical writer, said", "I'm a nurse", or a segment of its own in a signature or address
    // block ("Julieta S Almeida  Staff development specialist  Personal Info"). An occupation
    // word elsewhere ("the engineer fixed it") says nothing about who the text is about.
    // -----------------------------------------------------------------------------------------

    pub(super) fn job_title_pass(&self, text: &str, out: &mut Vec<Candidate>) {
        let b = text.as_bytes();
        // "as [a|an|the] <title>", not "such as" / "as well as" lists.
        for m in memchr::memmem::find_iter(b, b" as ") {
            let before = &b[m.saturating_sub(4)..m];
            if [&b"such"[..], b"well", b" so"].iter().any(|w| {
                before.len() >= w.len() && before[before.len() - w.len()..].eq_ignore_ascii_case(w)
            }) {
                continue;
            }
            let at = skip_article(text, m + 4);
            if let Some(e) = self.title_phrase(text, at, false) {
                push(out, at, e, "TITLE", Tier::QuasiIdentifier, 0.6);
            }
        }
        // "I am a nurse", "I'm an accountant".
        for cue in ["I am a", "I'm a", "I’m a"] {
            let cue = cue.as_bytes();
            for m in memchr::memmem::find_iter(b, cue) {
                let at = skip_article(text, m + cue.len() - 1);
                if at > m + cue.len() - 1 {
                    if let Some(e) = self.title_phrase(text, at, false) {
                        push(out, at, e, "TITLE", Tier::QuasiIdentifier, 0.6);
                    }
                }
            }
        }
        // An apposition: "<name>, the <title>, said".
        for m in memchr::memmem::find_iter(b, b", the ") {
            let at = m + 6;
            if let Some(e) = self.title_phrase(text, at, false) {
                if b.get(e) == Some(&b',')
                    && char_before(text, m).is_some_and(|c| c.is_alphabetic())
                {
                    push(out, at, e, "TITLE", Tier::QuasiIdentifier, 0.6);
                }
            }
        }
        // A block's own segment: a line, or a run set off by two or more blanks (whole lines
        // are found with memchr; only a line holding a tab or a double blank is split further).
        let mut line_start = 0;
        for end in memchr::memchr_iter(b'\n', b).chain(std::iter::once(b.len())) {
            let line = &b[line_start..end];
            if memchr::memchr(b'\t', line).is_none() && memchr::memmem::find(line, b"  ").is_none()
            {
                self.block_segment(text, line_start, end, out);
            } else {
                let mut seg = line_start;
                let mut k = line_start;
                while k < end {
                    let gap = b[k] == b'\t'
                        || (b[k] == b' ' && k + 1 < end && matches!(b[k + 1], b' ' | b'\t'));
                    if !gap {
                        k += 1;
                        continue;
                    }
                    self.block_segment(text, seg, k, out);
                    while k < end && matches!(b[k], b' ' | b'\t') {
                        k += 1;
                    }
                    seg = k;
                }
                self.block_segment(text, seg, end, out);
            }
            line_start = end + 1;
        }
    }

    /// A whole segment `s..e` (quote markers and blanks trimmed) that is one capitalised title.
    fn block_segment(&self, text: &str, s: usize, e: usize, out: &mut Vec<Candidate>) {
        let seg = &text[s..e];
        let lead = seg.len() - seg.trim_start_matches(['>', ' ', '?']).len();
        let trimmed = seg.trim_end_matches([' ', ',', '.', '\r', '\t']);
        let (a, z) = (s + lead, s + trimmed.len());
        if a >= z || !char_at(text, a).is_some_and(|c| c.is_uppercase()) {
            return;
        }
        // Cheap test first: the segment's last word must be an occupation.
        let last = text[a..z]
            .char_indices()
            .rfind(|&(_, c)| !c.is_alphabetic())
            .map_or(a, |(k, c)| a + k + c.len_utf8());
        let mut buf = [0u8; 32];
        if !self
            .occupations
            .contains(&*lower_word(&text[last..z], &mut buf))
        {
            return;
        }
        if self.title_phrase(text, a, true) == Some(z) {
            push(out, a, z, "TITLE", Tier::QuasiIdentifier, 0.55);
        }
    }

    /// From a word start, the end of the longest phrase of at most six words (letters and
    /// hyphens; "," and "and" inside a list of qualifiers) whose last word is an occupation.
    /// `whole` asks for the phrase to run to the end of its segment.
    fn title_phrase(&self, text: &str, at: usize, whole: bool) -> Option<usize> {
        let b = text.as_bytes();
        let mut i = at;
        let mut best = None;
        let mut buf = [0u8; 32];
        for _ in 0..6 {
            let e = word_at(text, i)?;
            let lower = lower_word(&text[i..e], &mut buf);
            if self.occupations.contains(&*lower) {
                best = Some(e);
            } else if !whole && TITLE_BREAKS.contains(&&*lower) {
                break;
            }
            // Next word: one blank, or ", " inside a list ("Court, municipal, and license clerk").
            let mut n = e;
            if b.get(n) == Some(&b',') {
                n += 1;
            }
            if b.get(n) != Some(&b' ') || !char_at(text, n + 1).is_some_and(|c| c.is_alphabetic()) {
                break;
            }
            i = n + 1;
        }
        best
    }
}

/// `w` in lower case: on the stack for short ASCII words (this runs for every word after a
/// cue), else allocated.
fn lower_word<'a>(w: &'a str, buf: &'a mut [u8; 32]) -> std::borrow::Cow<'a, str> {
    if w.len() <= buf.len() && w.is_ascii() {
        let b = &mut buf[..w.len()];
        b.copy_from_slice(w.as_bytes());
        b.make_ascii_lowercase();
        if let Ok(s) = std::str::from_utf8(b) {
            return std::borrow::Cow::Borrowed(s);
        }
    }
    std::borrow::Cow::Owned(w.to_lowercase())
}

/// Words that end a job-title phrase in running text ("as a nurse *at* the clinic").
const TITLE_BREAKS: &[&str] = &[
    "at", "for", "in", "with", "but", "since", "until", "from", "to", "who", "which", "that", "on",
    "of", "is", "was", "and",
];

/// Past "a ", "an " or "the " at `i`, if any.
fn skip_article(text: &str, i: usize) -> usize {
    let rest = &text.as_bytes()[i.min(text.len())..];
    for a in [&b"a "[..], b"an ", b"the ", b"A ", b"An ", b"The "] {
        if rest.starts_with(a) {
            return i + a.len();
        }
    }
    i
}
