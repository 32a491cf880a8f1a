//! Validated structured-identifier recognizer ("rules"): cards, IBANs, national IDs, network
//! addresses, emails, phones, crypto addresses, credential URLs and dates of birth.
//!
//! Cost model: prose without identifiers is the common case, so work is gated behind cheap byte
//! scans. Three triggers run over the text: `memchr3(':' '-' '.')` for IP/MAC addresses, `memchr('@')`
//! for emails and credential URLs, and a digit scan that groups nearby alphanumeric runs into a
//! small *cluster* ("AL47 2121 1009 ...", "(415) 555-0132"). Only inside a cluster do we build
//! compact windows and run validators; context words are read only for candidates, in a bounded
//! window. Scores: >= 0.9 checksum-validated, 0.5-0.8 format + context; anything below 0.5 is
//! emitted for explanation only and is meant to be dropped by the pipeline's 0.5 threshold.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::checksum as ck;
use super::types::push_rule as push;
use super::types::{Candidate, Recognizer, Tier};

const DET: &str = "rules";
/// Longest compact window we assemble (IBAN max is 34; bech32 addresses are one group).
const MAX_COMPACT: usize = 64;
const MAX_GROUPS: usize = 24;

/// Finds validated identifiers; see the module doc for the scan strategy.
pub struct IdRecognizer {
    /// "swift"/"bic" in the casings people write; memmem is far faster than a case-insensitive
    /// automaton over the whole text.
    swift_ctx: Vec<memchr::memmem::Finder<'static>>,
}

impl Default for IdRecognizer {
    fn default() -> Self {
        Self::new()
    }
}

impl IdRecognizer {
    pub fn new() -> Self {
        let swift_ctx = ["swift", "SWIFT", "Swift", "bic", "BIC", "Bic"]
            .iter()
            .map(|w| memchr::memmem::Finder::new(w.as_bytes()))
            .collect();
        IdRecognizer { swift_ctx }
    }
}

impl Recognizer for IdRecognizer {
    fn name(&self) -> &'static str {
        DET
    }

    fn find(&self, text: &str, out: &mut Vec<Candidate>) {
        let mut covered: Vec<(usize, usize)> = Vec::new();
        scan_net(text, out, &mut covered);
        scan_at(text, out, &mut covered);
        covered.sort_unstable();
        scan_clusters(text, out, &covered);
        self.scan_swift(text, out);
        alone_value(text, out);
    }
}

// -------------------------------------------------------------------------------------------
// Document-number formats (data/id_formats.toml)
// -------------------------------------------------------------------------------------------

/// One passport or licence format: its shape, the context word that admits it, and the
/// stricter shape that is enough when the value stands alone.
struct DocFormat {
    label: &'static str,
    context: u32,
    shape: regex::Regex,
    alone: Option<regex::Regex>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DocFormatsFile {
    format: Vec<DocFormatSpec>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DocFormatSpec {
    label: String,
    context: String,
    shape: String,
    alone: Option<String>,
}

/// The embedded formats (a malformed file is a build defect the unit tests catch).
fn doc_formats() -> &'static [DocFormat] {
    static F: OnceLock<Vec<DocFormat>> = OnceLock::new();
    F.get_or_init(|| {
        let f: DocFormatsFile = toml::from_str(include_str!("data/id_formats.toml"))
            .unwrap_or_else(|e| panic!("data/id_formats.toml: {e}"));
        let whole = |shape: &str| {
            regex::Regex::new(&format!("^(?:{shape})$"))
                .unwrap_or_else(|e| panic!("data/id_formats.toml: {shape}: {e}"))
        };
        f.format
            .into_iter()
            .map(|d| DocFormat {
                context: match d.context.as_str() {
                    "passport" => C_PASSPORT,
                    "licence" => C_LICENCE,
                    other => panic!("data/id_formats.toml: unknown context {other:?}"),
                },
                shape: whole(&d.shape),
                alone: d.alone.as_deref().map(whole),
                label: Box::leak(d.label.into_boxed_str()),
            })
            .collect()
    })
}

/// The first format admitted by the context flags `f` that the compact value matches.
fn doc_format(c: &[u8], f: u32) -> Option<&'static str> {
    let v = std::str::from_utf8(c).ok()?;
    doc_formats()
        .iter()
        .find(|d| f & d.context != 0 && d.shape.is_match(v))
        .map(|d| d.label)
}

/// A document number that is the whole text ("XY9876543" pasted into a field): no words around
/// it can say it is anything else, so its strict shape is enough.
fn alone_value(text: &str, out: &mut Vec<Candidate>) {
    let t = text.trim();
    if !(5..=16).contains(&t.len()) || !t.bytes().all(|c| c.is_ascii_alphanumeric()) {
        return;
    }
    if let Some(d) = doc_formats()
        .iter()
        .find(|d| d.alone.as_ref().is_some_and(|r| r.is_match(t)))
    {
        let s = text.len() - text.trim_start().len();
        push(out, s, s + t.len(), d.label, G, 0.6);
    }
}

// -------------------------------------------------------------------------------------------
// Context words (bounded, allocation-free, ASCII case-insensitive)
// -------------------------------------------------------------------------------------------

const C_CARD: u32 = 1 << 0;
const C_IBAN: u32 = 1 << 1;
const C_SSN: u32 = 1 << 2;
const C_ROUTING: u32 = 1 << 3;
const C_SIN: u32 = 1 << 4;
const C_TFN: u32 = 1 << 5;
const C_TAX: u32 = 1 << 6;
const C_MEDICARE: u32 = 1 << 7;
const C_NHS: u32 = 1 << 8;
const C_PASSPORT: u32 = 1 << 9;
const C_LICENCE: u32 = 1 << 10;
const C_PHONE: u32 = 1 << 11;
const C_DOB: u32 = 1 << 12;
const C_NPI: u32 = 1 << 13;
const C_DEA: u32 = 1 << 14;
const C_NEG: u32 = 1 << 15;
const C_NRIC: u32 = 1 << 16;
const C_KR: u32 = 1 << 17;
const C_ITIN: u32 = 1 << 18;
const C_ID: u32 = 1 << 19;
const C_VOTER: u32 = 1 << 20;
const C_DOCTOR: u32 = 1 << 21;

