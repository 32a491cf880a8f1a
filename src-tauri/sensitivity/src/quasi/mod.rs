//! Rule recognizers for quasi-identifiers no validator covers: street addresses, dates, ages,
//! postcodes, vehicle registrations, honorific titles and nationality/religion/politics (NRP).
//!
//! Cost model: one byte loop finds ASCII digit runs and everything numeric is decided in small
//! bounded windows around each run (anchored regexes, a tiny word tokenizer); one Aho-Corasick
//! pass finds weekday and NRP words; honorifics are checked only at '.' bytes. No step looks
//! further than a few hundred bytes from its trigger, so a scan stays linear.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use regex::Regex;

use super::types::push_rule as push;
use super::types::{ceil_boundary, floor_boundary, Candidate, Recognizer, Tier};
use crate::bytescan::find_in_range;

mod addresses;
mod ages;
mod dates;
mod nrp;
mod plates;
mod titles;

const DETECTOR: &str = "rules";

/// The structure words, as data (`data/quasi.toml`, embedded, parsed once, then leaked into
/// `'static` slices: the recognizer's word sets borrow them for the life of the program).
pub(crate) struct Lexicon {
    pub street_before: &'static [&'static str],
    pub street_after: &'static [&'static str],
    pub street_after_lower: &'static [&'static str],
    pub street_endings: &'static [&'static str],
    pub unit_words: &'static [&'static str],
    pub line_unit_words: &'static [&'static str],
    pub particles: &'static [&'static str],
    pub stopwords: &'static [&'static str],
    pub not_street_heads: &'static [&'static str],
    pub not_places: &'static [&'static str],
    pub place_words: &'static [&'static str],
    pub address_context: &'static [&'static str],
    pub weekdays: &'static [&'static str],
    pub nrp_words: &'static [&'static str],
    pub in_plate_states: &'static [&'static str],
    pub month_names: &'static [&'static str],
    pub weekday_names: &'static [&'static str],
    pub birth_words: &'static [&'static str],
    pub short_date_words: &'static [&'static str],
    pub uk_postcode_words: &'static [&'static str],
    pub plate_words_before: &'static [&'static str],
    pub plate_words_after: &'static [&'static str],
    pub zip_words: &'static [&'static str],
    pub occupation_heads: &'static [&'static str],
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LexiconFile {
    street_before: Vec<String>,
    street_after: Vec<String>,
    street_after_lower: Vec<String>,
    street_endings: Vec<String>,
    unit_words: Vec<String>,
    line_unit_words: Vec<String>,
    particles: Vec<String>,
    stopwords: Vec<String>,
    not_street_heads: Vec<String>,
    not_places: Vec<String>,
    place_words: Vec<String>,
    address_context: Vec<String>,
    weekdays: Vec<String>,
    nrp_words: Vec<String>,
    in_plate_states: Vec<String>,
    month_names: Vec<String>,
    weekday_names: Vec<String>,
    birth_words: Vec<String>,
    short_date_words: Vec<String>,
    uk_postcode_words: Vec<String>,
    plate_words_before: Vec<String>,
    plate_words_after: Vec<String>,
    zip_words: Vec<String>,
    occupation_heads: Vec<String>,
}

fn leak(v: Vec<String>) -> &'static [&'static str] {
    let v: Vec<&'static str> = v
        .into_iter()
        .map(|s| &*Box::leak(s.into_boxed_str()))
        .collect();
    Box::leak(v.into_boxed_slice())
}

/// The embedded lexicon (a malformed file is a build defect the unit tests catch).
pub(crate) fn lexicon() -> &'static Lexicon {
    static LEX: OnceLock<Lexicon> = OnceLock::new();
    LEX.get_or_init(|| {
        let f: LexiconFile = toml::from_str(include_str!("../data/quasi.toml"))
            .unwrap_or_else(|e| panic!("data/quasi.toml: {e}"));
        Lexicon {
            street_before: leak(f.street_before),
            street_after: leak(f.street_after),
            street_after_lower: leak(f.street_after_lower),
            street_endings: leak(f.street_endings),
            unit_words: leak(f.unit_words),
            line_unit_words: leak(f.line_unit_words),
            particles: leak(f.particles),
            stopwords: leak(f.stopwords),
            not_street_heads: leak(f.not_street_heads),
            not_places: leak(f.not_places),
            place_words: leak(f.place_words),
            address_context: leak(f.address_context),
            weekdays: leak(f.weekdays),
            nrp_words: leak(f.nrp_words),
            in_plate_states: leak(f.in_plate_states),
            month_names: leak(f.month_names),
            weekday_names: leak(f.weekday_names),
            birth_words: leak(f.birth_words),
            short_date_words: leak(f.short_date_words),
            uk_postcode_words: leak(f.uk_postcode_words),
            plate_words_before: leak(f.plate_words_before),
            plate_words_after: leak(f.plate_words_after),
            zip_words: leak(f.zip_words),
            occupation_heads: leak(f.occupation_heads),
        }
    })
}

