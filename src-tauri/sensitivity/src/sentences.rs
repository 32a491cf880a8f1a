//! Sentence boundaries for fragments: a fast path for ASCII lines, UAX #29 for the rest.
//!
//! UAX #29's table lookups were a quarter of the router's planning time (bench `router`), and
//! almost every prompt is ASCII. Lines are independent in UAX #29 (a line end always ends a
//! sentence), so each line takes the fast path when it is ASCII and the full rules otherwise.
//! The ASCII rules follow UAX #29 where it matters here — a `.`, `!` or `?` (then closing
//! quotes or brackets) followed by spaces ends a sentence, unless a lower-case letter comes
//! next after a `.` — and differ on purpose in one place: a terminator with no space after it
//! (`jane.doe@posteo.de`, `3.14`, `e.g.x`) never ends a sentence, so no fragment boundary
//! falls inside an address or a number.

use unicode_segmentation::UnicodeSegmentation;

/// Byte ranges `(start, end)` covering `text` in order, each one sentence with its trailing
/// spaces and line end.
pub fn sentence_bounds(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut line_start = 0;
    while line_start < text.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i + 1);
        let line = &text[line_start..line_end];
        if line.is_ascii() {
            ascii_line(line.as_bytes(), line_start, &mut out);
        } else {
            for (s, sentence) in line.split_sentence_bound_indices() {
                out.push((line_start + s, line_start + s + sentence.len()));
            }
        }
        line_start = line_end;
    }
    out
}

fn ascii_line(b: &[u8], base: usize, out: &mut Vec<(usize, usize)>) {
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if !matches!(c, b'.' | b'!' | b'?') {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < b.len() && matches!(b[j], b'.' | b'!' | b'?') {
            j += 1;
        }
        while j < b.len() && matches!(b[j], b'"' | b'\'' | b')' | b']' | b'}') {
            j += 1;
        }
        let spaces = j;
        while j < b.len() && matches!(b[j], b' ' | b'\t' | b'\r' | b'\n') {
            j += 1;
        }
        let ends = j == b.len()
            || (j > spaces && !(c == b'.' && (b[j].is_ascii_lowercase() || abbreviation(b, i))));
        if ends && j < b.len() {
            out.push((base + start, base + j));
            start = j;
        }
        i = j.max(i + 1);
    }
    if start < b.len() {
        out.push((base + start, base + b.len()));
    }
}

/// Whether the full stop at `dot` closes an abbreviation that does not end a sentence: an
/// initial ("H.G. Wells", "J. R. R. Tolkien": one capital letter standing alone) or "et al."
/// (a citation goes on: "Song et al. [80] reported"). A sentence that really ends in a lone
/// capital ("vitamin C. Next") is joined to the next one: a coarser fragment, never a name
/// cut in two at a boundary where the rules could no longer see it whole.
fn abbreviation(b: &[u8], dot: usize) -> bool {
    let et_al = dot >= 5
        && b[dot - 5..dot].eq_ignore_ascii_case(b"et al")
        && (dot == 5 || !b[dot - 6].is_ascii_alphanumeric());
    // One initial alone ("in V. Let P be", "B. The ...") ends a sentence as before: only a run
    // of initials is one name's.
    et_al
        || (initial_at(b, dot)
            && (prev_dot(b, dot - 1).is_some_and(|d| initial_at(b, d)) || next_initial(b, dot)))
}

/// Whether the full stop at `dot` follows one capital letter standing alone.
fn initial_at(b: &[u8], dot: usize) -> bool {
    dot >= 1
        && b.get(dot) == Some(&b'.')
        && b[dot - 1].is_ascii_uppercase()
        && (dot == 1 || matches!(b[dot - 2], b' ' | b'\t' | b'.' | b'(' | b'"'))
}

/// The full stop just before the initial letter at `letter`, past spaces ("J. R": J's).
fn prev_dot(b: &[u8], letter: usize) -> Option<usize> {
    let mut i = letter;
    while i > 0 && matches!(b[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    (i > 0 && b[i - 1] == b'.').then(|| i - 1)
}

/// Whether another initial follows the full stop at `dot` ("J. R. R. Tolkien").
fn next_initial(b: &[u8], dot: usize) -> bool {
    let mut i = dot + 1;
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i + 1 < b.len() && b[i].is_ascii_uppercase() && b[i + 1] == b'.'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(t: &str) -> Vec<&str> {
        sentence_bounds(t)
            .into_iter()
            .map(|(s, e)| &t[s..e])
            .collect()
    }

    #[test]
    fn covers_the_text_in_order() {
        for t in [
            "",
            "a",
            "One. Two! Three? Four",
            "x.\n\ny\r\n",
            "Ünïcode. Line two.\nSecond line. Ok",
            "...",
            "Hello!!! \"Quoted.\" Next",
        ] {
            let b = sentence_bounds(t);
            let mut at = 0;
            for &(s, e) in &b {
                assert_eq!(s, at, "{t:?}: {b:?}");
                assert!(e > s);
                at = e;
            }
            assert_eq!(at, t.len(), "{t:?}");
        }
    }

    #[test]
    fn ascii_rules() {
        assert_eq!(
            split("Call me. Mail jane.doe@posteo.de now. Pi is 3.14 ok? Yes!\nNew line"),
            vec![
                "Call me. ",
                "Mail jane.doe@posteo.de now. ",
                "Pi is 3.14 ok? ",
                "Yes!\n",
                "New line"
            ]
        );
        // A lower-case word after a full stop continues the sentence, as in UAX #29.
        assert_eq!(
            split("See etc. and more. End"),
            vec!["See etc. and more. ", "End"]
        );
        // A run of initials and "et al." do not end a sentence; one initial alone does.
        assert_eq!(
            split("Read H.G. Wells and J. R. R. Tolkien. Song et al. [80] agree. End"),
            vec![
                "Read H.G. Wells and J. R. R. Tolkien. ",
                "Song et al. [80] agree. ",
                "End"
            ]
        );
        assert_eq!(
            split("Take a and b in V. Let P be. B. The end"),
            vec!["Take a and b in V. ", "Let P be. ", "B. ", "The end"]
        );
        assert_eq!(
            split("He said \"go.\" Then left."),
            vec!["He said \"go.\" ", "Then left."]
        );
    }

    #[test]
    fn non_ascii_lines_use_uax29() {
        assert_eq!(
            split("Grüße. Bis bald.\nPlain. Two"),
            vec!["Grüße. ", "Bis bald.\n", "Plain. ", "Two"]
        );
    }
}