/// The flag of a `kind` in `data/id_context.toml`.
fn context_flag(kind: &str) -> Option<u32> {
    Some(match kind {
        "card" => C_CARD,
        "iban" => C_IBAN,
        "ssn" => C_SSN,
        "routing" => C_ROUTING,
        "sin" => C_SIN,
        "tfn" => C_TFN,
        "tax" => C_TAX,
        "medicare" => C_MEDICARE,
        "nhs" => C_NHS,
        "passport" => C_PASSPORT,
        "licence" => C_LICENCE,
        "phone" => C_PHONE,
        "dob" => C_DOB,
        "npi" => C_NPI,
        "dea" => C_DEA,
        "not_an_id" => C_NEG,
        "nric" => C_NRIC,
        "kr" => C_KR,
        "itin" => C_ITIN,
        "id" => C_ID,
        "voter" => C_VOTER,
        "doctor" => C_DOCTOR,
        _ => return None,
    })
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextFile {
    context: Vec<ContextSpec>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextSpec {
    kind: String,
    #[serde(default)]
    prefixes: Vec<String>,
    #[serde(default)]
    words: Vec<String>,
}

/// The context words (`data/id_context.toml`) as (word, flag, whole word), and their automaton.
/// A malformed file or an unknown kind is a build defect the unit tests catch.
fn context_words() -> &'static (Vec<(String, u32, bool)>, AhoCorasick) {
    static C: OnceLock<(Vec<(String, u32, bool)>, AhoCorasick)> = OnceLock::new();
    C.get_or_init(|| {
        let f: ContextFile = toml::from_str(include_str!("data/id_context.toml"))
            .unwrap_or_else(|e| panic!("data/id_context.toml: {e}"));
        let mut words = Vec::new();
        for c in f.context {
            let flag = context_flag(&c.kind)
                .unwrap_or_else(|| panic!("data/id_context.toml: unknown kind {:?}", c.kind));
            words.extend(c.prefixes.into_iter().map(|w| (w, flag, false)));
            words.extend(c.words.into_iter().map(|w| (w, flag, true)));
        }
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(words.iter().map(|c| c.0.as_str()))
            .unwrap_or_else(|e| panic!("data/id_context.toml: {e}"));
        (words, ac)
    })
}

/// Context flags for the words found in `hay` (whole-word entries need a boundary after them).
fn scan_words(hay: &[u8]) -> u32 {
    let mut found = 0u32;
    let (words, ac) = context_words();
    for m in ac.find_overlapping_iter(hay) {
        let (_, flag, whole) = words[m.pattern().as_usize()];
        let before_ok = m.start() == 0 || !hay[m.start() - 1].is_ascii_alphabetic();
        let after_ok = !whole || m.end() == hay.len() || !hay[m.end()].is_ascii_alphabetic();
        if before_ok && after_ok {
            found |= flag;
        }
    }
    found
}

/// Context flags within 48 bytes before `start`, the span itself, and 24 bytes after `end`.
fn context_flags(text: &str, start: usize, end: usize) -> u32 {
    let b = text.as_bytes();
    let s0 = start.saturating_sub(48);
    let e1 = (end + 24).min(b.len());
    scan_words(&b[s0..e1])
}

// -------------------------------------------------------------------------------------------
// Network addresses: IPv4, IPv6, MAC
// -------------------------------------------------------------------------------------------

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn scan_net(text: &str, out: &mut Vec<Candidate>, covered: &mut Vec<(usize, usize)>) {
    let b = text.as_bytes();
    let mut done = 0usize;
    for p in memchr::memchr3_iter(b':', b'-', b'.', b) {
        if p < done || p + 1 >= b.len() {
            continue;
        }
        let (l, r) = (if p > 0 { b[p - 1] } else { b' ' }, b[p + 1]);
        let c = b[p];
        if p == 0 && c != b':' {
            continue;
        }
        // Cheap gate: hex (or ':' for "::") on both sides.
        let gate = match c {
            b':' => {
                (l.is_ascii_hexdigit() || l == b':' || !is_word_byte(l))
                    && (r.is_ascii_hexdigit() || r == b':')
            }
            _ => l.is_ascii_hexdigit() && r.is_ascii_hexdigit(),
        };
        if !gate {
            continue;
        }
        if let Some((s, e, label, score)) = net_at(b, p) {
            push(out, s, e, label, Tier::Contact, score);
            covered.push((s, e));
            done = e;
        }
    }
}

/// Tries IPv6, IPv4 and MAC forms around separator position `p`.
fn net_at(b: &[u8], p: usize) -> Option<(usize, usize, &'static str, f32)> {
    let c = b[p];
    if c == b':' {
        // IPv6 token: hex digits, ':' and '.' (embedded IPv4).
        let mut s = p;
        while s > 0
            && p - s < 45
            && (b[s - 1].is_ascii_hexdigit() || b[s - 1] == b':' || b[s - 1] == b'.')
        {
            s -= 1;
        }
        let mut e = p;
        while e < b.len()
            && e - s < 50
            && (b[e].is_ascii_hexdigit() || b[e] == b':' || b[e] == b'.')
        {
            e += 1;
        }
        while e > s && (b[e - 1] == b'.' || (b[e - 1] == b':' && !(e >= 2 && b[e - 2] == b':'))) {
            e -= 1;
        }
        let tok = std::str::from_utf8(&b[s..e]).ok()?;
        let left_ok = s == 0 || !is_word_byte(b[s - 1]);
        if let Some(end) = ipv6_end(b, e, tok) {
            if left_ok {
                return Some((s, end, "IP_ADDRESS", 0.85));
            }
        }
        // MAC with colons: exactly 6 hex pairs.
        if let Some(m) = mac_at(b, s, b':') {
            return Some(m);
        }
        return None;
    }
    if c == b'-' {
        let mut s = p;
        while s > 0 && p - s < 3 && b[s - 1].is_ascii_hexdigit() {
            s -= 1;
        }
        return mac_at(b, s, b'-');
    }
    // '.' : IPv4 or Cisco MAC.
    let mut s = p;
    while s > 0 && p - s < 16 && (b[s - 1].is_ascii_digit() || b[s - 1] == b'.') {
        s -= 1;
    }
    if let Some(r) = ipv4_at(b, s) {
        return Some(r);
    }
    let mut s = p;
    while s > 0 && p - s < 5 && b[s - 1].is_ascii_hexdigit() {
        s -= 1;
    }
    cisco_mac_at(b, s)
}

/// Validates an IPv6 token `b[s..e]` (plus optional `%zone` or `/prefix`), returning its end.
fn ipv6_end(b: &[u8], e: usize, tok: &str) -> Option<usize> {
    if tok.matches(':').count() < 2 {
        return None;
    }
    // "::" alone is Rust/C++/YAML punctuation unless it is assigned (`src=::` in a log line)
    // or given a prefix (`::/0`, the default route).
    let start = e - tok.len();
    if !tok.bytes().any(|c| c.is_ascii_hexdigit())
        && (start == 0 || b[start - 1] != b'=')
        && b.get(e) != Some(&b'/')
    {
        return None;
    }
    tok.parse::<Ipv6Addr>().ok()?;
    let mut end = e;
    if end < b.len() && b[end] == b'%' {
        let mut z = end + 1;
        while z < b.len() && b[z].is_ascii_alphanumeric() {
            z += 1;
        }
        if z > end + 1 {
            end = z;
        }
    } else if end < b.len() && b[end] == b'/' {
        let (z, v) = digits_after(b, end + 1, 3);
        if z > end + 1 && v <= 128 {
            end = z;
        }
    }
    if end < b.len() && is_word_byte(b[end]) {
        return None;
    }
    Some(end)
}

fn digits_after(b: &[u8], mut i: usize, max: usize) -> (usize, u32) {
    let start = i;
    let mut v = 0u32;
    while i < b.len() && i - start < max && b[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add(u32::from(b[i] - b'0'));
        i += 1;
    }
    (i, v)
}

fn ipv4_at(b: &[u8], s: usize) -> Option<(usize, usize, &'static str, f32)> {
    if s > 0 && (is_word_byte(b[s - 1]) || b[s - 1] == b'.') {
        return None;
    }
    let mut e = s;
    let mut dots = 0;
    while e < b.len() && e - s < 15 && (b[e].is_ascii_digit() || b[e] == b'.') {
        if b[e] == b'.' {
            dots += 1;
        }
        e += 1;
    }
    // "192.168.1.1." ends a sentence: drop the trailing dot.
    if e > s && b[e - 1] == b'.' {
        e -= 1;
        dots -= 1;
    }
    if dots != 3 {
        return None;
    }
    let tok = std::str::from_utf8(&b[s..e]).ok()?;
    tok.parse::<Ipv4Addr>().ok()?;
    let mut end = e;
    if end < b.len() && b[end] == b'/' {
        let (z, v) = digits_after(b, end + 1, 2);
        if z > end + 1 && v <= 32 {
            end = z;
        }
    }
    if end < b.len()
        && (is_word_byte(b[end])
            || (b[end] == b'.' && end + 1 < b.len() && b[end + 1].is_ascii_digit()))
    {
        return None;
    }
    Some((s, end, "IP_ADDRESS", 0.85))
}

fn mac_ok(hex: &[u8]) -> bool {
    // Broadcast and all-zero addresses identify nobody.
    !(hex.iter().all(|&h| h == b'f' || h == b'F') || hex.iter().all(|&h| h == b'0'))
}

fn mac_at(b: &[u8], s: usize, sep: u8) -> Option<(usize, usize, &'static str, f32)> {
    let e = s + 17;
    if e > b.len() || (s > 0 && (is_word_byte(b[s - 1]) || b[s - 1] == sep)) {
        return None;
    }
    let mut hex = [0u8; 12];
    for k in 0..6 {
        let (h1, h2) = (b[s + 3 * k], b[s + 3 * k + 1]);
        if !h1.is_ascii_hexdigit() || !h2.is_ascii_hexdigit() {
            return None;
        }
        hex[2 * k] = h1;
        hex[2 * k + 1] = h2;
        if k < 5 && b[s + 3 * k + 2] != sep {
            return None;
        }
    }
    if e < b.len() && (is_word_byte(b[e]) || b[e] == sep || b[e] == b':' || b[e] == b'-') {
        return None;
    }
    mac_ok(&hex).then_some((s, e, "MAC_ADDRESS", 0.85))
}

fn cisco_mac_at(b: &[u8], s: usize) -> Option<(usize, usize, &'static str, f32)> {
    let e = s + 14;
    if e > b.len() || (s > 0 && (is_word_byte(b[s - 1]) || b[s - 1] == b'.')) {
        return None;
    }
    let t = &b[s..e];
    if t[4] != b'.' || t[9] != b'.' {
        return None;
    }
    let mut hex = [0u8; 12];
    let mut k = 0;
    let mut digits = 0;
    for (i, &c) in t.iter().enumerate() {
        if i == 4 || i == 9 {
            continue;
        }
        if !c.is_ascii_hexdigit() {
            return None;
        }
        digits += usize::from(c.is_ascii_digit());
        hex[k] = c;
        k += 1;
    }
    if e < b.len()
        && (is_word_byte(b[e]) || (b[e] == b'.' && e + 1 < b.len() && is_word_byte(b[e + 1])))
    {
        return None;
    }
    // Without any digit, "aabb.ccdd.eeff" is as likely a word game as a MAC: require context-free
    // confidence only when digits are present.
    let score = if digits > 0 { 0.85 } else { 0.6 };
    mac_ok(&hex).then_some((s, e, "MAC_ADDRESS", score))
}

// -------------------------------------------------------------------------------------------
// '@': emails and scheme://user:pass@host
// -------------------------------------------------------------------------------------------

fn is_local_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'%' | b'+' | b'-' | b'\'')
}

/// An address no one can own: a reserved documentation domain, a local part that says it is
/// made up (`james.fake@`), or a user name shorter than its provider allows (`src@gmail.com`).
fn made_up_email(local: &[u8], domain: &[u8]) -> bool {
    // Compared without allocating: this runs for every address in every scan.
    let p = &super::placeholders::data().email;
    let under = |d: &str| {
        let d = d.as_bytes();
        domain.len() >= d.len()
            && domain[domain.len() - d.len()..].eq_ignore_ascii_case(d)
            && (domain.len() == d.len() || domain[domain.len() - d.len() - 1] == b'.')
    };
    if p.reserved_domains.iter().any(|d| under(d)) || p.reserved_tlds.iter().any(|t| under(t)) {
        return true;
    }
    if local.split(|c| !c.is_ascii_alphabetic()).any(|w| {
        p.made_up_words
            .iter()
            .any(|m| m.as_bytes().eq_ignore_ascii_case(w))
    }) {
        return true;
    }
    p.provider.iter().any(|m| {
        let user = local.split(|&c| c == b'+').next().unwrap_or(&[]);
        domain.eq_ignore_ascii_case(m.domain.as_bytes())
            && user.iter().filter(|&&c| c != b'.').count() < m.min_local
    })
}

fn scan_at(text: &str, out: &mut Vec<Candidate>, covered: &mut Vec<(usize, usize)>) {
    let b = text.as_bytes();
    let mut done = 0usize;
    for p in memchr::memchr_iter(b'@', b) {
        if p < done || p == 0 {
            continue;
        }
        // Credential URL: "://" earlier in the same whitespace-free token, no '/' after it.
        let tok_start = {
            let mut t = p;
            while t > 0
                && p - t < 512
                && !b[t - 1].is_ascii_whitespace()
                && !matches!(b[t - 1], b'"' | b'\'' | b'<' | b'(')
            {
                t -= 1;
            }
            t
        };
        if let Some(k) = memchr::memmem::rfind(&b[tok_start..p], b"://") {
            let ui = tok_start + k + 3;
            let userinfo = &b[ui..p];
            if !userinfo.is_empty() && !userinfo.contains(&b'/') {
                if let Some(c) = memchr::memchr(b':', userinfo) {
                    if c + 1 < userinfo.len() {
                        push(out, ui, p, "URL_WITH_CREDENTIALS", Tier::Secret, 0.9);
                        covered.push((ui, p));
                        done = p + 1;
                        continue;
                    }
                }
            }
        }
        let mut s = p;
        while s > 0 && p - s < 64 && is_local_byte(b[s - 1]) {
            s -= 1;
        }
        while s < p && matches!(b[s], b'.' | b'\'' | b'-') {
            s += 1;
        }
        if s == p {
            continue;
        }
        let mut e = p + 1;
        while e < b.len()
            && e - p < 255
            && (b[e].is_ascii_alphanumeric() || b[e] == b'.' || b[e] == b'-')
        {
            e += 1;
        }
        while e > p + 1 && matches!(b[e - 1], b'.' | b'-') {
            e -= 1;
        }
        let domain = &b[p + 1..e];
        let Some(last_dot) = memchr::memrchr(b'.', domain) else {
            continue;
        };
        let tld = &domain[last_dot + 1..];
        if tld.len() < 2
            || !tld.iter().all(u8::is_ascii_alphabetic)
            || domain.windows(2).any(|w| w == b"..")
            || domain[0] == b'.'
        {
            continue;
        }
        let score = if made_up_email(&b[s..p], domain) {
            0.4
        } else {
            0.9
        };
        push(out, s, e, "EMAIL_ADDRESS", Tier::Contact, score);
        covered.push((s, e));
        done = e;
    }
}

