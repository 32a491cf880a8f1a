//! The common-word check behind policy `private`: which words of a text a list of everyday
//! words does not know. Under `private` such words count as identifying, because the detectors
//! see names by their capitals and scripts they know, and a lowercase name ("rostelecom",
//! "pune"), a code or a word in another script would otherwise leave unmasked.
//!
//! The list is the system's (every `/usr/share/dict/*english*` list — Debian's `wamerican`,
//! `wbritish` and their `-large` sizes, installed by `scripts/setup.sh` — else
//! `/usr/share/dict/words`, which macOS ships), or the file `TANDEM_WORDS` names. Only lowercase
//! entries count: word lists spell proper nouns capitalised ("Washington"), so they stay unknown.

use rustc_hash::FxHashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Environment variable naming a word list (one word per line) to use instead of the system's.
pub const WORDS_ENV: &str = "TANDEM_WORDS";

/// Where the system keeps its word list on Linux and macOS.
pub const SYSTEM_WORDS: &str = "/usr/share/dict/words";

/// Words the lists spell capitalised that identify nobody: days, months, titles, holidays.
const ALWAYS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "mr",
    "mrs",
    "ms",
    "dr",
    "christmas",
    "easter",
    "halloween",
    "thanksgiving",
];

/// Code's own vocabulary (`data/code_words.txt`: keywords, built-ins, commands, markup):
/// everyday words of code that name no one.
fn code_words() -> impl Iterator<Item = &'static str> {
    include_str!("data/code_words.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// The system's English word lists: every `*english*` file beside `SYSTEM_WORDS` (Debian keeps
/// American and British spellings, in two sizes, there), else `SYSTEM_WORDS` itself.
fn system_lists() -> Vec<PathBuf> {
    let dir = Path::new(SYSTEM_WORDS).parent().unwrap_or(Path::new("/"));
    let mut lists: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains("english"))
        })
        .collect();
    lists.sort();
    if lists.is_empty() {
        lists.push(PathBuf::from(SYSTEM_WORDS));
    }
    lists
}

/// Lowercase words of a word list.
pub struct CommonWords {
    words: FxHashSet<String>,
    /// The capitalised entries, lowercased: names a general dictionary knows ("Plovdiv",
    /// "Tehran", "Oman"), i.e. public ones.
    names: FxHashSet<String>,
    source: PathBuf,
    /// Whether a list was read at all: without one only Tandem's own words (days, titles,
    /// code keywords) are known, and every other word counts as identifying.
    listed: bool,
}

