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
        let ends = j == b.len() || (j > spaces && !(c == b'.' && b[j].is_ascii_lowercase()));
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