// -------------------------------------------------------------------------------------------
// SWIFT/BIC (context first: codes may contain no digit at all)
// -------------------------------------------------------------------------------------------

impl IdRecognizer {
    fn scan_swift(&self, text: &str, out: &mut Vec<Candidate>) {
        let b = text.as_bytes();
        let mut hits: Vec<(usize, usize)> = Vec::new();
        for f in &self.swift_ctx {
            hits.extend(f.find_iter(b).map(|ms| (ms, ms + f.needle().len())));
        }
        hits.sort_unstable();
        let mut seen_end = 0usize;
        {
            for (ms, me) in hits {
                if ms > 0 && b[ms - 1].is_ascii_alphabetic() {
                    continue;
                }
                if me < b.len() && b[me].is_ascii_lowercase() {
                    continue;
                }
                // Look at the next few tokens for an 8/11-char upper-case code.
                let lim = (me + 40).min(b.len());
                let mut i = me;
                let mut tokens = 0;
                while i < lim && tokens < 4 {
                    while i < lim && !b[i].is_ascii_alphanumeric() {
                        i += 1;
                    }
                    let s = i;
                    while i < b.len() && b[i].is_ascii_alphanumeric() {
                        i += 1;
                    }
                    if i > s {
                        tokens += 1;
                        let tok = &b[s..i];
                        if ck::is_swift_format(tok) {
                            if s >= seen_end {
                                push(out, s, i, "SWIFT_CODE", Tier::Financial, 0.8);
                                seen_end = i;
                            }
                            break;
                        }
                    }
                }
            }
        }
    }
}

// -------------------------------------------------------------------------------------------
// Digit clusters
// -------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Default, Debug)]
struct Group {
    s: usize,
    e: usize,
    digits: u8,
    letters: u8,
}

impl Group {
    fn len(&self) -> usize {
        self.e - self.s
    }
    fn letters_only(&self) -> bool {
        self.digits == 0
    }
    fn digits_only(&self) -> bool {
        self.letters == 0
    }
}

fn is_sep(c: u8) -> bool {
    matches!(c, b' ' | b'-' | b'.' | b'/' | b':' | b'(' | b')' | b'+')
}

fn alnum_run(b: &[u8], s: usize, limit: usize) -> Group {
    let mut g = Group {
        s,
        e: s,
        digits: 0,
        letters: 0,
    };
    while g.e < limit && b[g.e].is_ascii_alphanumeric() {
        if b[g.e].is_ascii_digit() {
            g.digits = g.digits.saturating_add(1);
        } else {
            g.letters = g.letters.saturating_add(1);
        }
        g.e += 1;
    }
    g
}

fn scan_clusters(text: &str, out: &mut Vec<Candidate>, covered: &[(usize, usize)]) {
    let b = text.as_bytes();
    let mut i = 0usize;
    let mut ci = 0usize;
    while i < b.len() {
        match crate::bytescan::find_in_range(b, i, b'0', b'9') {
            None => break,
            Some(k) => i = k,
        }
        while ci < covered.len() && covered[ci].1 <= i {
            ci += 1;
        }
        if ci < covered.len() && covered[ci].0 <= i {
            i = covered[ci].1;
            continue;
        }
        let limit = covered.get(ci).map_or(b.len(), |c| c.0);
        let end = cluster(text, i, limit, out);
        i = end.max(i + 1);
    }
}

/// Builds the cluster around the digit at `d`, analyses it, and returns where scanning resumes.
fn cluster(text: &str, d: usize, limit: usize, out: &mut Vec<Candidate>) -> usize {
    let b = text.as_bytes();
    let mut ws = d;
    while ws > 0 && b[ws - 1].is_ascii_alphanumeric() {
        ws -= 1;
        if d - ws > 64 {
            // A very long token (hash, base64): not ours; skip to its end.
            let mut e = d;
            while e < b.len() && b[e].is_ascii_alphanumeric() {
                e += 1;
            }
            return e;
        }
    }
    // A short number joined to a word by an underscore ("VARA_101375237" in a link,
    // "build_20240117") is part of a code's or a page's name, not a national ID or phone number
    // standing on its own (a nine-digit check digit passes one time in ten by chance): the
    // whole token is skipped. Runs of 12 digits or more (cards, account numbers) have checks
    // that chance does not pass, and are read as anywhere.
    let mut we = d;
    while we < b.len() && b[we].is_ascii_alphanumeric() {
        we += 1;
    }
    let joined_before = ws >= 2 && b[ws - 1] == b'_' && b[ws - 2].is_ascii_alphanumeric();
    let joined_after = we + 1 < b.len() && b[we] == b'_' && b[we + 1].is_ascii_alphanumeric();
    // (A number that goes on in groups, "card_4111 1111 …", is read as anywhere.)
    let goes_on = we + 1 < b.len() && is_sep(b[we]) && b[we + 1].is_ascii_digit();
    if (joined_before || joined_after) && we - ws < 12 && !goes_on {
        while we < b.len() && (b[we].is_ascii_alphanumeric() || b[we] == b'_') {
            we += 1;
        }
        return we;
    }
    let mut groups = [Group::default(); MAX_GROUPS];
    let mut n = 0usize;
    // One short letter-only word right before may belong ("AA 12 34 56 B", "BE71 ...").
    if ws >= 2 && is_sep(b[ws - 1]) {
        let mut k = ws - 1;
        if k > 0 && is_sep(b[k - 1]) {
            k -= 1;
        }
        let mut s = k;
        while s > 0 && b[s - 1].is_ascii_alphabetic() && k - s <= 4 {
            s -= 1;
        }
        let boundary = s == 0 || !b[s - 1].is_ascii_alphanumeric();
        if s < k && k - s <= 4 && boundary && b[ws - 1] != b'(' {
            groups[0] = alnum_run(b, s, k);
            n = 1;
        }
    }
    let mut pos = ws;
    loop {
        let g = alnum_run(b, pos, limit);
        if g.e == g.s || n == MAX_GROUPS {
            break;
        }
        groups[n] = g;
        n += 1;
        // Separator: 1-2 separator bytes, then an alphanumeric.
        let mut k = g.e;
        while k < limit && k - g.e < 3 && is_sep(b[k]) {
            k += 1;
        }
        let sl = k - g.e;
        if sl == 0 || sl > 2 || k >= limit || !b[k].is_ascii_alphanumeric() {
            break;
        }
        let next = alnum_run(b, k, limit);
        let prev_letters = g.letters_only();
        let ok = next.digits > 0 || (next.len() <= 4 && !prev_letters && g.digits > 0);
        if !ok || next.len() > 40 {
            break;
        }
        pos = k;
    }
    if n == 0 {
        return d + 1;
    }
    let end = groups[n - 1].e;
    // Every identifier, date of birth or phone we look for has 5+ digits, or is one long token
    // (PAN "ABCPD1234Z", crypto addresses). Years and small counts stop here.
    let digits: usize = groups[..n].iter().map(|g| g.digits as usize).sum();
    if digits >= 5 || groups[..n].iter().any(|g| g.len() >= 8) {
        analyse(text, &groups[..n], out);
    }
    end
}

/// Lazily computed context flags for a cluster.
struct Ctx<'a> {
    text: &'a str,
    s: usize,
    e: usize,
    flags: Option<u32>,
}

impl Ctx<'_> {
    fn get(&mut self) -> u32 {
        if self.flags.is_none() {
            self.flags = Some(context_flags(self.text, self.s, self.e));
        }
        self.flags.unwrap_or(0)
    }
    fn has(&mut self, f: u32) -> bool {
        self.get() & f != 0
    }
}

/// One window of groups `i..=j` in compact form.
struct Win<'a> {
    groups: &'a [Group],
    compact: [u8; MAX_COMPACT],
    len: usize,
    /// Separator bytes used between groups (first byte of each separator run; 0 if none).
    seps: [u8; MAX_GROUPS],
    nseps: usize,
    upper: bool,
    lower: bool,
}

impl Win<'_> {
    fn c(&self) -> &[u8] {
        &self.compact[..self.len]
    }
    fn sizes_are(&self, sizes: &[usize]) -> bool {
        self.groups.len() == sizes.len()
            && self.groups.iter().zip(sizes).all(|(g, &s)| g.len() == s)
    }
    /// All separators identical and drawn from `allowed` (vacuously true for one group).
    fn uniform_sep(&self, allowed: &[u8]) -> bool {
        self.nseps == 0
            || (self.seps[..self.nseps].iter().all(|&s| s == self.seps[0])
                && allowed.contains(&self.seps[0]))
    }
    fn single(&self) -> bool {
        self.groups.len() == 1
    }
}

fn build_win<'a>(b: &[u8], groups: &'a [Group], start_override: Option<usize>) -> Option<Win<'a>> {
    let mut w = Win {
        groups,
        compact: [0; MAX_COMPACT],
        len: 0,
        seps: [0; MAX_GROUPS],
        nseps: 0,
        upper: false,
        lower: false,
    };
    for (k, g) in groups.iter().enumerate() {
        let s = if k == 0 {
            start_override.unwrap_or(g.s)
        } else {
            g.s
        };
        if k > 0 {
            let prev = groups[k - 1].e;
            // A separator run of spaces around a dash counts as the dash.
            let sep = b[prev..g.s]
                .iter()
                .copied()
                .find(|&c| c != b' ')
                .unwrap_or(b' ');
            let sep = if g.s - prev > 1 && b[prev] == b')' {
                b')'
            } else {
                sep
            };
            w.seps[w.nseps] = sep;
            w.nseps += 1;
        }
        for &c in &b[s..g.e] {
            if w.len >= MAX_COMPACT {
                return None;
            }
            w.upper |= c.is_ascii_uppercase();
            w.lower |= c.is_ascii_lowercase();
            w.compact[w.len] = c.to_ascii_uppercase();
            w.len += 1;
        }
    }
    Some(w)
}