/// FNV-1a: the word sets are probed with short keys on every candidate, where SipHash's
/// DoS resistance buys nothing (the keys are fixed lexicon words).
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type WordSet = HashSet<&'static str, BuildHasherDefault<Fnv>>;

/// Finds STREET_ADDRESS, DATE_TIME, AGE, postcodes, vehicle registrations, TITLE and NRP.
pub struct QuasiRecognizer {
    occupations: WordSet,
    pre: WordSet,
    post_en: WordSet,
    post_lc: WordSet,
    particles: WordSet,
    stop: WordSet,
    not_head: WordSet,
    not_place: WordSet,
    // addresses
    re_unit: Regex,
    re_sep: Regex,
    re_postcode: Regex,
    re_region: Regex,
    re_place: Regex,
    re_place_lc: Regex,
    re_military: Regex,
    re_ship: Regex,
    re_pobox_end: Regex,
    // dates
    re_iso: Regex,
    re_numdate: Regex,
    re_monthyear_num: Regex,
    re_daymonth_num: Regex,
    re_day_month_name: Regex,
    re_month_before: Regex,
    re_month_first: Regex,
    re_time_after: Regex,
    // ages
    re_age_after: Regex,
    re_age_before: Regex,
    // postcodes, plates
    re_zip_ctx: Regex,
    re_uk_postcode: Regex,
    re_uk_plate: Regex,
    re_uk_plate_prefix: Regex,
    re_tr_plate: Regex,
    re_in_plate: Regex,
    re_ng_plate: Regex,
    re_de_plate: Regex,
    /// Weekday and NRP words, lower-case, looked up per capitalized word.
    words: HashMap<&'static str, WordKind, BuildHasherDefault<Fnv>>,
    /// Bit set over (length, first letter, last letter) of `words`, see `maybe_word`.
    word_filter: Vec<u64>,
}

#[derive(Clone, Copy, PartialEq)]
enum WordKind {
    Weekday,
    Nrp,
}

impl Default for QuasiRecognizer {
    fn default() -> Self {
        Self::new()
    }
}

fn re(p: &str) -> Regex {
    // Patterns are constants of this file; a failure is a programming error caught by tests.
    Regex::new(p).unwrap_or_else(|e| panic!("quasi regex {p}: {e}"))
}