impl CommonWords {
    /// The lowercase entries of `list` (one word per line; possessive forms are skipped, the
    /// check strips them itself).
    pub fn from_list(list: &str, source: &Path) -> Self {
        let words = list
            .lines()
            .map(str::trim)
            .filter(|w| w.chars().next().is_some_and(char::is_lowercase) && !w.ends_with("'s"))
            .chain(
                ALWAYS
                    .iter()
                    .chain(super::quasi::lexicon().weekdays)
                    .copied(),
            )
            .chain(code_words().map(|w| -> &str { w }))
            .map(str::to_owned)
            .collect();
        let names = list
            .lines()
            .map(str::trim)
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase) && !w.ends_with("'s"))
            .map(str::to_lowercase)
            .collect();
        Self {
            words,
            names,
            source: source.to_owned(),
            listed: list.lines().any(|l| !l.trim().is_empty()),
        }
    }

    /// Whether the words come from a list (not only Tandem's own few).
    pub fn has_list(&self) -> bool {
        self.listed
    }

    /// Whether the list spells `word` as a proper noun ("Plovdiv", "Tehran"): a name a general
    /// dictionary knows is public knowledge; "Jeddah", "Intuit" and "Rostelecom" are not in it.
    pub fn knows_name(&self, word: &str) -> bool {
        // Short ASCII words are lower-cased on the stack (the name list asks for every name).
        let mut buf = [0u8; 48];
        let w: std::borrow::Cow<str> = if word.len() <= buf.len() && word.is_ascii() {
            let b = &mut buf[..word.len()];
            b.copy_from_slice(word.as_bytes());
            b.make_ascii_lowercase();
            std::str::from_utf8(b).map_or_else(|_| word.to_lowercase().into(), Into::into)
        } else {
            word.to_lowercase().replace('’', "'").into()
        };
        // "China's" is "China".
        self.names.contains(w.strip_suffix("'s").unwrap_or(&w))
    }

    /// The list `TANDEM_WORDS` names, else the system's lists, read once per process. When
    /// none can be read, Tandem's own words only (`has_list` is false: policy private then
    /// sends nothing); `None` only if even those were empty.
    pub fn system() -> Option<&'static CommonWords> {
        static WORDS: OnceLock<Option<CommonWords>> = OnceLock::new();
        WORDS
            .get_or_init(|| {
                // An empty `TANDEM_WORDS` is unset, as for any variable naming a file.
                let paths = match std::env::var_os(WORDS_ENV).filter(|p| !p.is_empty()) {
                    Some(p) => vec![PathBuf::from(p)],
                    None => system_lists(),
                };
                let mut all = String::new();
                for path in &paths {
                    match std::fs::read_to_string(path) {
                        Ok(list) => all.push_str(&list),
                        Err(e) => {
                            tracing::warn!(path = %path.display(), error = %e, "word list unreadable")
                        }
                    }
                }
                let source = paths.first().cloned().unwrap_or_else(|| SYSTEM_WORDS.into());
                let w = Self::from_list(&all, &source);
                if !w.has_list() {
                    tracing::warn!("no word list: policy private will send nothing");
                }
                (!w.is_empty()).then_some(w)
            })
            .as_ref()
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Whether `word` (letters, maybe an apostrophe) is an everyday word in any casing that
    /// grammar gives it: "The", "HIKING", "dad's" and "dad’s" are; "rostelecom", "Sara", "C919"
    /// are not.
    pub fn knows(&self, word: &str) -> bool {
        // Most words are short ASCII: lowercase them on the stack (this runs once per word of
        // every personal text a plan reads).
        let mut buf = [0u8; 48];
        if word.len() <= buf.len() && word.is_ascii() {
            let b = &mut buf[..word.len()];
            b.copy_from_slice(word.as_bytes());
            b.make_ascii_lowercase();
            if let Ok(lower) = std::str::from_utf8(b) {
                return self.knows_lower(lower);
            }
        }
        self.knows_lower(&word.to_lowercase().replace('’', "'"))
    }

    fn knows_lower(&self, lower: &str) -> bool {
        // Possessives and contractions: "dad's", "I'm", "we'll", "isn't" (the list has some
        // of these forms itself, not all).
        const CLITICS: &[&str] = &["'s", "'ll", "'m", "'re", "'ve", "'d", "n't", "'"];
        self.words.contains(lower)
            || (lower.contains('\'')
                && CLITICS.iter().any(|c| {
                    lower
                        .strip_suffix(c)
                        .is_some_and(|s| !s.is_empty() && self.words.contains(s))
                }))
    }

    /// Code point ranges of the words of `text` this list does not know. A word is a run of
    /// letters and digits (with inner apostrophes); numbers, alone or with a short unit, are
    /// the detectors' to judge and are skipped. Hyphenated words are checked part by part.
    pub fn unknown_spans(&self, text: &str) -> Vec<(usize, usize)> {
        // A byte loop with an ASCII fast path: this runs over every personal text a plan
        // reads (measured ~4x faster than `char_indices` with Unicode classes on 24 KB).
        let bytes = text.as_bytes();
        let char_at = |i: usize| -> Option<char> {
            match bytes.get(i) {
                Some(&b) if b < 0x80 => Some(b as char),
                Some(_) => text.get(i..).and_then(|t| t.chars().next()),
                None => None,
            }
        };
        let mut out = Vec::new();
        let mut start: Option<(usize, usize)> = None; // (code point, byte)
        let (mut i, mut cp) = (0usize, 0usize);
        let mut flush = |start: Option<(usize, usize)>, end: usize, end_cp: usize| {
            if let Some((scp, sb)) = start {
                let w = &text[sb..end];
                if !number_with_unit(w) && !self.knows(w) {
                    out.push((scp, end_cp));
                }
            }
        };
        while let Some(c) = char_at(i) {
            let len = c.len_utf8();
            // A `\n`, `\r` or `\t` escape of a pasted export separates words ("\nAlice" is
            // "Alice"), as the scanner's folding reads it.
            if c == '\\' && matches!(bytes.get(i + 1), Some(b'n' | b'r' | b't')) {
                flush(start.take(), i, cp);
                i += 2;
                cp += 2;
                continue;
            }
            let word_char = if c.is_ascii() {
                c.is_ascii_alphanumeric()
            } else {
                c.is_alphanumeric()
            };
            let inner_apostrophe = (c == '\'' || c == '’')
                && start.is_some()
                && char_at(i + len).is_some_and(char::is_alphabetic);
            if word_char || inner_apostrophe {
                if start.is_none() {
                    start = Some((cp, i));
                }
            } else {
                flush(start.take(), i, cp);
            }
            i += len;
            cp += 1;
        }
        flush(start, text.len(), cp);
        out
    }
}