struct Hit {
    label: &'static str,
    tier: Tier,
    score: f32,
}

fn hit(label: &'static str, tier: Tier, score: f32) -> Option<Hit> {
    Some(Hit { label, tier, score })
}

const G: Tier = Tier::GovernmentId;

/// Checksum-backed identifiers and strongly structured formats.
fn classify(w: &Win, ctx: &mut Ctx) -> Option<Hit> {
    let c = w.c();
    let n = c.len();
    let digits = c.iter().all(u8::is_ascii_digit);
    if n < 7 {
        return None;
    }
    if !digits {
        return classify_alnum(w, c, ctx);
    }
    let dash_space = w.uniform_sep(b" -");
    if let Some(h) = de_tax_number_grouped(w, ctx) {
        return Some(h);
    }
    match n {
        12..=19 => {
            if n == 12
                && ck::is_valid_ph_tin(c)
                && ((w.sizes_are(&[3, 3, 3, 3]) && w.uniform_sep(b"-"))
                    || (w.single() || w.sizes_are(&[3, 3, 3, 3])) && ctx.has(C_TAX))
            {
                return hit("PH_TIN", G, if ctx.has(C_TAX) { 0.9 } else { 0.7 });
            }
            if dash_space && w.groups.len() <= 5 && ck::is_valid_card(c) {
                return hit("CREDIT_CARD", Tier::Financial, 0.95);
            }
            // A Korean driving licence: region 11-28, year of issue, serial, check, written in
            // its own 2-2-6-2 grouping (Presidio's KR_DRIVER_LICENSE shape). No phone plan or
            // other identifier is grouped so; bare twelve digits are not enough.
            if n == 12
                && w.sizes_are(&[2, 2, 6, 2])
                && w.uniform_sep(b" -")
                && (11..=28).contains(&((c[0] - b'0') * 10 + (c[1] - b'0')))
            {
                return hit("KR_DRIVER_LICENSE", G, 0.8);
            }
            if n == 12
                && ck::is_valid_in_aadhaar(c)
                && (w.single() || (w.sizes_are(&[4, 4, 4]) && w.uniform_sep(b" -:")))
            {
                return hit("IN_AADHAAR", G, 0.9);
            }
            if n == 12
                && (w.single() || (w.sizes_are(&[8, 4]) && w.uniform_sep(b"-")))
                && ck::is_valid_se_personnummer(c)
            {
                return hit("SE_PERSONNUMMER", G, 0.85);
            }
            if n == 13 {
                let kr_shape = w.single() || (w.sizes_are(&[6, 7]) && w.uniform_sep(b"-"));
                if kr_shape {
                    if let Some((kind, check)) = ck::kr_registration(c) {
                        let label = match kind {
                            ck::KrRegistration::Resident => "KR_RRN",
                            ck::KrRegistration::Foreigner => "KR_FRN",
                        };
                        if check {
                            return hit(label, G, 0.95);
                        }
                        // Numbers issued since 2020 carry no check digit: trust the dashed shape.
                        let s = if ctx.has(C_KR) {
                            0.8
                        } else if !w.single() {
                            0.55
                        } else {
                            0.4
                        };
                        if s >= 0.5 {
                            return hit(label, G, s);
                        }
                    }
                }
                if w.single() && ck::is_valid_th_tnin(c) {
                    return hit("TH_TNIN", G, 0.9);
                }
                if w.single() && ck::is_valid_za_id(c) {
                    return hit("ZA_ID_NUMBER", G, 0.9);
                }
                // ELSTER Steuernummer: with tax wording any Land code; bare only the
                // leading-zero codes 01-09, which few other 13-digit numbers share.
                if w.single() && ck::is_de_elster_tax_number(c) {
                    if ctx.has(C_TAX) {
                        return hit("DE_TAX_NUMBER", G, 0.9);
                    }
                    if c[0] == b'0' {
                        return hit("DE_TAX_NUMBER", G, 0.55);
                    }
                }
            }
            None
        }
        11 => {
            if !(w.single() || w.uniform_sep(b" -")) {
                return None;
            }
            if w.single() && ck::is_valid_tr_tckn(c) {
                return hit("TR_NATIONAL_ID", G, 0.95);
            }
            if w.single() && ck::is_valid_pl_pesel(c) {
                return hit("PL_PESEL", G, 0.9);
            }
            if ck::is_valid_au_abn(c) && (w.single() || w.sizes_are(&[2, 3, 3, 3])) {
                return hit("AU_ABN", Tier::Public, 0.85);
            }
            if w.single() && ck::is_valid_de_steuer_id(c) {
                return hit("DE_TAX_ID", G, if ctx.has(C_TAX) { 0.95 } else { 0.8 });
            }
            if ck::is_valid_au_medicare(c) && ctx.has(C_MEDICARE) {
                return hit("AU_MEDICARE", G, 0.85);
            }
            None
        }
        10 => {
            let sep_ok = w.single() || w.uniform_sep(b" -");
            if sep_ok
                && ck::is_valid_us_npi(c)
                && (w.single() || w.sizes_are(&[4, 3, 3]) || w.sizes_are(&[3, 3, 4]))
            {
                // Also a valid-looking phone shape; NPI context or the leading 1/2 decide.
                let s = if ctx.has(C_NPI) { 0.95 } else { 0.8 };
                return hit("US_NPI", Tier::ProfessionalId, s);
            }
            if sep_ok
                && ck::is_valid_uk_nhs(c)
                && (ctx.has(C_NHS) || w.sizes_are(&[3, 3, 4]) && !ctx.has(C_PHONE))
            {
                return hit("UK_NHS", G, if ctx.has(C_NHS) { 0.95 } else { 0.6 });
            }
            if (w.single() || (w.sizes_are(&[6, 4]) && w.uniform_sep(b"-+")))
                && ck::is_valid_se_personnummer(c)
            {
                return hit("SE_PERSONNUMMER", G, if w.single() { 0.7 } else { 0.85 });
            }
            if (w.single() || (w.sizes_are(&[6, 4]) && w.uniform_sep(b"-")))
                && ck::is_valid_se_orgnr(c)
            {
                return hit(
                    "SE_ORGANISATIONSNUMMER",
                    Tier::Public,
                    if w.single() { 0.45 } else { 0.7 },
                );
            }
            if sep_ok && ck::is_valid_au_medicare(c) && ctx.has(C_MEDICARE) {
                return hit("AU_MEDICARE", G, 0.85);
            }
            None
        }
        9 => classify_nine(w, c, ctx),
        8 => {
            if w.single() && ctx.has(C_TFN) && ck::is_valid_au_tfn(c) {
                return hit("AU_TFN", G, 0.85);
            }
            None
        }
        _ => None,
    }
}

/// Nine-digit numbers: many schemes share the length, so shape and context pick the label.
fn classify_nine(w: &Win, c: &[u8], ctx: &mut Ctx) -> Option<Hit> {
    let ssn_shape = (w.sizes_are(&[3, 2, 4]) && w.uniform_sep(b"- "))
        || (w.uniform_sep(b"-") && (w.sizes_are(&[3, 6]) || w.sizes_are(&[5, 4])));
    let triple = w.sizes_are(&[3, 3, 3]) && w.uniform_sep(b" -");
    let bare = w.single();
    let aba_shape = bare || (w.sizes_are(&[4, 4, 1]) && w.uniform_sep(b"-"));
    if !(ssn_shape || triple || bare || aba_shape) {
        return None;
    }
    let f = ctx.get();
    if f & C_SSN != 0 && ck::is_valid_us_ssn(c) && !triple {
        return hit("US_SSN", G, 0.95);
    }
    if f & C_ITIN != 0 && ck::is_valid_us_itin(c) {
        return hit("US_ITIN", G, 0.95);
    }
    if f & C_ROUTING != 0 && aba_shape && ck::is_valid_aba(c) {
        return hit("ABA_ROUTING_NUMBER", Tier::Financial, 0.9);
    }
    if f & C_SIN != 0 && ck::is_valid_ca_sin(c) {
        return hit("CA_SIN", G, 0.95);
    }
    if f & C_TFN != 0 && ck::is_valid_au_tfn(c) {
        return hit("AU_TFN", G, 0.95);
    }
    if f & C_TAX != 0 && (bare || triple) && ck::is_valid_ph_tin(c) {
        return hit("PH_TIN", G, 0.85);
    }
    if f & C_DOCTOR != 0 && bare && ck::is_valid_de_lanr(c) {
        return hit("DE_LANR", Tier::ProfessionalId, 0.9);
    }
    if ssn_shape {
        if ck::is_valid_us_itin(c) {
            return hit("US_ITIN", G, 0.85);
        }
        if ck::is_valid_us_ssn(c) {
            let full = w.sizes_are(&[3, 2, 4]);
            return hit("US_SSN", G, if full { 0.85 } else { 0.6 });
        }
        return None;
    }
    if (triple || bare) && !c.starts_with(b"00") {
        let s = if bare { 0.6 } else { 0.85 };
        if ck::is_valid_ca_sin(c) {
            return hit("CA_SIN", G, s);
        }
        if ck::is_valid_au_tfn(c) {
            return hit("AU_TFN", G, s - 0.05);
        }
        // A check digit is stronger evidence than the ITIN's range-only shape.
        if bare && ck::is_valid_de_lanr(c) {
            return hit("DE_LANR", Tier::ProfessionalId, 0.55);
        }
        if bare && ck::is_valid_us_itin(c) {
            return hit("US_ITIN", G, 0.6);
        }
        if triple && ck::is_valid_au_acn(c) {
            // Public registry number with a weak check digit: informational only.
            return hit("AU_ACN", Tier::Public, 0.45);
        }
        if bare && ck::is_valid_us_ssn(c) {
            // A bare 9-digit number is as often an account or order number: below threshold.
            return hit("US_SSN", G, 0.45);
        }
    }
    None
}

