//! Honorific titles ("Mr.", "Dr.", "Miss") found at '.' bytes.

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
}