/// Digits alone, or digits with a short unit or ordinal ("2nd", "5x", "10am", "250mg"): the
/// detectors judge numbers, and such a unit names nobody.
pub(crate) fn number_with_unit(w: &str) -> bool {
    let digits = w.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && {
        let rest = &w[digits..];
        rest.chars().count() <= 3 && rest.chars().all(|c| c.is_ascii_alphabetic())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> CommonWords {
        CommonWords::from_list(
            "i\nthe\nstory\nof\nrussian\ncompany\nWashington\nwashing\ndad\ndad's\ndon't\nhiking\nin\nx\nwrite\na\nfor\nGoogle\ngoogle\n",
            Path::new("test"),
        )
    }

    fn unknown(text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        list()
            .unknown_spans(text)
            .into_iter()
            .map(|(s, e)| chars[s..e].iter().collect())
            .collect()
    }

    #[test]
    fn lowercase_names_codes_and_other_scripts_are_unknown() {
        assert_eq!(
            unknown("The story of the russian company rostelecom"),
            ["rostelecom"]
        );
        assert_eq!(unknown("hiking in washington"), ["washington"]);
        assert_eq!(unknown("write a story for Sara"), ["Sara"]);
        assert_eq!(unknown("the C919 in 2023"), ["C919"]);
        assert_eq!(unknown("艺传新闻 hiking"), ["艺传新闻"]);
    }

    #[test]
    fn grammar_casing_possessives_and_contractions_are_known() {
        assert!(unknown("The STORY of Dad's hiking, don't, I'm, I'll").is_empty());
        assert!(unknown("dad’s x google Google").is_empty());
        assert_eq!(unknown("Monday in April Mr Smith"), ["Smith"]);
        assert!(unknown("2023 1,240 ... -- 2nd 5x 10am 250mg").is_empty());
        assert_eq!(unknown("4ever 12abcd"), ["4ever", "12abcd"]);
    }

    /// Code pasted into a personal request keeps its keywords; its own names stay unknown.
    /// Mutation-checked: without `code_words` every keyword here is unknown.
    #[test]
    fn code_keywords_are_known_and_code_names_are_not() {
        assert_eq!(
            unknown("const async for x in argv: println sudo mkdir tmp stormhaven"),
            ["stormhaven"]
        );
        assert!(unknown("a div in the tbody, px rgba").is_empty());
    }

    /// A code word that is also someone's name ("chan", "elif") would let that name leave
    /// unmasked in a personal request ("Ms.Chan said…").
    #[test]
    fn no_code_word_is_a_name() {
        let names: rustc_hash::FxHashSet<String> = include_str!("data/names.txt")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_lowercase)
            .collect();
        for w in code_words() {
            assert_eq!(w, w.to_lowercase(), "{w}: code words are lower case");
            assert!(!names.contains(w), "{w} is a name in data/names.txt");
        }
    }

    #[test]
    fn spans_are_code_points_and_trailing_quotes_are_not_part_of_the_word() {
        let l = list();
        assert_eq!(l.unknown_spans("é pune'"), vec![(0, 1), (2, 6)]);
        assert_eq!(l.unknown_spans("the rostelecom's"), vec![(4, 16)]);
    }
}