fn classify_alnum(w: &Win, c: &[u8], ctx: &mut Ctx) -> Option<Hit> {
    let n = c.len();
    let mixed_case = w.upper && w.lower;
    // IBAN: upper-case, space/dash grouped or unbroken.
    if n >= 15
        && c[0].is_ascii_alphabetic()
        && c[1].is_ascii_alphabetic()
        && !w.lower
        && w.uniform_sep(b" -")
        && ck::is_valid_iban(c)
    {
        return hit("IBAN_CODE", Tier::Financial, 0.95);
    }
    if mixed_case && !(n == 9 || n == 11) {
        return None;
    }
    match n {
        9 => {
            let shape_ok = w.single() || (w.groups.len() == 2 && w.uniform_sep(b"-"));
            if shape_ok && ck::is_valid_es_nie(c) {
                return hit("ES_NIE", G, 0.95);
            }
            if shape_ok && ck::is_valid_es_nif(c) {
                return hit("ES_NIF", G, 0.9);
            }
            if w.single() && ck::is_valid_sg_nric(c) {
                return hit("SG_NRIC_FIN", G, 0.95);
            }
            let nino_shape = w.single() || w.sizes_are(&[2, 2, 2, 2, 1]) || w.sizes_are(&[2, 6, 1]);
            if nino_shape && !mixed_case && w.uniform_sep(b" ") && ck::is_valid_uk_nino(c) {
                return hit("UK_NINO", G, 0.85);
            }
            if w.single() && ck::is_valid_dea(c) && !w.lower {
                return hit(
                    "MEDICAL_LICENSE",
                    Tier::ProfessionalId,
                    if ctx.has(C_DEA) { 0.95 } else { 0.8 },
                );
            }
            if w.single()
                && c[0].is_ascii_alphabetic()
                && c[1..].iter().all(u8::is_ascii_digit)
                && !w.lower
                && ctx.has(C_NRIC)
            {
                return hit("SG_NRIC_FIN", G, 0.6);
            }
            if w.single() {
                return document_nine(w, c, ctx);
            }
            None
        }
        8 if w.groups.len() == 2 && w.uniform_sep(b"-") || w.single() => {
            if ck::is_valid_es_nif(c) && !mixed_case {
                return hit("ES_NIF", G, 0.85);
            }
            None
        }
        10 => {
            if let Some(h) = fi_hetu(w, c) {
                return Some(h);
            }
            if !w.single() || mixed_case {
                return None;
            }
            if ck::is_valid_in_pan(c) {
                return hit("IN_PAN", G, 0.75);
            }
            if ck::is_in_pan_shape(c) && !w.lower {
                return hit("IN_PAN", G, 0.55);
            }
            if ck::is_valid_de_kvnr(c) {
                return hit("DE_HEALTH_INSURANCE", G, 0.75);
            }
            // Indian EPIC (voter ID): 3 letters + 7 digits, no check digit.
            if c[..3].iter().all(u8::is_ascii_alphabetic) && c[3..].iter().all(u8::is_ascii_digit) {
                if ctx.has(C_VOTER) {
                    return hit("IN_VOTER", G, 0.85);
                }
                if !ck::is_counting_run(&c[3..]) && !ctx.has(C_NEG) {
                    return hit("IN_VOTER", G, 0.6);
                }
            }
            None
        }
        11 => {
            // Finnish henkilötunnus keeps its century sign, which may be a separator here.
            if let Some(h) = fi_hetu(w, c) {
                return Some(h);
            }
            let mbi_shape = w.single() || (w.sizes_are(&[4, 3, 4]) && w.uniform_sep(b"-"));
            if mbi_shape && !mixed_case && ck::is_valid_us_mbi(c) {
                return hit("US_MBI", G, if ctx.has(C_MEDICARE) { 0.95 } else { 0.8 });
            }
            None
        }
        12 => {
            if w.single() && ck::is_valid_de_rvnr(c) {
                return hit("DE_SOCIAL_SECURITY", G, 0.9);
            }
            None
        }
        16 => {
            if w.single() && ck::is_valid_it_fiscal_code(c) {
                return hit("IT_FISCAL_CODE", G, 0.95);
            }
            if w.single() && ck::is_uk_driving_licence(c) {
                return hit(
                    "UK_DRIVING_LICENCE",
                    G,
                    if ctx.has(C_LICENCE) { 0.95 } else { 0.85 },
                );
            }
            None
        }
        _ => None,
    }
}

/// German Steuernummer in a Land's own grouping: slashes "FF/BBB/UUUUP", "FFF/BBBB/UUUP",
/// "FF/BBB/UUUU/P" (Rhineland-Palatinate); space-grouped forms only next to tax wording.
fn de_tax_number_grouped(w: &Win, ctx: &mut Ctx) -> Option<Hit> {
    let k = w.groups.len();
    if !(3..=4).contains(&k) || w.groups.iter().any(|g| !g.digits_only()) {
        return None;
    }
    let l = |i: usize| w.groups[i].len();
    let three =
        k == 3 && (2..=3).contains(&l(0)) && (3..=4).contains(&l(1)) && (4..=5).contains(&l(2));
    let rp = k == 4 && w.sizes_are(&[2, 3, 4, 1]);
    if !(three || rp) {
        return None;
    }
    if w.uniform_sep(b"/") {
        return hit("DE_TAX_NUMBER", G, if ctx.has(C_TAX) { 0.9 } else { 0.6 });
    }
    if three && w.uniform_sep(b" ") && l(2) == 5 && ctx.has(C_TAX) {
        return hit("DE_TAX_NUMBER", G, 0.8);
    }
    None
}

/// Nine-character travel-document numbers without a checksum of their own country's kind:
/// German passports/ID cards (ICAO check digit), Korean passports (M/S/R/G/D + 8 digits or the
/// 2021 form with a letter in fifth place), Singapore NRIC/FIN shapes whose check letter fails
/// (still worth masking: typos of a real one), and letter + 8 digits next to passport wording.
fn document_nine(w: &Win, c: &[u8], ctx: &mut Ctx) -> Option<Hit> {
    if !c[0].is_ascii_alphabetic() {
        return None;
    }
    if ck::is_valid_de_document_number(c) && !w.lower {
        return hit(
            "DE_PASSPORT",
            G,
            if ctx.has(C_PASSPORT) { 0.95 } else { 0.8 },
        );
    }
    let kr_letter = matches!(c[0], b'M' | b'S' | b'R' | b'G' | b'D');
    let digits8 = c[1..].iter().all(u8::is_ascii_digit);
    let kr_new = c[1..4].iter().all(u8::is_ascii_digit)
        && c[4].is_ascii_alphabetic()
        && c[5..].iter().all(u8::is_ascii_digit);
    if kr_letter && kr_new {
        return hit(
            "KR_PASSPORT",
            G,
            if ctx.has(C_PASSPORT) { 0.9 } else { 0.7 },
        );
    }
    let sg_shape = matches!(c[0], b'S' | b'T' | b'F' | b'G' | b'M')
        && c[1..8].iter().all(u8::is_ascii_digit)
        && c[8].is_ascii_alphabetic();
    if sg_shape && !(w.upper && w.lower) {
        let s = if ctx.has(C_NRIC) { 0.8 } else { 0.55 };
        return hit("SG_NRIC_FIN", G, s);
    }
    if digits8 {
        // Other letters next to passport wording are labelled by `context_only`.
        if kr_letter && ctx.has(C_PASSPORT) {
            return hit("KR_PASSPORT", G, 0.85);
        }
        // Bare, only the Korean passport series letters (M ordinary, S/R/G/D official and
        // diplomatic) carry enough signal; other letters need passport wording, and
        // placeholders such as "M12345678" stay silent.
        if kr_letter && !ck::is_counting_run(&c[1..]) && !ck::is_counting_run(&c[1..8]) {
            return hit("KR_PASSPORT", G, 0.55);
        }
    }
    None
}

fn fi_hetu(w: &Win, c: &[u8]) -> Option<Hit> {
    let mut buf = [0u8; 11];
    if w.single() {
        if c.len() != 11 {
            return None;
        }
        buf.copy_from_slice(c);
    } else if c.len() == 10 && w.sizes_are(&[6, 4]) && (w.seps[0] == b'-' || w.seps[0] == b'+') {
        buf[..6].copy_from_slice(&c[..6]);
        buf[6] = w.seps[0];
        buf[7..10].copy_from_slice(&c[6..9]);
        // c has 10 chars here; the check char is c[9].
        buf[10] = c[9];
    } else {
        return None;
    }
    ck::is_valid_fi_hetu(&buf).then(|| Hit {
        label: "FI_PERSONAL_IDENTITY_CODE",
        tier: G,
        score: 0.95,
    })
}

/// Crypto addresses are single tokens; handled on the raw case-sensitive bytes.
fn crypto(b: &[u8], g: &Group, ctx: &mut Ctx) -> Option<Hit> {
    let t = &b[g.s..g.e];
    let n = t.len();
    if (25..=35).contains(&n) && (t[0] == b'1' || t[0] == b'3') && ck::is_valid_btc_base58(t) {
        return hit("CRYPTO", Tier::Financial, 0.95);
    }
    if n >= 14
        && (t.starts_with(b"bc1") || t.starts_with(b"BC1") || t.starts_with(b"tb1"))
        && ck::is_valid_btc_bech32(t)
    {
        return hit("CRYPTO", Tier::Financial, 0.95);
    }
    if ck::is_eth_address_format(t) {
        let _ = ctx;
        return hit("CRYPTO", Tier::Financial, 0.8);
    }
    None
}

fn date_shape(b: &[u8], gs: &[Group]) -> Option<usize> {
    // Returns how many groups form a numeric date (d/m/y, m/d/y or y-m-d).
    if gs.len() < 3 || !gs[..3].iter().all(Group::digits_only) {
        return None;
    }
    let s1 = b[gs[0].e];
    let s2 = b[gs[1].e];
    if s1 != s2
        || !matches!(s1, b'/' | b'-' | b'.')
        || gs[1].s - gs[0].e != 1
        || gs[2].s - gs[1].e != 1
    {
        return None;
    }
    let v = |g: &Group| -> u32 {
        b[g.s..g.e].iter().fold(0u32, |a, &c| {
            a.saturating_mul(10)
                .saturating_add(u32::from(c.wrapping_sub(b'0')))
        })
    };
    let (l0, l1, l2) = (gs[0].len(), gs[1].len(), gs[2].len());
    let (a, m, c) = (v(&gs[0]), v(&gs[1]), v(&gs[2]));
    let ok = if l0 == 4 && l1 <= 2 && l2 <= 2 {
        (1..=12).contains(&m) && (1..=31).contains(&c)
    } else if l0 <= 2 && l1 <= 2 && (l2 == 4 || l2 == 2) {
        ((1..=12).contains(&a) && (1..=31).contains(&m))
            || ((1..=31).contains(&a) && (1..=12).contains(&m))
    } else {
        false
    };
    ok.then_some(3)
}

