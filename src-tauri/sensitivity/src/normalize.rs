//! Folding before detection, with offsets mapped back: an identifier written with no-break or
//! narrow spaces, a zero-width space inside it, full-width or other-script digits, or a
//! typographic dash must be found as if typed plainly. Every scan (the plan's, the sanitizer's,
//! the last-line check's) goes through `Scanner::scan_with`, which folds here, detects on the
//! folded text and reports spans in the original text's code points, so masking replaces the
//! original characters, disguise included.
//!
//! Per character: format characters (category Cf: zero-width spaces and joiners, soft hyphen,
//! bidi controls, BOM) are removed; space separators become ' ', line/paragraph separators
//! '\n'; dash punctuation and the minus sign become '-'; decimal digits of any script become
//! ASCII digits; anything else is NFKC-normalized (full-width letters, ligatures). The escape
//! sequences `\n`, `\r` and `\t` of a pasted JSON or log export read as the space and line
//! break they stand for (two characters for two: " \n"), so "...include:\n\nAlice Johnson"
//! holds the name "Alice Johnson", not a word "nAlice".

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// A folded text and, for each of its code points, the original code point it came from.
#[derive(Debug, Clone)]
pub struct Folded {
    pub text: String,
    origin: Vec<u32>,
    original_len: usize,
}

impl Folded {
    /// A span in the folded text's code points → the span in the original's code points that
    /// produced it (characters removed inside it are covered).
    pub fn to_original(&self, start: usize, end: usize) -> (usize, usize) {
        let at = |i: usize| {
            self.origin
                .get(i)
                .map_or(self.original_len, |&o| o as usize)
        };
        let s = at(start);
        let e = if end == 0 {
            0
        } else {
            self.origin
                .get(end - 1)
                .map_or(self.original_len, |&o| o as usize + 1)
        };
        (s, e.max(s))
    }
}

/// The value of a decimal digit of any script (Unicode keeps each script's digits 0-9 in one
/// contiguous run, and adjacent runs each start at zero).
fn digit_value(c: char) -> Option<u32> {
    if c.general_category() != GeneralCategory::DecimalNumber {
        return None;
    }
    let mut back = 0u32;
    let mut cp = c as u32;
    while back < 60 {
        let Some(prev) = cp.checked_sub(1).and_then(char::from_u32) else {
            break;
        };
        if prev.general_category() != GeneralCategory::DecimalNumber {
            break;
        }
        back += 1;
        cp -= 1;
    }
    Some(back % 10)
}

/// How one non-ASCII character reads for detection (empty: removed).
fn fold_char(c: char, out: &mut String) {
    match c.general_category() {
        GeneralCategory::Format => {}
        GeneralCategory::SpaceSeparator => out.push(' '),
        GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator => out.push('\n'),
        GeneralCategory::DashPunctuation => out.push('-'),
        _ if c == '\u{2212}' => out.push('-'),
        GeneralCategory::DecimalNumber => {
            match digit_value(c).and_then(|d| char::from_digit(d, 10)) {
                Some(d) => out.push(d),
                None => out.push(c),
            }
        }
        // NFKC turns spacing diacritics ("¨", "´") into a space plus a combining mark: that
        // would split a token (a password holding "¨") where the original has none.
        _ if std::iter::once(c).nfkc().any(char::is_whitespace) => out.push(c),
        _ => {
            for n in std::iter::once(c).nfkc() {
                if n.is_ascii() {
                    out.push(n);
                } else if n == c {
                    out.push(n);
                } else {
                    // NFKC output may itself be a dash or digit (U+FF0D → '-').
                    fold_char(n, out);
                }
            }
        }
    }
}

/// Whether `c` reads differently after folding (no allocation: it runs on every non-ASCII
/// character of every scanned text).
fn changes(c: char) -> bool {
    if c.is_ascii() {
        return false;
    }
    match c.general_category() {
        GeneralCategory::Format
        | GeneralCategory::SpaceSeparator
        | GeneralCategory::LineSeparator
        | GeneralCategory::ParagraphSeparator
        | GeneralCategory::DashPunctuation
        | GeneralCategory::DecimalNumber => true,
        _ if c == '\u{2212}' => true,
        _ => !matches!(
            unicode_normalization::is_nfkc_quick(std::iter::once(c)),
            unicode_normalization::IsNormalized::Yes
        ),
    }
}