impl QuasiRecognizer {
    pub fn new() -> Self {
        let lex = lexicon();
        let months = lex.month_names.join("|");
        let weekday_names = lex.weekday_names.join("|");
        let capw = r"\p{Lu}[\p{L}\p{M}'’\-]*";
        let parts = "(?:de|du|des|la|le|del|della|di|da|do|dos|das|van|von|der|den|nad|pod|u|am|an|im|sur|en|y)";
        let mut words = HashMap::default();
        for w in lex.weekdays {
            words.insert(*w, WordKind::Weekday);
        }
        for w in lex.nrp_words {
            words.insert(*w, WordKind::Nrp);
        }
        let mut word_filter = vec![0u64; (17usize * 26 * 26).div_ceil(64)];
        for w in words.keys() {
            let wb = w.as_bytes();
            if let (Some(&f), Some(&l)) = (wb.first(), wb.last()) {
                if wb.len() < 17 && f.is_ascii_lowercase() && l.is_ascii_lowercase() {
                    let k = (wb.len() * 26 + usize::from(f - b'a')) * 26 + usize::from(l - b'a');
                    word_filter[k / 64] |= 1u64 << (k % 64);
                }
            }
        }
        QuasiRecognizer {
            pre: lex.street_before.iter().copied().collect(),
            post_en: lex.street_after.iter().copied().collect(),
            post_lc: lex.street_after_lower.iter().copied().collect(),
            particles: lex.particles.iter().copied().collect(),
            stop: lex.stopwords.iter().copied().collect(),
            not_head: lex.not_street_heads.iter().copied().collect(),
            not_place: lex.not_places.iter().copied().collect(),
            occupations: lex.occupation_heads.iter().copied().collect(),
            re_unit: re(
                r"(?i)\A\.?[ \t]*,?[ \t]*(?:\r?\n[ \t>?]*)?(?:apt\.?|apartment|suite|ste\.?|unit|flat|floor|fl\.|room|rm\.?|bldg\.?|building|#)[ \t]*#?\d{1,5}[a-z]?\b",
            ),
            re_sep: re(
                r"\A(?:[ \t]*,[ \t]*(?:\r?\n[ \t>?]*)?|[ \t]*\r?\n[ \t>?]*(?:,[ \t]*)?|[ \t]+)",
            ),
            re_postcode: re(
                r"\A(?:\d{4,5}(?:-\d{4})?|\d{3} \d{2}|\d{2}-\d{3}|[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}|[A-Z]\d[A-Z] ?\d[A-Z]\d)",
            ),
            re_region: re(r"\A(?:[A-Z]{2,3}|\d{1,2}|nan|[a-z]{2})"),
            re_place: re(&format!(
                r"\A{capw}(?:[ \t]+(?:{parts}[ \t]+)*{capw}){{0,3}}(?:[ \t]+\([^()\n]{{1,30}}\))?"
            )),
            re_place_lc: re(r"\A\p{Ll}[\p{L}\p{M}'’\-]*(?:[ \t]+\p{Ll}[\p{L}\p{M}'’\-]*){0,2}"),
            re_military: re(
                r"(?i)\A(?:PSC|Unit|CMR)[ \t]+\d{3,5},?[ \t]+Box[ \t]+\d{3,5}[ \t]*,?[ \t]*\r?\n?[ \t]*[ADF]PO[ \t]+A[AEP][ \t]+\d{5}\b",
            ),
            re_ship: re(
                r"(?i)(?:USNS|USNV|USS|USCGC)[ \t]+[\p{L}\p{M}'’\-]+(?:[ \t]+[\p{L}\p{M}'’\-]+)?[ \t]*,?[ \t]*\r?\n?[ \t]*FPO[ \t]+A[AEP][ \t]+\z",
            ),
            re_pobox_end: re(
                r"(?i)(?:P\.?[ \t]?O\.?[ \t]*Box|Post[ \t]?box|Postfach|Apartado|Caixa[ \t]+Postal|Case[ \t]+postale)[ \t]+\z",
            ),
            re_iso: re(
                r"\A\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?",
            ),
            re_numdate: re(r"\A(\d{1,4})([/.\-])(\d{1,2})([/.\-])(\d{4}|\d{2})"),
            re_monthyear_num: re(r"\A(\d{1,2})[/.](\d{4})"),
            re_daymonth_num: re(r"\A(\d{1,2})/(\d{1,2})"),
            re_day_month_name: re(&format!(
                r"\A(\d{{1,2}})(?:st|nd|rd|th)?(?:[ \t]+of)?[ \t]+(?:{months})\b\.?(?:,?[ \t]+(\d{{4}}))?"
            )),
            re_month_before: re(&format!(
                r"(?:(?:{weekday_names})\.?,?[ \t]+(?:the[ \t]+)?)?(?:{months})\.?,?[ \t]+\z"
            )),
            re_month_first: re(r"\A(\d{1,4})(?:st|nd|rd|th)?\b(?:,?[ \t]+(\d{4})\b)?"),
            re_time_after: re(
                r"\A(?:,?[ \t]+(?:at[ \t]+)?|T)(?:[01]?\d|2[0-3])[:.][0-5]\d(?::[0-5]\d)?(?:[ \t]*(?:[AaPp]\.?[Mm]\.?))?\b",
            ),
            re_age_after: re(
                r"(?i)\A(\d{1,3})(?:(?:[ \t]*-[ \t]*|[ \t]+)(?:years?|yrs?|yo)(?:[ \t]*-[ \t]*|[ \t]+)old\b|[ \t]*(?:y/o|y\.o\.|yo|yrs? old)(?:\b|[ \t.,]|\z)|-year-old\b)",
            ),
            re_age_before: re(
                r"(?i)(?:(aged|age[ \t]*(?:of|is|was|:|=|-)?|ages)|(turned|turns|turn|turning)|(i'?m|i[ \t]+am|im)|(when[ \t]+(?:he|she|i|they)[ \t]+was|(?:he|she)[ \t]+is))[ \t]+\z",
            ),
            re_zip_ctx: re(
                r"(?i)(?:(zip(?:[ \t]?code)?|postal[ \t]?code|post[ \t]?code|postcode|código[ \t]+postal|code[ \t]+postal|cep)|(plz|postleitzahl))[ \t]*(?:is|:|#|=|-|\.)?[ \t]*\z",
            ),
            re_uk_postcode: re(
                r"\A(?:[A-PR-UWYZ](?:\d[A-HJKPSTUW\d]?|[A-HK-Y]\d[ABEHMNPRVWXY\d]?))( ?)\d[ABD-HJLNP-UW-Z]{2}",
            ),
            re_uk_plate: re(r"(?i)\A([A-HJ-PR-Y]{2})(\d{2})( ?)([A-HJ-PR-Z]{3})"),
            re_uk_plate_prefix: re(r"\A[A-HJ-NP-Y]\d{1,3} ?[A-HJ-PR-Y]{3}"),
            re_tr_plate: re(r"(?i)\A(0[1-9]|[1-7]\d|8[01])( ?)([A-Z]{1,3})( ?)(\d{2,4})"),
            re_in_plate: re(r"\A([A-Z]{2})[ -]?(\d{1,2})[ -]?([A-Z]{1,3})[ -]?(\d{4})"),
            re_ng_plate: re(r"\A[A-Z]{3}([- ]?)\d{3}[A-Z]{2}"),
            re_de_plate: re(r"\A[A-ZÄÖÜ]{1,3}-[A-Z]{1,2}[ -]?[1-9]\d{0,3}[EH]?"),
            words,
            word_filter,
        }
    }
}