/// `phonenumber::parse` + `is_valid` for one region. They cost 2–70 µs a call (the crate
/// matches metadata regexes through a small cache), and the same numbers recur: across a
/// document, in every turn's history, and in the plan, sanitizer and last-line scans of one
/// request. Results are kept per thread (no lock on the scan path), forgotten at 4,096.
fn phone_valid(region: Option<phonenumber::country::Id>, raw: &str) -> bool {
    use std::cell::RefCell;
    use std::collections::HashMap;
    type Seen = HashMap<(Option<phonenumber::country::Id>, String), bool>;
    thread_local! {
        static SEEN: RefCell<Seen> = RefCell::new(HashMap::new());
    }
    let key = (region, raw.to_owned());
    if let Some(v) = SEEN.with(|s| s.borrow().get(&key).copied()) {
        return v;
    }
    let v = phonenumber::parse(region, raw)
        .map(|p| phonenumber::is_valid(&p))
        .unwrap_or(false);
    SEEN.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() >= 4096 {
            s.clear();
        }
        s.insert(key, v);
    });
    v
}

/// Phone validation with the `phonenumber` crate: international numbers by their country code,
/// national ones against a list of common regions.
fn phone_score(raw: &str, plus: bool, formatted: bool, phone_ctx: bool) -> Option<f32> {
    use phonenumber::country::Id;
    const REGIONS_TRUNK0: &[Id] = &[
        Id::GB,
        Id::DE,
        Id::FR,
        Id::IN,
        Id::IT,
        Id::ES,
        Id::NL,
        Id::BE,
        Id::CH,
        Id::AU,
        Id::BR,
        Id::TR,
        Id::PH,
        Id::SE,
        Id::AT,
    ];
    const REGIONS_OTHER: &[Id] = &[
        Id::US,
        Id::IN,
        Id::CN,
        Id::BR,
        Id::IT,
        Id::ES,
        Id::MX,
        Id::TR,
    ];
    let digits = raw.bytes().filter(u8::is_ascii_digit).count();
    if !(7..=17).contains(&digits) {
        return None;
    }
    let ctx_bonus = if phone_ctx { 0.1 } else { 0.0 };
    if plus {
        if phone_valid(None, raw) {
            return Some(0.9 + ctx_bonus * 0.5);
        }
        return if phone_ctx { Some(0.6) } else { None };
    }
    let first_digit = raw.bytes().find(u8::is_ascii_digit).unwrap_or(b'0');
    // Parsing costs microseconds per region: skip it when even a valid parse would score
    // below the reporting threshold (an unformatted run without context or trunk prefix).
    if !formatted && !phone_ctx && !(first_digit == b'0' && (10..=11).contains(&digits)) {
        return None;
    }
    let regions = if first_digit == b'0' {
        REGIONS_TRUNK0
    } else {
        REGIONS_OTHER
    };
    let valid = regions.iter().any(|&r| phone_valid(Some(r), raw));
    match (valid, formatted, phone_ctx) {
        (true, true, _) => Some(0.75 + ctx_bonus),
        (true, false, true) => Some(0.75),
        // An unformatted digit run that happens to be dialable is not enough on its own.
        // ...except a trunk-prefixed national number ("09171234567").
        (true, false, false) => Some(if first_digit == b'0' && (10..=11).contains(&digits) {
            0.6
        } else {
            0.45
        }),
        (false, true, true) => Some(0.6),
        _ => None,
    }
}