/// Whether `text` holds a `\n`, `\r` or `\t` escape sequence (one `memchr` pass for '\\').
fn has_text_escape(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b'\\', b).any(|i| matches!(b.get(i + 1), Some(b'n' | b'r' | b't')))
}

/// The folded text, or `None` when folding would change nothing (ASCII text: the common case
/// costs one pass of `is_ascii`).
pub fn fold(text: &str) -> Option<Folded> {
    let escapes = has_text_escape(text);
    if !escapes && (text.is_ascii() || !text.chars().any(changes)) {
        return None;
    }
    let mut folded = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    let mut n = 0usize;
    let mut piece = String::new();
    let mut after_backslash = false;
    for (i, c) in text.chars().enumerate() {
        n = i + 1;
        if after_backslash {
            after_backslash = false;
            if matches!(c, 'n' | 'r' | 't') {
                // The backslash (pushed as itself) becomes a space, the letter the break it means.
                if let Some(last) = folded.pop() {
                    debug_assert_eq!(last, '\\');
                }
                folded.push(' ');
                folded.push(if c == 't' { ' ' } else { '\n' });
                origin.push(i as u32);
                continue;
            }
        } else if c == '\\' && escapes {
            // `\\n` is an escaped backslash then a letter: only an unpaired backslash escapes.
            after_backslash = true;
            folded.push(c);
            origin.push(i as u32);
            continue;
        }
        if c.is_ascii() {
            folded.push(c);
            origin.push(i as u32);
            continue;
        }
        piece.clear();
        fold_char(c, &mut piece);
        for f in piece.chars() {
            folded.push(f);
            origin.push(i as u32);
        }
    }
    Some(Folded {
        text: folded,
        origin,
        original_len: n,
    })
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn disguises_fold_to_plain_text_and_offsets_map_back() {
        let t = "IBAN DE89\u{00a0}3704\u{200b}0044\u{202f}0532 ok";
        let f = fold(t).unwrap();
        assert_eq!(f.text, "IBAN DE89 37040044 0532 ok");
        // "DE89 37040044 0532" in the folded text → the original's span, ZWSP included.
        let s = f.text.find("DE89").unwrap();
        let e = s + "DE89 37040044 0532".len();
        let (os, oe) = f.to_original(s, e);
        let orig: String = t.chars().skip(os).take(oe - os).collect();
        assert_eq!(orig, "DE89\u{00a0}3704\u{200b}0044\u{202f}0532");
        assert_eq!(
            fold("\u{ff14}\u{ff11}\u{ff11}\u{ff11} \u{0664}\u{0661}\u{0661} \u{0967}\u{0968}")
                .unwrap()
                .text,
            "4111 411 12"
        );
        assert_eq!(
            fold("555\u{2011}0100\u{2013}7\u{2212}1\u{ff0d}2")
                .unwrap()
                .text,
            "555-0100-7-1-2"
        );
        assert!(fold("plain ascii").is_none());
        assert_eq!(
            fold("pw A,.:-\u{a8}@*\u{bf}?! \u{2026}").unwrap().text,
            "pw A,.:-\u{a8}@*\u{bf}?! ...",
            "no space is made inside a token"
        );
        assert!(fold("Grüße aus Köln").is_none(), "letters stay as they are");
        // A JSON export's escapes read as the breaks they stand for, offsets unchanged.
        let t = r"scores include:\n\nAlice Johnson: 98%, C:\\new";
        let f = fold(t).unwrap();
        assert_eq!(f.text, "scores include: \n \nAlice Johnson: 98%, C:\\\\new");
        let s = f.text.find("Alice").unwrap();
        assert_eq!(f.to_original(s, s + 5), (s, s + 5));
    }
}