impl Recognizer for QuasiRecognizer {
    fn name(&self) -> &'static str {
        DETECTOR
    }

    fn find(&self, text: &str, out: &mut Vec<Candidate>) {
        let first = out.len();
        self.digit_pass(text, out);
        let dates: Vec<(usize, usize)> = out[first..]
            .iter()
            .filter(|c| c.label == "DATE_TIME")
            .map(|c| (c.start, c.end))
            .collect();
        self.word_pass(text, &dates, out);
        self.title_pass(text, out);
        self.job_title_pass(text, out);
    }
}

// ---------------------------------------------------------------------------------------------
// Small helpers (all work on char boundaries; none index into the middle of a char).
// ---------------------------------------------------------------------------------------------

fn char_before(text: &str, i: usize) -> Option<char> {
    text.get(..i).and_then(|s| s.chars().next_back())
}

fn char_at(text: &str, i: usize) -> Option<char> {
    text.get(i..).and_then(|s| s.chars().next())
}

fn alnum_before(text: &str, i: usize) -> bool {
    char_before(text, i).is_some_and(|c| c.is_alphanumeric())
}

fn alnum_at(text: &str, i: usize) -> bool {
    char_at(text, i).is_some_and(|c| c.is_alphanumeric())
}

fn lower_before(text: &str, i: usize, radius: usize) -> String {
    let b = floor_boundary(text, i.saturating_sub(radius));
    text[b..i].to_lowercase()
}

fn contains_any(hay: &str, words: &[&str]) -> bool {
    words.iter().any(|w| hay.contains(w))
}

fn digits_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn parse_u32(s: &str) -> u32 {
    s.bytes().take(9).fold(0u32, |a, d| {
        a.saturating_mul(10)
            .saturating_add(u32::from(d.wrapping_sub(b'0') % 10))
    })
}

fn is_title(w: &str) -> bool {
    w.chars().next().is_some_and(|c| c.is_uppercase())
}

fn has_upper(w: &str) -> bool {
    w.chars().any(|c| c.is_uppercase())
}

/// A word token: letters with inner `-`, `'`, `’`; returns its end (exclusive), without a dot.
fn word_at(text: &str, i: usize) -> Option<usize> {
    let mut it = text.get(i..)?.char_indices();
    let (_, c0) = it.next()?;
    if !c0.is_alphabetic() {
        return None;
    }
    let mut end = i + c0.len_utf8();
    for (off, c) in it {
        if c.is_alphabetic() || matches!(c, '-' | '\'' | '’') || is_mark(c) {
            end = i + off + c.len_utf8();
        } else {
            break;
        }
    }
    // Do not end on a joiner ("Smith-").
    while end > i && matches!(text.as_bytes()[end - 1], b'-' | b'\'') {
        end -= 1;
    }
    Some(end)
}

fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF)
}

/// A house number token at `i`: 1-5 digits and an optional letter ("12a"); returns its end.
fn house_num_at(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let e = digits_end(b, i);
    if e == i || e - i > 5 {
        return None;
    }
    let mut end = e;
    if end < b.len() && b[end].is_ascii_alphabetic() && !alnum_at(text, end + 1) {
        end += 1;
    }
    if alnum_at(text, end) {
        return None;
    }
    Some(end)
}