fn analyse(text: &str, groups: &[Group], out: &mut Vec<Candidate>) {
    let b = text.as_bytes();
    let n = groups.len();
    let mut ctx = Ctx {
        text,
        s: groups[0].s,
        e: groups[n - 1].e,
        flags: None,
    };
    let mut i = 0;
    while i < n {
        // Crypto addresses are one token.
        if groups[i].len() >= 25 {
            if let Some(h) = crypto(b, &groups[i], &mut ctx) {
                emit(out, groups[i].s, groups[i].e, h, &mut ctx);
                i += 1;
                continue;
            }
        }
        // Dates: only dates of birth (with context) are reported; others just stop phone matches.
        if let Some(k) = date_shape(b, &groups[i..]) {
            if ctx.has(C_DOB) {
                push(
                    out,
                    groups[i].s,
                    groups[i + k - 1].e,
                    "DATE_OF_BIRTH",
                    Tier::QuasiIdentifier,
                    0.85,
                );
            }
            i += k;
            // Skip a following time "hh:mm(:ss)".
            while i < n
                && groups[i].digits_only()
                && groups[i].len() <= 2
                && i > 0
                && b[groups[i - 1].e] == b':'
                || (i < n
                    && groups[i].len() <= 2
                    && groups[i].digits_only()
                    && i + 1 < n
                    && b[groups[i].e] == b':')
            {
                i += 1;
            }
            continue;
        }
        // Pieces of a failed IBAN or card ("BG80 BNBG 9661 1020 ...", "4111 1111 1111 1112") are
        // not re-read as shorter identifiers.
        if i > 0 && iban_head(b, &groups[0]) {
            break;
        }
        if i > 0
            && groups[i - 1].digits_only()
            && groups[i - 1].len() == 4
            && groups[i].len() == 4
            && groups[i].s - groups[i - 1].e == 1
        {
            i += 1;
            continue;
        }
        // Longest validated window starting at i (also from the first digit of a glued prefix
        // like "is030594W903B").
        let mut best: Option<(usize, usize, Hit)> = None;
        let glued = glued_digit_start(b, &groups[i]);
        'outer: for start in [None, glued] {
            if start.is_none()
                && glued.is_some()
                && groups[i].letters as usize == glued.map_or(0, |g| g - groups[i].s)
            {
                // whole-group attempt is still worth doing; fall through
            }
            for j in (i..n).rev() {
                let Some(w) = build_win(b, &groups[i..=j], start) else {
                    continue;
                };
                if w.len > 40 {
                    continue;
                }
                if let Some(h) = classify(&w, &mut ctx) {
                    let s = start.unwrap_or(groups[i].s);
                    best = Some((s, j, h));
                    break 'outer;
                }
            }
            if glued.is_none() {
                break;
            }
        }
        if let Some((s, j, h)) = best {
            // A weak 9-digit reading loses to a phone number when the text talks about phones.
            let weak = h.score < 0.9 && h.tier == G && ctx.has(C_PHONE);
            if !weak {
                emit(out, s, groups[j].e, h, &mut ctx);
                i = j + 1;
                continue;
            }
        }
        // Cheap gate before reading context: phones and context-only IDs need several digits.
        if groups[i..].iter().map(|g| g.digits as usize).sum::<usize>() < 5 {
            i += 1;
            continue;
        }
        if ctx.has(C_PHONE) {
            if let Some(j) = phone(text, groups, i, &mut ctx, out) {
                i = j + 1;
                continue;
            }
        }
        if let Some(j) = context_only(text, groups, i, &mut ctx, out) {
            i = j + 1;
            continue;
        }
        if !ctx.has(C_PHONE) {
            if let Some(j) = phone(text, groups, i, &mut ctx, out) {
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
}

fn iban_head(b: &[u8], g: &Group) -> bool {
    let t = &b[g.s..g.e];
    (t.len() == 4 || t.len() >= 15)
        && t[0].is_ascii_uppercase()
        && t[1].is_ascii_uppercase()
        && t[2].is_ascii_digit()
        && t[3].is_ascii_digit()
}

fn glued_digit_start(b: &[u8], g: &Group) -> Option<usize> {
    // "is199003052397": lower-case word glued to a number.
    let t = &b[g.s..g.e];
    let k = t.iter().position(u8::is_ascii_digit)?;
    (k >= 2 && t[..k].iter().all(u8::is_ascii_lowercase)).then_some(g.s + k)
}

fn emit(out: &mut Vec<Candidate>, s: usize, e: usize, h: Hit, ctx: &mut Ctx) {
    let mut score = h.score;
    if ctx.has(C_NEG) {
        score -= 0.3;
    }
    push(out, s, e, h.label, h.tier, score);
}

/// Passports and driving licences have no checksum: only a context word makes them findable.
fn context_only(
    text: &str,
    groups: &[Group],
    i: usize,
    ctx: &mut Ctx,
    out: &mut Vec<Candidate>,
) -> Option<usize> {
    if groups[i].letters_only() || groups[i..].iter().map(|g| g.digits as usize).sum::<usize>() < 5
    {
        return None;
    }
    let f = ctx.get();
    if f & (C_PASSPORT | C_LICENCE) == 0 {
        return None;
    }
    let b = text.as_bytes();
    // Longest window of 5-16 compact chars with at least 4 digits; separators only '-' or ' '.
    for j in (i..groups.len()).rev() {
        let w = build_win(b, &groups[i..=j], None)?;
        let c = w.c();
        let digits = c.iter().filter(|x| x.is_ascii_digit()).count();
        if !(5..=16).contains(&c.len()) || digits < 4 || !w.uniform_sep(b"- ") {
            continue;
        }
        // A format of the table (data/id_formats.toml), else any 8-9 characters next to a
        // passport word.
        let passport = f & C_PASSPORT != 0;
        let doc = w
            .single()
            .then(|| doc_format(c, f))
            .flatten()
            .map(|label| (label, if passport { 0.8 } else { 0.75 }));
        let doc = doc.or_else(|| {
            (passport && (8..=9).contains(&c.len()) && w.single()).then_some(("PASSPORT", 0.8))
        });
        if let Some((label, score)) = doc {
            emit(
                out,
                groups[i].s,
                groups[j].e,
                Hit {
                    label,
                    tier: G,
                    score,
                },
                ctx,
            );
            return Some(j);
        }
        if f & C_LICENCE != 0 && w.groups.iter().all(|g| !g.letters_only()) {
            emit(
                out,
                groups[i].s,
                groups[j].e,
                Hit {
                    label: "DRIVER_LICENSE",
                    tier: G,
                    score: 0.75,
                },
                ctx,
            );
            return Some(j);
        }
    }
    None
}

fn phone(
    text: &str,
    groups: &[Group],
    i: usize,
    ctx: &mut Ctx,
    out: &mut Vec<Candidate>,
) -> Option<usize> {
    let b = text.as_bytes();
    // A phone starts a digit run: not the tail of a longer number that failed validation, and
    // never next to SSN wording.
    if i > 0 && groups[i - 1].digits > 0
        || groups[i..].iter().map(|g| g.digits as usize).sum::<usize>() < 7
        || ctx.has(C_SSN)
    {
        return None;
    }
    // Glued to a word by '-' or '_' ("xoxb-1234-...", "file_2021-123"): an identifier, not a phone.
    let gs = groups[i].s;
    if gs >= 2 && matches!(b[gs - 1], b'-' | b'_') && b[gs - 2].is_ascii_alphanumeric() {
        return None;
    }
    // Digit groups; a trailing 'x123' extension may be glued to the last one ("3560x4587").
    let mut j = i;
    let mut digits = 0usize;
    while j < groups.len() {
        let g = &groups[j];
        let t = &b[g.s..g.e];
        let ext_glued = g.letters == 1
            && t.iter()
                .position(|&c| c == b'x' || c == b'X')
                .is_some_and(|k| k > 0 && k + 1 < t.len());
        if !(g.digits_only() || ext_glued) {
            break;
        }
        // Phones do not use ':' or '/' between groups.
        if j > i
            && b[groups[j - 1].e..g.s]
                .iter()
                .any(|&c| c == b':' || c == b'/')
        {
            break;
        }
        digits += g.digits as usize;
        j += 1;
        if ext_glued {
            break;
        }
    }
    if j == i || digits < 7 {
        return None;
    }
    let phone_ctx = ctx.has(C_PHONE);
    let run = &groups[i..j];
    let sep_after = |g: &Group| b.get(g.e).copied().unwrap_or(0);
    let sizes: Vec<usize> = run.iter().map(Group::len).collect();
    let dotted_quad = run.len() == 4
        && run.iter().all(|g| g.len() <= 3)
        && run[..3].iter().all(|g| sep_after(g) == b'.');
    // ID-shaped groupings: SSN/BRN (3-2-x with dashes), personnummer/RRN (6-4, 6-7), SIN/TFN (3-3-3).
    let dash_mid2 = run.len() >= 3 && sizes[1] == 2 && sizes[0] >= 2 && sep_after(&run[0]) == b'-';
    let dated = run.len() == 2
        && sizes[0] == 6
        && (sizes[1] == 4 || sizes[1] == 7)
        && sep_after(&run[0]) == b'-';
    let triple = sizes == [3, 3, 3] && !phone_ctx;
    if dotted_quad || dash_mid2 || dated || triple {
        return None;
    }
    let mut s = groups[i].s;
    let paren = s > 0 && b[s - 1] == b'(';
    if s > 0 && (b[s - 1] == b'+' || paren) {
        s -= 1;
        if paren && s > 0 && b[s - 1] == b'+' {
            s -= 1;
        }
    }
    let plus = b[s] == b'+';
    // Without context, a 5-digit lead group not starting with 0 reads as a house number or postcode.
    let lead5 = sizes[0] >= 5 && b[groups[i].s] != b'0' && run.len() > 1;
    // Try the whole run, then drop trailing groups (a phone followed by other numbers).
    let mut last = j - 1;
    let mut tries = 0;
    loop {
        let e = groups[last].e;
        let raw = &text[s..e];
        let formatted = last > i || plus || paren;
        let strong_shape = plus || phone_ctx || (digits >= 9 && !lead5);
        if strong_shape {
            if let Some(score) = phone_score(raw, plus, formatted, phone_ctx) {
                emit(
                    out,
                    s,
                    e,
                    Hit {
                        label: "PHONE_NUMBER",
                        tier: Tier::Contact,
                        score,
                    },
                    ctx,
                );
                return Some(last);
            }
        }
        tries += 1;
        if last == i || tries >= 3 {
            return None;
        }
        last -= 1;
        digits -= groups[last + 1].digits as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_formats_are_well_formed() {
        let f = doc_formats();
        assert!(f.len() >= 5);
        for d in f {
            assert!(
                crate::labels::get(d.label).is_some_and(|l| l.tier == G),
                "{} is not a government_id label in data/labels.toml",
                d.label
            );
        }
    }

    fn run(text: &str) -> Vec<(String, &'static str, f32)> {
        let mut out = Vec::new();
        IdRecognizer::new().find(text, &mut out);
        out.into_iter()
            .filter(|c| c.score >= 0.5)
            .map(|c| (text[c.start..c.end].to_string(), c.label, c.score))
            .collect()
    }

    fn fires(text: &str, value: &str, label: &str) {
        let r = run(text);
        assert!(
            r.iter().any(|(v, l, _)| v == value && *l == label),
            "{text:?}: expected {label} {value:?}, got {r:?}"
        );
    }

    fn silent(text: &str) {
        let r = run(text);
        assert!(r.is_empty(), "{text:?}: expected nothing, got {r:?}");
    }

    /// The context words are data: every kind is one the code tests, each word appears once,
    /// and every flag has words (a kind lost from the file would silently disable a context).
    #[test]
    fn context_words_are_well_formed() {
        let (words, _) = context_words();
        assert!(words.len() >= 100, "context words lost: {}", words.len());
        let mut seen = std::collections::HashSet::new();
        for (w, _, _) in words {
            assert!(!w.trim().is_empty() && w.trim() == w, "{w:?}");
            assert!(seen.insert(w.to_lowercase()), "{w:?} listed twice");
        }
        for f in [
            C_CARD, C_IBAN, C_SSN, C_ROUTING, C_SIN, C_TFN, C_TAX, C_MEDICARE, C_NHS, C_PASSPORT,
            C_LICENCE, C_PHONE, C_DOB, C_NPI, C_DEA, C_NEG, C_NRIC, C_KR, C_ITIN, C_ID, C_VOTER,
            C_DOCTOR,
        ] {
            assert!(words.iter().any(|c| c.1 == f), "no words for flag {f:#x}");
        }
        assert_eq!(scan_words(b"my tel: 555"), C_PHONE);
        assert_eq!(scan_words(b"tell me"), 0, "a whole word does not match a longer one");
        assert_eq!(scan_words(b"Licensed driver"), C_LICENCE);
    }

    #[test]
    fn a_number_joined_to_a_word_by_an_underscore_is_a_name_part() {
        // A valid TFN check digit, inside a page's name (gitleaks' test data).
        fires("TFN 101375237", "101375237", "AU_TFN");
        silent("'url': 'http://www.2doc.nl/speel~VARA_101375237~mh17-het-verdriet.html'");
        silent("artifact build_101375237_x86");
        // Long numbers with strong checks, and numbers that go on in groups, are read.
        fires("card_4111111111111111", "4111111111111111", "CREDIT_CARD");
        fires(
            "card_4111 1111 1111 1111",
            "4111 1111 1111 1111",
            "CREDIT_CARD",
        );
    }

    #[test]
    fn cards() {
        fires(
            "card 4111 1111 1111 1111 please",
            "4111 1111 1111 1111",
            "CREDIT_CARD",
        );
        fires(
            "my card 4111-1111-1111-1111",
            "4111-1111-1111-1111",
            "CREDIT_CARD",
        );
        fires("Amex 378282246310005.", "378282246310005", "CREDIT_CARD");
        fires(
            "card 180016070420458 lost",
            "180016070420458",
            "CREDIT_CARD",
        );
        silent("card 4111 1111 1111 1112 please");
        silent("number 1234567812345670");
    }

    #[test]
    fn ibans() {
        fires(
            "IBAN DE89 3704 0044 0532 0130 00 thanks",
            "DE89 3704 0044 0532 0130 00",
            "IBAN_CODE",
        );
        fires(
            "this is an iban VG96 VPVG 0000 0123 4567 8901 in a sentence",
            "VG96 VPVG 0000 0123 4567 8901",
            "IBAN_CODE",
        );
        fires(
            "MU17 BOMM 0101 1010 3030 0200 000M UR",
            "MU17 BOMM 0101 1010 3030 0200 000M UR",
            "IBAN_CODE",
        );
        silent("GB29 NWBK 6016 1331 9268 10");
        silent("AL47 212A 1009 0000 0002 3569 8741");
    }

    #[test]
    fn national_ids() {
        fires("Here's my SSN: 460-89-9847", "460-89-9847", "US_SSN");
        silent("ssn 078-05-1120");
        silent("value 000-12-3456");
        fires("ITIN 911-70-1234", "911-70-1234", "US_ITIN");
        fires("130 692 544", "130 692 544", "CA_SIN");
        silent("130 692 545");
        fires("AA 12 34 56 B", "AA 12 34 56 B", "UK_NINO");
        silent("nino: nt 99 88 77 a");
        fires("Mi NIE es X9613851N", "X9613851N", "ES_NIE");
        fires("DNI 12345678Z", "12345678Z", "ES_NIF");
        silent("12345678a");
        fires("cf RSSMRA85T10A562S", "RSSMRA85T10A562S", "IT_FISCAL_CODE");
        fires("NRIC S2740116C was processed", "S2740116C", "SG_NRIC_FIN");
        fires("3998 7654 3211", "3998 7654 3211", "IN_AADHAAR");
        silent("1234:5678:9012");
        fires("131052-308T", "131052-308T", "FI_PERSONAL_IDENTITY_CODE");
        fires(
            "My finnish id code is030594W903B.",
            "030594W903B",
            "FI_PERSONAL_IDENTITY_CODE",
        );
        silent("131052.308T");
        fires("960121-1021413", "960121-1021413", "KR_RRN");
        fires("28 22 123456 12", "28 22 123456 12", "KR_DRIVER_LICENSE");
        fires(
            "면허번호 11-22-123456-12",
            "11-22-123456-12",
            "KR_DRIVER_LICENSE",
        );
        // Presidio's negatives: other groupings, a region that does not exist.
        for t in [
            "111-22-123456-12",
            "11-22-123456-123",
            "29 22 123456 12",
            "282212345612",
        ] {
            let r = run(t);
            assert!(
                r.iter().all(|(_, l, _)| *l != "KR_DRIVER_LICENSE"),
                "{t}: {r:?}"
            );
        }
        fires("Thai National ID 1234567890121", "1234567890121", "TH_TNIN");
        silent("1294567890124");
        fires("TC Kimlik No: 10000000146", "10000000146", "TR_NATIONAL_ID");
        silent("76543210780");
        fires(
            "19910924-2397 är mitt pnr.",
            "19910924-2397",
            "SE_PERSONNUMMER",
        );
        fires("8001015009087", "8001015009087", "ZA_ID_NUMBER");
        silent("AB8001015009087CD");
        fires("NPI 1234567893 and NPI 1245319599", "1245319599", "US_NPI");
        silent("3234567893");
        fires(
            "my certificate number is: BB1388568",
            "BB1388568",
            "MEDICAL_LICENSE",
        );
        silent("The DEA number is  BG8207031");
        fires("Medicare ID: 3CD5-FG7-HJ89", "3CD5-FG7-HJ89", "US_MBI");
        silent("1EG4-TE5-OK73");
        fires("11111111116", "11111111116", "PL_PESEL");
        silent("44051401459");
        fires("Meine Steuer-ID: 12345678903.", "12345678903", "DE_TAX_ID");
        fires("PAN ABCPD1234Z", "ABCPD1234Z", "IN_PAN");
    }

    #[test]
    fn context_types() {
        fires(
            "my passport number is A12803456",
            "A12803456",
            "US_PASSPORT",
        );
        silent("code A12803456");
        fires(
            "My driver's license number is 5130634",
            "5130634",
            "DRIVER_LICENSE",
        );
        fires(
            "routing number 011000015",
            "011000015",
            "ABA_ROUTING_NUMBER",
        );
        fires(
            "Please send the SWIFT code DEUTDEFF now",
            "DEUTDEFF",
            "SWIFT_CODE",
        );
        silent("DEUTDEFF is a word");
        fires("She was born on 11/22/2000.", "11/22/2000", "DATE_OF_BIRTH");
        silent("It's like that since 12/1/1981");
    }

    #[test]
    fn network_and_contact() {
        fires("microsoft.com 192.168.0.1", "192.168.0.1", "IP_ADDRESS");
        fires("IP: 192.168.1.1.", "192.168.1.1", "IP_ADDRESS");
        fires("Connect to [2001:db8::1]:8080", "2001:db8::1", "IP_ADDRESS");
        fires("fe80::1%eth0", "fe80::1%eth0", "IP_ADDRESS");
        // "::" alone is punctuation (a pasted `"\n\n::\n"` reads as " \n \n:: \n" after folding).
        silent("text \n \n:: \n and std :: io");
        fires("log src=:: dst=::1", "::", "IP_ADDRESS");
        fires("route ::/0 via eth0", "::/0", "IP_ADDRESS");
        fires("Use 2001:db8::/32.", "2001:db8::/32", "IP_ADDRESS");
        fires("src=:: dst=::1", "::1", "IP_ADDRESS");
        silent("192.168.1.256");
        silent("fe80::1text");
        silent("MyClass::toString");
        silent("2001::db8::1");
        silent("time 12:20:39 ok");
        fires(
            "Device MAC: AA:BB:CC:DD:EE:FF",
            "AA:BB:CC:DD:EE:FF",
            "MAC_ADDRESS",
        );
        fires("Cisco MAC: 0012.3456.789A", "0012.3456.789A", "MAC_ADDRESS");
        fires("hw 01-b3-4a-67-d9-cf", "01-b3-4a-67-d9-cf", "MAC_ADDRESS");
        silent("Broadcast: FF:FF:FF:FF:FF:FF");
        silent("Mixed 10:2F:33-AC-29-C3");
        fires(
            "my email address is info@presidio.site",
            "info@presidio.site",
            "EMAIL_ADDRESS",
        );
        silent("my email is info@presidio.");
        // Addresses no one can own: reserved domains, made-up user names, names too short for
        // their provider. One letter off each is an address again.
        silent("write to ann@example.com or ann@mail.example.org or bob@host.test");
        fires("mail ann@myexample.com", "ann@myexample.com", "EMAIL_ADDRESS");
        silent(r#"author = "james.fake@ymail.com","#);
        fires(r#"author = "james.fako@ymail.com","#, "james.fako@ymail.com", "EMAIL_ADDRESS");
        silent(r#"--mail-from "src@gmail.com" --mail-rcpt "d.s.t+x@gmail.com""#);
        fires("--mail-from srcsrc@gmail.com", "srcsrc@gmail.com", "EMAIL_ADDRESS");
        fires("--mail-from src@gmx.com", "src@gmx.com", "EMAIL_ADDRESS");
        fires(
            "https://user:hunter2@db.internal/x",
            "user:hunter2",
            "URL_WITH_CREDENTIALS",
        );
        silent("https://db.internal/x?a=b");
    }

    #[test]
    fn phones() {
        fires(
            "United States: (415)555-0132",
            "(415)555-0132",
            "PHONE_NUMBER",
        );
        fires("BR: +55 11 98456 5666", "+55 11 98456 5666", "PHONE_NUMBER");
        fires(
            "international one is +44 (20) 7123 4567",
            "+44 (20) 7123 4567",
            "PHONE_NUMBER",
        );
        fires(
            "They're not answering at 780-999-2181",
            "780-999-2181",
            "PHONE_NUMBER",
        );
        silent("The total was 1234567 units");
        silent("in 2019 there were 45 people");
    }

    #[test]
    fn crypto_addresses() {
        fires(
            "my wallet address is: 16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyZ",
            "16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyZ",
            "CRYPTO",
        );
        fires(
            "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297",
            "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297",
            "CRYPTO",
        );
        silent("my wallet address is: 16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyZ2");
        silent("8f953371d3e85eddb89b05ed6b9e680791055315c73e1025ab5dba7bb2aee189");
    }

    #[test]
    fn never_panics_on_odd_text() {
        let samples = [
            "",
            "@",
            "::",
            "a@b",
            "é1234567890123456é",
            "((((((1",
            "+",
            "1-",
            "-1",
            "ü:ü:ü",
            "0x",
            "12.",
            "1.2.3.4.5.6",
            "::ffff:256.0.0.1",
            "ΛΕΥΚΩΣΙΑ 36903?",
        ];
        for s in samples {
            let mut out = Vec::new();
            IdRecognizer::new().find(s, &mut out);
            for c in out {
                assert!(s.is_char_boundary(c.start) && s.is_char_boundary(c.end));
            }
        }
    }

    #[test]
    fn new_government_and_professional_ids() {
        // German pension number (check digit), silent on a bad check digit or month 13.
        fires(
            "RVNR: 15070649C103 laut Ausweis",
            "15070649C103",
            "DE_SOCIAL_SECURITY",
        );
        fires("65070803A019", "65070803A019", "DE_SOCIAL_SECURITY");
        silent("65070803A012");
        silent("15071349C103");
        // German LANR: check digit in 7th place; bare wins over the range-only ITIN reading.
        fires("LANR 234567701", "234567701", "DE_LANR");
        fires("987654401", "987654401", "DE_LANR");
        silent("123456901");
        // Steuernummer: Land groupings and the ELSTER 13-digit form.
        fires("123/456/78901", "123/456/78901", "DE_TAX_NUMBER");
        fires(
            "Steuernummer 123/4567/8901",
            "123/4567/8901",
            "DE_TAX_NUMBER",
        );
        fires("Finanzamt: 93 815 08152", "93 815 08152", "DE_TAX_NUMBER");
        fires("0281508150123", "0281508150123", "DE_TAX_NUMBER");
        silent("1781508150001");
        silent("0000000000000");
        assert!(run("93 815 08152").iter().all(|r| r.1 != "DE_TAX_NUMBER"));
        // German passport / ID card: ICAO check digit.
        fires("F12345671", "F12345671", "DE_PASSPORT");
        fires("CZ6311T03", "CZ6311T03", "DE_PASSPORT");
        silent("C01234567");
        // Document formats (data/id_formats.toml): by context word, or a value standing alone.
        fires("Mi pasaporte es xyz987654", "xyz987654", "ES_PASSPORT");
        fires(" XY9876543\n", "XY9876543", "UK_PASSPORT");
        fires("AAA123456", "AAA123456", "ES_PASSPORT");
        fires("B3097651", "B3097651", "IN_PASSPORT");
        fires("U1H00B000C", "U1H00B000C", "IT_DRIVER_LICENSE");
        silent("Part XY9876543 ships Monday");
        silent("AA123456");
        silent("AAAA12345");
        // UK driving licence: structure with a date code.
        fires(
            "licence MORGA657054SM9IJ",
            "MORGA657054SM9IJ",
            "UK_DRIVING_LICENCE",
        );
        fires("morga607054sm9ij", "morga607054sm9ij", "UK_DRIVING_LICENCE");
        silent("MORGA613054SM9IJ");
        silent("ABCDE123456FGHIJ");
        // Indian EPIC voter ID.
        fires("my voter: DBJ2289013", "DBJ2289013", "IN_VOTER");
        fires("KSD1287349", "KSD1287349", "IN_VOTER");
        silent("ABNE123456");
        silent("ABC1234567");
        // Philippine TIN: check digit, with tax wording or the 3-3-3-3 grouping.
        fires("TIN: 000123456", "000123456", "PH_TIN");
        fires("BIR TIN: 000123456000", "000123456000", "PH_TIN");
        fires(
            "Please use 000-123-456-000 as your ID",
            "000-123-456-000",
            "PH_TIN",
        );
        silent("Invalid TIN 000-123-457-000");
        silent("Not a TIN 123456789");
        // Korean passport: series letter + 8 digits, or the 2021 form.
        fires("대한민국 여권 S87654321", "S87654321", "KR_PASSPORT");
        fires("M345E9012", "M345E9012", "KR_PASSPORT");
        fires("m456B7890", "m456B7890", "KR_PASSPORT");
        silent("A123B4567");
        silent("M12345678");
        silent("M12A4567");
        // Singapore NRIC/FIN shape with a failing check letter.
        fires("T1234567Z", "T1234567Z", "SG_NRIC_FIN");
        silent("Y8063915Q");
        silent("A1234567Z");
    }
}