/// ASCII case-insensitive search of `needle` in `b[from..to]`, without allocating.
fn window_has_ci(b: &[u8], from: usize, to: usize, needle: &[u8]) -> bool {
    let to = to.min(b.len());
    from < to
        && b[from..to]
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Like [`window_has_ci`] for several needles in one pass.
fn window_has_any_ci(b: &[u8], from: usize, to: usize, needles: &[&str]) -> bool {
    let to = to.min(b.len());
    (from..to).any(|i| {
        let c = b[i] | 0x20;
        needles.iter().map(|n| n.as_bytes()).any(|n| {
            n.first() == Some(&c) && i + n.len() <= to && b[i..i + n.len()].eq_ignore_ascii_case(n)
        })
    })
}

/// Whether the digit run at `p..q` can be part of a letter-led plate or postcode: upper-case
/// letters glued before it ("AB51", "SW1A"), or before one separator ("APP-456CV"), or the two
/// lower-case letters of a current UK plate ("aa02 aaa").
fn plate_letters_before(b: &[u8], p: usize, q: usize) -> bool {
    if p == 0 {
        return false;
    }
    let mut k = p;
    while k > 0 && p - k < 4 && b[k - 1].is_ascii_alphabetic() {
        k -= 1;
    }
    if k < p {
        let run = &b[k..p];
        return run.iter().all(u8::is_ascii_uppercase) || (run.len() == 2 && q - p == 2);
    }
    if matches!(b[p - 1], b' ' | b'-') && p >= 2 {
        let mut j = p - 1;
        while j > 0 && (p - 1) - j < 4 && b[j - 1].is_ascii_uppercase() {
            j -= 1;
        }
        return j < p - 1
            && (j == 0
                || !b[j - 1].is_ascii_alphanumeric()
                || b[j - 1] == b'-'
                || b[j - 1] >= 0x80);
    }
    false
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

struct Word {
    start: usize,
    end: usize, // including an abbreviation dot when it belongs to the word
    lower: String,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum StreetKind {
    Typed,
    Untyped,
    LowerTyped,
}

impl QuasiRecognizer {
    /// Cheap pre-check before hashing: is there a lexicon word of this length with these first
    /// and last letters (plural "-s" included)?
    fn maybe_word(&self, w: &[u8]) -> bool {
        let (Some(&f), Some(&l)) = (w.first(), w.last()) else {
            return false;
        };
        let bit = |len: usize, f: u8, l: u8| -> Option<usize> {
            let (f, l) = (
                f.to_ascii_lowercase().wrapping_sub(b'a'),
                l.to_ascii_lowercase().wrapping_sub(b'a'),
            );
            (len < 17 && f < 26 && l < 26)
                .then(|| (len * 26 + usize::from(f)) * 26 + usize::from(l))
        };
        let probe = |k: Option<usize>| {
            k.is_some_and(|k| self.word_filter[k / 64] & (1u64 << (k % 64)) != 0)
        };
        probe(bit(w.len(), f, l))
            || (l | 0x20 == b's' && w.len() > 1 && probe(bit(w.len() - 1, f, w[w.len() - 2])))
    }

    /// Looks up an ASCII word, case-insensitively, allowing a plural "-s" for NRP words.
    fn lookup_word(&self, w: &[u8]) -> Option<WordKind> {
        let mut buf = [0u8; 16];
        if w.len() > buf.len() {
            return None;
        }
        for (d, c) in buf.iter_mut().zip(w) {
            *d = c.to_ascii_lowercase();
        }
        let lw = std::str::from_utf8(&buf[..w.len()]).ok()?;
        if let Some(k) = self.words.get(lw) {
            return Some(*k);
        }
        let stem = lw.strip_suffix('s')?;
        match self.words.get(stem) {
            Some(WordKind::Nrp) => Some(WordKind::Nrp),
            _ => None,
        }
    }

    // -----------------------------------------------------------------------------------------
    // Digit-driven pass: dates, ages, postcodes, plates, addresses.
    // -----------------------------------------------------------------------------------------

    fn digit_pass(&self, text: &str, out: &mut Vec<Candidate>) {
        let b = text.as_bytes();
        let mut i = 0;
        let mut covered = 0usize;
        while i < b.len() {
            // Cheap scan to the next ASCII digit.
            match find_in_range(b, i, b'0', b'9') {
                Some(at) => i = at,
                None => break,
            }
            let p = i;
            let q = digits_end(b, p);
            i = q;
            if p < covered {
                continue;
            }
            if let Some(end) = self.at_digits(text, p, q, out) {
                covered = end;
                i = i.max(end);
            }
        }
    }

    /// Tries every numeric recognizer at the digit run `p..q`; returns the end of what it found.
    fn at_digits(&self, text: &str, p: usize, q: usize, out: &mut Vec<Candidate>) -> Option<usize> {
        let b = text.as_bytes();
        let prev = char_before(text, p);
        let glued_letter = prev.is_some_and(|c| c.is_alphabetic());
        // Tokens that start with letters: plates and UK postcodes ("AB51 ABC", "SW1A 1AA").
        if plate_letters_before(b, p, q) {
            if let Some(e) = self.letter_led(text, p, out) {
                return Some(e);
            }
        }
        if glued_letter || prev.is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        let money = prev.is_some_and(|c| matches!(c, '$' | '€' | '£' | '¥' | '₹'))
            || (prev == Some(' ') && matches!(char_before(text, p - 1), Some('$' | '€' | '£')));
        if money {
            return None;
        }
        let before_ci = |w: &[u8]| p >= w.len() && b[p - w.len()..p].eq_ignore_ascii_case(w);
        if before_ci(b"psc ")
            || before_ci(b"unit ")
            || before_ci(b"cmr ")
            || (q - p == 5 && window_has_ci(b, p.saturating_sub(8), p, b"po a"))
        {
            if let Some(e) = self.military(text, p, q, out) {
                return Some(e);
            }
        }
        if let Some(e) = self.date(text, p, q, out) {
            return Some(e);
        }
        if let Some(e) = self.age(text, p, q, out) {
            return Some(e);
        }
        let w0 = p.saturating_sub(28);
        if window_has_any_ci(b, w0, p, lexicon().zip_words) {
            if let Some(e) = self.zip_with_context(text, p, q, out) {
                return Some(e);
            }
        }
        if q - p == 2 && q + 1 < b.len() && (b[q] == b' ' || b[q].is_ascii_alphabetic()) {
            if let Some(e) = self.plate_digit_led(text, p, out) {
                return Some(e);
            }
        }
        if let Some(e) = self.address(text, p, out) {
            return Some(e);
        }
        if let Some(e) = self.bare_year(text, p, q, out) {
            return Some(e);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structure_words_are_well_formed() {
        let l = lexicon();
        for (name, list) in [
            ("street_before", l.street_before),
            ("street_after", l.street_after),
            ("weekdays", l.weekdays),
            ("nrp_words", l.nrp_words),
            ("birth_words", l.birth_words),
            ("short_date_words", l.short_date_words),
            ("uk_postcode_words", l.uk_postcode_words),
            ("plate_words_before", l.plate_words_before),
            ("plate_words_after", l.plate_words_after),
            ("zip_words", l.zip_words),
            ("address_context", l.address_context),
            ("occupation_heads", l.occupation_heads),
        ] {
            assert!(!list.is_empty(), "{name} is empty");
            for w in list {
                // Looked up in lower-cased text (or by lower-cased word).
                assert_eq!(*w, w.to_lowercase(), "{name}: {w:?} not lower case");
            }
        }
        assert_eq!(l.month_names.len(), 48);
    }

    fn find(text: &str) -> Vec<(String, &'static str, f32)> {
        let r = QuasiRecognizer::new();
        let mut out = Vec::new();
        r.find(text, &mut out);
        out.into_iter()
            .filter(|c| c.score >= 0.5)
            .map(|c| (text[c.start..c.end].to_string(), c.label, c.score))
            .collect()
    }

    fn has(text: &str, value: &str, label: &str) -> bool {
        find(text).iter().any(|(v, l, _)| v == value && *l == label)
    }

    fn none_of(text: &str, label: &str) -> bool {
        !find(text).iter().any(|(_, l, _)| *l == label)
    }

    #[test]
    fn addresses_english_order() {
        // An option label before a real address does not hide it (the label is not a street).
        assert!(has(
            "Which office?\nA. 12 Main Street\nB. 400 Oak Avenue",
            "400 Oak Avenue",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Jacob lives on 90 Whitchurch Road street.",
            "90 Whitchurch Road",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Meet me at 224 4966 Bond Street\n Suite 413\n Warwick\n United States",
            "224 4966 Bond Street\n Suite 413\n Warwick\n United States",
            "STREET_ADDRESS"
        ));
        assert!(
            has(
                "Send it to 1600 Pennsylvania Avenue NW, Washington, DC 20500.",
                "1600 Pennsylvania Avenue",
                "STREET_ADDRESS"
            ) || find("Send it to 1600 Pennsylvania Avenue NW, Washington, DC 20500.")
                .iter()
                .any(
                    |(v, l, _)| *l == "STREET_ADDRESS" && v.starts_with("1600 Pennsylvania Avenue")
                )
        );
        assert!(has(
            "Please return to 19902 Dobrovského 1394 Apt. 066\nSt Georges, QC 54256 in case",
            "19902 Dobrovského 1394 Apt. 066\nSt Georges, QC 54256",
            "STREET_ADDRESS"
        ));
    }

    #[test]
    fn addresses_other_locales() {
        assert!(has(
            "Timotea lives on Via dei Fiorentini 17 street.",
            "Via dei Fiorentini 17",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Pedestrians must enter on Sludevej 13 St. the first",
            "Sludevej 13",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "address: 3482 Via Franscini 71 Suite 838\n   Tujetsch\n    nan\n    7188",
            "3482 Via Franscini 71 Suite 838\n   Tujetsch\n    nan\n    7188",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Wir wohnen in der Hauptstraße 5, 10115 Berlin.",
            "Hauptstraße 5, 10115 Berlin",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Il mio indirizzo: 29 Rue de Tanger, Paris",
            "29 Rue de Tanger, Paris",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "at ul. Chrzanowska 61, 02-495 Warszawa",
            "ul. Chrzanowska 61, 02-495 Warszawa",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "The address is PSC 0413, Box 8144\nAPO AA 42323",
            "PSC 0413, Box 8144\nAPO AA 42323",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "I'll meet you at USS Mahler\nFPO AA 70489 after",
            "USS Mahler\nFPO AA 70489",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "The bus station is on P.O. Box 104",
            "P.O. Box 104",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "it is the corner of Dalbraut 99 and Frederikke Coves",
            "the corner of Dalbraut 99 and Frederikke Coves",
            "STREET_ADDRESS"
        ));
        assert!(has(
            "Tosh Olsen lives at 172 Maneeži 75, Saareküla",
            "172 Maneeži 75, Saareküla",
            "STREET_ADDRESS"
        ));
    }

    #[test]
    fn address_lookalikes() {
        for t in [
            "See Table 2 and Figure 3 for details.",
            "We upgraded to Windows 10 Pro 2 weeks ago.",
            "we need 3 more road trips this year",
            "I walked 5 blocks down the street.",
            "The price is $1,975 for 12 Wisdom Teeth Removal kits.",
            "Call me at +44 20 7946 0958 tomorrow.",
            "Version 2.3.1 was released in Python 3 Cookbook.",
            "In 2019 Apple sold 300 Million phones.",
            "Capitalized Words Like Wisdom 12 appear here.",
            "What force is needed?\nA. 200 N\nB. 400 N\nC. 800 N\nD. 1600 N",
            "Pick one:\n  B. 12 W\n  C. 40 E",
        ] {
            assert!(none_of(t, "STREET_ADDRESS"), "{t}: {:?}", find(t));
        }
    }

    #[test]
    fn dates() {
        assert!(has(
            "She was born on 10/5/1971. Her",
            "10/5/1971",
            "DATE_TIME"
        ));
        assert!(has(
            "Date: 1978-04-13 12:20:39\nName",
            "1978-04-13 12:20:39",
            "DATE_TIME"
        ));
        assert!(has(
            "Today is 2024-03-15T14:30:00-05:00 or not?",
            "2024-03-15T14:30:00-05:00",
            "DATE_TIME"
        ));
        assert!(has("Today is 21.5.2021", "21.5.2021", "DATE_TIME"));
        assert!(has("Today is 5/2021", "5/2021", "DATE_TIME"));
        assert!(has("Today is 5/21", "5/21", "DATE_TIME"));
        assert!(has(
            "It happened on March 3rd, 1987 at 10:30 am.",
            "March 3rd, 1987 at 10:30 am",
            "DATE_TIME"
        ));
        assert!(has(
            "It happened on 3 March 1987.",
            "3 March 1987",
            "DATE_TIME"
        ));
        assert!(has(
            "Due Monday, June 5, 2023.",
            "Monday, June 5, 2023",
            "DATE_TIME"
        ));
        assert!(has("We'll meet Thursday at noon", "Thursday", "DATE_TIME"));
        assert!(has(
            "Orchestra was founded in 1973. Since",
            "1973",
            "DATE_TIME"
        ));
        let dob = find("Date of birth: 12/31/1999");
        assert!(dob
            .iter()
            .any(|(v, l, s)| v == "12/31/1999" && *l == "DATE_TIME" && *s >= 0.9));
    }

    #[test]
    fn date_lookalikes() {
        for t in [
            "Today is2024-06-05T09:15:30.500-07:00",
            "Today is5/21",
            "Upgrade to v1.2.3 or 1.2.3.4 now",
            "Add 1/2 cup of sugar",
            "The IBAN AT61 1904 3002 3457 3201 is mine",
            "It costs $1999 and weighs 2000 grams",
            "Call 555-12-2020 please",
            "Version 13.45.2021 is out",
            "We processed 2000 records",
        ] {
            assert!(none_of(t, "DATE_TIME"), "{t}: {:?}", find(t));
        }
    }

    #[test]
    fn ages() {
        assert!(has("He just turned 46 years old", "46", "AGE"));
        assert!(has("Patient is a 62-year-old male", "62", "AGE"));
        assert!(has("father retired at the age of 45", "45", "AGE"));
        assert!(has("and i'm 23 y/o.", "23", "AGE"));
        assert!(has("aged 42, she moved", "42", "AGE"));
        assert!(has("I am 42.", "42", "AGE"));
        assert!(none_of("I'm 5 minutes away", "AGE"));
        assert!(none_of("I am 300 miles away and 12 people came", "AGE"));
        assert!(none_of("The 42 files were copied", "AGE"));
    }

    #[test]
    fn postcodes() {
        assert!(has(
            "My address is SW1A 1AA in London",
            "SW1A 1AA",
            "UK_POSTCODE"
        ));
        assert!(has("W1A 1HQ", "W1A 1HQ", "UK_POSTCODE"));
        assert!(has("my zip code is 35350", "35350", "ZIP_CODE"));
        assert!(has("ZIP: 94105-1234", "94105-1234", "ZIP_CODE"));
        assert!(has("PLZ 80331", "80331", "DE_PLZ"));
        for t in ["QA1 1AA", "VA1 1AA", "M1 1CA", "1A1 1AA", "ABCM11AADEF"] {
            assert!(none_of(t, "UK_POSTCODE"), "{t}: {:?}", find(t));
        }
        assert!(none_of("PLZ 00000", "DE_PLZ"));
        assert!(none_of("The order 35350 shipped", "ZIP_CODE"));
    }

    #[test]
    fn plates() {
        assert!(has(
            "Vehicles AB51 ABC and BD62XYZ were seen",
            "AB51 ABC",
            "UK_VEHICLE_REGISTRATION"
        ));
        assert!(has(
            "Vehicles AB51 ABC and BD62XYZ were seen",
            "BD62XYZ",
            "UK_VEHICLE_REGISTRATION"
        ));
        assert!(has(
            "License plate 34 ABC 1234",
            "34 ABC 1234",
            "TR_LICENSE_PLATE"
        ));
        assert!(has("34 abc 1234", "34 abc 1234", "TR_LICENSE_PLATE"));
        if crate::words::CommonWords::system().is_some_and(|w| w.has_list()) {
            // Prose between two numbers, not a plate.
            assert!(none_of(
                "What is the greatest common factor of 42 and 56?",
                "TR_LICENSE_PLATE"
            ));
            assert!(none_of("B. Between 10 and 20", "TR_LICENSE_PLATE"));
        }
        assert!(has(
            "Bike's registration number is OD02BA2341 with",
            "OD02BA2341",
            "IN_VEHICLE_REGISTRATION"
        ));
        assert!(has(
            "Plates: APP-456CV and KJA-999PZ",
            "KJA-999PZ",
            "NG_VEHICLE_REGISTRATION"
        ));
        assert!(has("B-AB-1234", "B-AB-1234", "DE_KFZ"));
        for t in [
            "AQ51 ABC",
            "AB49 ABC",
            "AB51 AIB",
            "I123 BCD",
            "ABCD-123EF",
            "AB-12CD",
            "123-456AB",
            "B 1234",
            "BXYZ AB 1234",
            "at 10 AM 2020",
        ] {
            let f = find(t);
            assert!(
                !f.iter().any(|(_, l, _)| l.contains("VEHICLE")
                    || l.contains("PLATE")
                    || *l == "DE_KFZ"),
                "{t}: {f:?}"
            );
        }
    }

    #[test]
    fn titles_and_nrp() {
        assert!(has("Hello, this is Dr. Kyle Kuefer.", "Dr.", "TITLE"));
        assert!(has("correct it to Mrs. Baker", "Mrs.", "TITLE"));
        assert!(none_of("1737 Cheriton Dr. Reuquén", "TITLE"));
        assert!(none_of("Mr. is an abbreviation", "TITLE"));
        assert!(has(
            "I am cambodian but I live in the UK.",
            "cambodian",
            "NRP"
        ));
        assert!(has("We are proud saudis", "saudis", "NRP"));
        assert!(has(
            "the Italian government formally began",
            "Italian",
            "NRP"
        ));
        assert!(none_of("The text is written in English.", "NRP"));
        assert!(none_of("A jeweler and a mundane thing", "NRP"));
    }

    #[test]
    fn never_panics_on_odd_utf8() {
        let r = QuasiRecognizer::new();
        let mut out = Vec::new();
        for t in [
            "",
            "1",
            "é1",
            "1é",
            "ΠΑΦΟΣ 12",
            "12 Μεγάλη Άμμος 184, ΠΑΦΟΣ",
            "Straße 5\u{301}",
            "\u{10FFFF}9 a",
            "9\u{0300}9",
            "PSC 12é",
            "Mr.",
            "2024-",
            "March 3",
            "💡12 Main St💡",
        ] {
            r.find(t, &mut out);
        }
        for c in &out {
            assert!(c.start <= c.end);
        }
        // Every suffix of a mixed-script address block, cut at each char boundary.
        let block = "Λεωφόρος Συγγρού 119 Nino Point\n Apt. 658\n ΑΓΙΟΣ ∆ΟΜΕΤΙΟΣ\n Cyprus (Greek) 25572, İ corner of 5 Straße 3. 12/5/2020 Mr. X aged 4 SW1A 1AA";
        for (i, _) in block.char_indices() {
            out.clear();
            r.find(&block[i..], &mut out);
            for c in &out {
                assert!(
                    block[i..].is_char_boundary(c.start)
                        && block[i..].is_char_boundary(c.end)
                        && c.start < c.end
                );
            }
        }
    }

    /// A job title where the text says someone holds it; an occupation word in passing is not.
    #[test]
    fn job_titles_where_a_person_holds_them() {
        let t = "I used to work for Usaa Group as Rolling machine operator, but quit.";
        assert!(has(t, "Rolling machine operator", "TITLE"));
        let t = "Hijacinta Godina, the Technical writer, said: \"fine\"";
        assert!(has(t, "Technical writer", "TITLE"));
        assert!(has(
            "Honestly, I'm a nurse at the clinic.",
            "nurse",
            "TITLE"
        ));
        let t = "Erik Baader  Court, municipal, and license clerk  Personal Info: Phone: 358 0594";
        assert!(has(t, "Court, municipal, and license clerk", "TITLE"));
        assert!(has(
            "Jane Roe\nSenior Accountant\nAcme Ltd",
            "Senior Accountant",
            "TITLE"
        ));
        assert!(none_of("The engineer fixed the build.", "TITLE"));
        assert!(none_of("Tools such as a project manager help.", "TITLE"));
        assert!(none_of("I am at home today.", "TITLE"));
        // A segment that only ends in an occupation word is no title on its own.
        assert!(none_of("Call the 24 7 manager  today", "TITLE"));
    }
}
