//! Secret recognizer: cloud and SaaS keys and tokens, private key blocks, JWTs, credentials in URLs
//! and curl commands, and high-entropy values assigned to secret-sounding keys.
//!
//! The rules and the context words are data (`data/secrets.toml`, embedded and parsed once); this
//! file keeps the algorithms. Many token formats there are based on the gitleaks rule set
//! (https://github.com/gitleaks/gitleaks, MIT licence, Copyright (c) 2019 Zachary Rice); some
//! format facts come from Yelp/detect-secrets (Apache-2.0). The code is our own.
//!
//! How it stays cheap: a case-insensitive keyword prefilter finds the rules' literal keywords; only
//! rules whose keyword appeared run, and only on merged windows around the hits. The prefilter is a
//! rolling trigram bitmap: each keyword is indexed by its rarest trigram, so one branch-light pass
//! over the bytes (an 8 KB table, no dependent state chain) finds candidates, which are verified
//! against the keyword. Measured here it is several times faster than an Aho-Corasick DFA over
//! the same ~200 keywords. Prose without keywords costs that pass plus `memchr` passes over '.'
//! (Discord tokens have no literal) and '~' (Azure client secrets).
//!
//! Placeholder policy: a value that carries no information (a run of one character such as `xxxx`,
//! `ZZZZ`, `****`; template words such as `YOUR_TOKEN_HERE`, `changeme`; `${VAR}`, `<token>`) is not
//! a credential, so it is not reported, even when it has a vendor's exact shape. `with_placeholders`
//! turns them back on at a low score for callers that prefer detect-secrets' shape-only semantics.

use std::sync::OnceLock;

use regex::{Captures, Regex};

use super::types::{ceil_boundary, floor_boundary, Candidate, Recognizer, Tier};

const LABEL: &str = "SECRET";
const DETECTOR: &str = "secrets";
const PLACEHOLDER_SCORE: f32 = 0.3;

/// What validation a rule's match gets after its regex matched.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// Vendor token with a distinctive prefix or structure: mask and entropy checks.
    #[default]
    Token,
    /// Vendor keyword + exact value format (IBM, SoftLayer, Cloudant...): mask check only, the
    /// keyword and exact length are the evidence.
    Keyed,
    Jwt,
    UrlCred,
    CurlUser,
    CurlHeader,
    PrivateKey,
}

/// A rule compiled: its spec (borrowed from `data/secrets.toml`, parsed once and kept for the
/// program's life, or owned when it is one of the user's rules) and its regex.
struct Rule {
    spec: std::borrow::Cow<'static, SecretRule>,
    re: Regex,
    /// The pattern starts with `^`: it is tried once at each keyword hit instead of over windows.
    anchored: bool,
}

/// The rules and context words, as data (`data/secrets.toml`); see that file for the fields.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretData {
    words: Words,
    rule: Vec<SecretRule>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Words {
    generic_keywords: Vec<String>,
    template_words: Vec<String>,
    template_marks: Vec<String>,
    placeholder_values: Vec<String>,
    not_secret_words: Vec<String>,
    not_secret_last_words: Vec<String>,
    secret_words: Vec<String>,
    secret_word_starts: Vec<String>,
    secret_word_ends: Vec<String>,
    key_qualifiers: Vec<String>,
    public_values: Vec<String>,
}

/// One secret rule, as the built-in table (`data/secrets.toml`) and the user's rules
/// (`[[secrets]]` in `sensitivity.toml`) write it. The user's may leave out what has a default.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SecretRule {
    pub id: String,
    /// Literals (2–64 bytes, any case) near which the rule runs.
    pub keywords: Vec<String>,
    /// Rust `regex` syntax; a named group `s` (or `s1`.. `sN`) is the secret, else the match.
    pub pattern: String,
    /// Window around a keyword hit that the regex scans: bytes before the hit start / after its end.
    #[serde(default)]
    pub back: usize,
    #[serde(default = "default_fwd")]
    pub fwd: usize,
    /// Shannon bits per character the secret needs (0: no entropy check).
    #[serde(default)]
    pub min_entropy: f32,
    #[serde(default)]
    pub check: Check,
    #[serde(default = "default_score")]
    pub score: f32,
    /// The secret must not touch an ASCII alphanumeric on either side.
    #[serde(default = "default_bounds")]
    pub bounds: bool,
}

fn default_fwd() -> usize {
    120
}

fn default_score() -> f32 {
    0.9
}

fn default_bounds() -> bool {
    true
}

/// The embedded rule file, parsed once. It ships inside the binary and the unit tests load it,
/// so a malformed file is a build defect, not user input.
fn data() -> &'static SecretData {
    static DATA: OnceLock<SecretData> = OnceLock::new();
    DATA.get_or_init(|| {
        toml::from_str(include_str!("data/secrets.toml"))
            .unwrap_or_else(|e| panic!("data/secrets.toml: {e}"))
    })
}

/// Is `w` one of `list` (the lists are short; a linear scan beats hashing here)?
fn listed(list: &[String], w: &str) -> bool {
    list.iter().any(|x| x == w)
}

// What may follow a secret-sounding identifier (matched anchored at the identifier's end):
// `= value`, `: "value"`, `("value"`, ` "value"`, `>value</` (XML), ` is value` (prose). The
// name may close a quote, a subscript or both first: `"api_key": …`, `env["API_KEY"] = …`.
const AFTER_IDENT: &str = r#"^(?:(?:["']\]?|\])?[ \t]{0,4}(?:=>|:=|::|===|!==|==|!=|\?=|=|:|<-)[ \t]{0,4}@?(?:"(?P<v1>[^"\r\n]+)"|'(?P<v2>[^'\r\n]+)'|`(?P<v3>[^`\r\n]+)`|(?P<v4>[^\s"'`,;]+))|(?:\(|[ \t]+)[ \t]*@?(?:"(?P<v5>[^"\r\n]+)"|'(?P<v6>[^'\r\n]+)')|>\{(?P<braced>[^{}<\r\n]+)\}</|>(?P<v7>[^<\s]+)</|[ \t]+-[ \t]+(?:"(?P<v9>[^"\r\n]+)"|'(?P<v10>[^'\r\n]+)')|[ \t]+(?:is|was)[ \t]+["'`]?(?P<v8>[^\s"'`]{4,})|[ \t]+(?P<bare>[A-Za-z0-9_\-+/=.~]{16,1024})(?:[\s,;)]|$))"#;
// `"value" == ident` (matched anchored at the identifier's start, so the window ends there).
const BEFORE_IDENT: &str =
    r#"(?:"(?P<v1>[^"\r\n]+)"|'(?P<v2>[^'\r\n]+)')[ \t]{0,4}(?:===|!==|==|!=)[ \t]{0,4}$"#;

/// Case-insensitive multi-keyword finder; see the module documentation. Reports every occurrence
/// of every keyword (overlaps included), in roughly increasing order of position.
struct Prefilter {
    /// 2^16-bit set over hashed, case-folded trigrams.
    bits: Box<[u64; 1024]>,
    /// (trigram hash, keyword id, offset of the trigram in the keyword), sorted by hash.
    index: Vec<(u16, u16, u8)>,
    /// Case-folded keywords.
    folded: Vec<Vec<u8>>,
    /// Keyword ids of two-byte keywords (found with `memchr` on their rarer byte).
    short: Vec<(usize, [u8; 2])>,
}

/// Folds ASCII letters to lower case; other bytes map somewhere consistent, which is all a
/// prefilter needs (candidates are verified with the same fold).
#[inline(always)]
fn fold(c: u8) -> u8 {
    c | 0x20
}

#[inline(always)]
fn tri_hash(k: u32) -> u16 {
    (k.wrapping_mul(0x9E37_79B1) >> 16) as u16
}

/// Rough frequency of a byte in English prose and code, to index each keyword by its rarest trigram.
fn byte_freq(c: u8) -> f32 {
    match c.to_ascii_lowercase() {
        b'e' => 12.7,
        b't' => 9.1,
        b'a' => 8.2,
        b'o' => 7.5,
        b'i' => 7.0,
        b'n' => 6.7,
        b's' => 6.3,
        b'h' => 6.1,
        b'r' => 6.0,
        b'd' => 4.3,
        b'l' => 4.0,
        b'c' => 2.8,
        b'u' => 2.8,
        b'm' => 2.4,
        b'w' => 2.4,
        b'f' => 2.2,
        b'g' => 2.0,
        b'y' => 2.0,
        b'p' => 1.9,
        b'b' => 1.5,
        b'v' => 1.0,
        b'k' => 0.8,
        b'j' => 0.15,
        b'x' => 0.15,
        b'q' => 0.1,
        b'z' => 0.07,
        b' ' => 15.0,
        b'.' => 1.0,
        b'0'..=b'9' => 0.4,
        b'-' | b':' | b'"' | b'\'' => 0.3,
        b'/' => 0.2,
        _ => 0.05,
    }
}

impl Prefilter {
    fn new(keywords: &[&str]) -> Self {
        let mut bits = Box::new([0u64; 1024]);
        let mut index = Vec::new();
        let mut folded = Vec::new();
        let mut short = Vec::new();
        for (id, kw) in keywords.iter().enumerate() {
            let f: Vec<u8> = kw.bytes().map(fold).collect();
            if f.len() < 3 {
                let raw = kw.as_bytes();
                short.push((
                    id,
                    [
                        raw.first().copied().unwrap_or(b' '),
                        raw.get(1).copied().unwrap_or(b' '),
                    ],
                ));
            } else {
                let raw = kw.as_bytes();
                let mut best = (f32::MAX, 0usize);
                for o in 0..=raw.len() - 3 {
                    let score = byte_freq(raw[o]) * byte_freq(raw[o + 1]) * byte_freq(raw[o + 2]);
                    if score < best.0 {
                        best = (score, o);
                    }
                }
                let o = best.1;
                // Little-endian, as the scan reads trigrams out of a loaded word.
                let k = f[o] as u32 | (f[o + 1] as u32) << 8 | (f[o + 2] as u32) << 16;
                let h = tri_hash(k);
                bits[(h >> 6) as usize] |= 1u64 << (h & 63);
                index.push((h, id as u16, o as u8));
            }
            folded.push(f);
        }
        index.sort_unstable();
        Prefilter {
            bits,
            index,
            folded,
            short,
        }
    }

    fn for_each_hit(&self, text: &str, mut hit: impl FnMut(usize, usize, usize)) {
        let b = text.as_bytes();
        let has = |k: u32| {
            let h = tri_hash(k);
            (self.bits[(h >> 6) as usize] >> (h & 63)) & 1
        };
        // Six trigrams out of each 8-byte load, looked up independently, one branch for all:
        // almost every trigram of prose misses.
        let mut i = 0;
        while i + 8 <= b.len() {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            let w = u64::from_le_bytes(a) | 0x2020_2020_2020_2020;
            let tri = |j: usize| (w >> (8 * j)) as u32 & 0x00FF_FFFF;
            let mut any = 0u64;
            for j in 0..6 {
                any |= has(tri(j)) << j;
            }
            while any != 0 {
                let j = any.trailing_zeros() as usize;
                any &= any - 1;
                self.verify(b, i + j, tri_hash(tri(j)), &mut hit);
            }
            i += 6;
        }
        while i + 3 <= b.len() {
            let k =
                fold(b[i]) as u32 | (fold(b[i + 1]) as u32) << 8 | (fold(b[i + 2]) as u32) << 16;
            if has(k) != 0 {
                self.verify(b, i, tri_hash(k), &mut hit);
            }
            i += 1;
        }
        for &(id, pair) in &self.short {
            // Two-byte keywords (`q~`): search the second, rarer byte.
            for i in memchr::memchr_iter(pair[1], b) {
                if i > 0 && fold(b[i - 1]) == fold(pair[0]) {
                    hit(id, i - 1, i + 1);
                }
            }
        }
    }

    #[cold]
    fn verify(&self, b: &[u8], t: usize, h: u16, hit: &mut impl FnMut(usize, usize, usize)) {
        let first = self.index.partition_point(|e| e.0 < h);
        for &(eh, id, off) in &self.index[first..] {
            if eh != h {
                break;
            }
            let off = off as usize;
            if t < off {
                continue;
            }
            let s = t - off;
            let kw = &self.folded[id as usize];
            let e = s + kw.len();
            if e <= b.len() && b[s..e].iter().zip(kw).all(|(&x, &y)| fold(x) == y) {
                hit(id as usize, s, e);
            }
        }
    }
}

/// Finds secrets; see the module documentation.
pub struct SecretRecognizer {
    pre: Prefilter,
    /// Keyword pattern id -> rules to run near it.
    kw_rules: Vec<Vec<usize>>,
    rules: Vec<Rule>,
    /// Keyword pattern id -> is it a generic secret word (`password`, `token`, `_key`...).
    generic_kw: Vec<bool>,
    after_ident: Regex,
    before_ident: Regex,
    discord: Regex,
    keep_placeholders: bool,
}

impl Default for SecretRecognizer {
    fn default() -> Self {
        Self::new()
    }
}

impl SecretRecognizer {
    pub fn new() -> Self {
        match Self::with_user_rules(&[]) {
            Ok(r) => r,
            // The built-in rules are embedded data checked by the unit tests.
            Err(e) => panic!("data/secrets.toml: {e}"),
        }
    }

    /// The built-in rules and the user's own (`[[secrets]]` in `sensitivity.toml`), which run
    /// through the same prefilter, windows and validators. A user rule that does not compile
    /// or has no usable keyword is a clear error naming it.
    pub fn with_user_rules(user: &[SecretRule]) -> Result<Self, crate::SensitivityError> {
        let data = data();
        let mut keywords: Vec<String> = Vec::new();
        let mut kw_rules: Vec<Vec<usize>> = Vec::new();
        let mut rules = Vec::new();
        let specs = data
            .rule
            .iter()
            .map(std::borrow::Cow::Borrowed)
            .chain(user.iter().cloned().map(std::borrow::Cow::Owned));
        for (i, spec) in specs.enumerate() {
            let bad = |why: String| {
                crate::SensitivityError::BadRules(format!("secret rule {:?}: {why}", spec.id))
            };
            if spec.keywords.is_empty()
                || spec.keywords.iter().any(|k| !(2..=64).contains(&k.len()))
            {
                return Err(bad("needs keywords of 2 to 64 bytes".into()));
            }
            let re = Regex::new(&ascii_classes(&spec.pattern)).map_err(|e| bad(e.to_string()))?;
            for kw in &spec.keywords {
                let pid = keyword_id(&mut keywords, &mut kw_rules, &kw.to_lowercase());
                kw_rules[pid].push(i);
            }
            rules.push(Rule {
                anchored: spec.pattern.starts_with('^'),
                spec,
                re,
            });
        }
        let generic = &data.words.generic_keywords;
        for kw in generic {
            keyword_id(&mut keywords, &mut kw_rules, kw);
        }
        let generic_kw = keywords.iter().map(|k| listed(generic, k)).collect();
        let refs: Vec<&str> = keywords.iter().map(String::as_str).collect();
        let pre = Prefilter::new(&refs);
        let discord =
            Regex::new(r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}")
                .expect("discord regex");
        Ok(SecretRecognizer {
            pre,
            kw_rules,
            rules,
            generic_kw,
            after_ident: Regex::new(AFTER_IDENT).expect("after-ident regex"),
            before_ident: Regex::new(BEFORE_IDENT).expect("before-ident regex"),
            discord,
            keep_placeholders: false,
        })
    }

    /// Also report information-free placeholders that have a vendor's exact shape (`AKIAZZZZ...`,
    /// `ghp_xxxx...`), at score 0.3. Off by default.
    #[cfg_attr(not(test), allow(dead_code))] // a switch kept for tests and a future setting
    pub fn with_placeholders(mut self, yes: bool) -> Self {
        self.keep_placeholders = yes;
        self
    }

    /// Runs rule `ri` over `text[lo..hi]`: every match, or (anchored rules) the one at `lo`.
    fn run_window(&self, text: &str, ri: usize, lo: usize, hi: usize, found: &mut Vec<Candidate>) {
        let rule = &self.rules[ri];
        let lo = floor_boundary(text, lo);
        let hi = ceil_boundary(text, hi.min(text.len()));
        if lo >= hi {
            return;
        }
        let win = &text[lo..hi];
        // A DFA-only test first: capture extraction is far costlier and most windows hold nothing.
        if !rule.re.is_match(win) {
            return;
        }
        let all;
        let one;
        let iter: &mut dyn Iterator<Item = Captures> = if rule.anchored {
            one = rule.re.captures(win).into_iter();
            &mut { one }
        } else {
            all = rule.re.captures_iter(win);
            &mut { all }
        };
        for caps in iter {
            let (s, e) = match secret_group(&caps) {
                Some(m) => (lo + m.0, lo + m.1),
                None => continue,
            };
            if s >= e {
                continue;
            }
            // A match cut by the window end may be a longer token in the full text.
            if e == hi
                && hi < text.len()
                && rule.spec.check != Check::PrivateKey
                && is_token_byte(text.as_bytes()[hi])
            {
                continue;
            }
            if rule.spec.bounds && !bounded(text, s, e) {
                continue;
            }
            let verdict = match rule.spec.check {
                Check::Token => token_verdict(&text[s..e], rule.spec.min_entropy),
                Check::Keyed => keyed_verdict(&text[s..e], rule.spec.min_entropy),
                Check::Jwt => jwt_verdict(&text[s..e]),
                Check::UrlCred => {
                    let user = caps.name("u").map(|m| m.as_str()).unwrap_or("");
                    url_cred_verdict(user, &text[s..e])
                }
                Check::CurlUser => {
                    let (v, ns, ne) = curl_user_span(&text[s..e]);
                    let r = curl_user_verdict(v);
                    push(
                        found,
                        s + ns,
                        s + ne,
                        r,
                        rule.spec.score,
                        self.keep_placeholders,
                    );
                    continue;
                }
                Check::CurlHeader => {
                    if let Some((ns, ne, r)) = curl_header(&text[s..e]) {
                        push(
                            found,
                            s + ns,
                            s + ne,
                            r,
                            rule.spec.score,
                            self.keep_placeholders,
                        );
                    }
                    continue;
                }
                Check::PrivateKey => {
                    if let Some((ee, r)) = private_key_end(text, s, e) {
                        push(found, s, ee, r, rule.spec.score, self.keep_placeholders);
                    }
                    continue;
                }
            };
            push(
                found,
                s,
                e,
                verdict,
                rule.spec.score,
                self.keep_placeholders,
            );
        }
    }

    /// A generic keyword at `ks..ke`: expand to the identifier around it and, if that names a
    /// credential, look for a value right after it (or a `"value" ==` right before it).
    fn generic_at(
        &self,
        text: &str,
        ks: usize,
        ke: usize,
        last: &mut (usize, usize),
        found: &mut Vec<Candidate>,
    ) {
        let b = text.as_bytes();
        let ident_byte =
            |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'@' | b'-');
        let mut is = ks;
        while is > 0 && ks - is < 80 && ident_byte(b[is - 1]) {
            is -= 1;
        }
        let mut ie = ke;
        while ie < b.len() && ie - ke < 80 && ident_byte(b[ie]) {
            ie += 1;
        }
        // Sentence punctuation and option dashes are not part of the name.
        while ie > ke && matches!(b[ie - 1], b'.' | b'-' | b'@') {
            ie -= 1;
        }
        while is < ks && matches!(b[is], b'.' | b'-' | b'@') {
            is += 1;
        }
        if (is, ie) == *last {
            return;
        }
        *last = (is, ie);
        // Cheap gate before any allocation: a value can only follow an operator, a quote, a call
        // or `is`/`was`; a reversed comparison needs `=` before the name.
        let mut k = ie;
        while k < b.len() && k - ie < 6 && matches!(b[k], b' ' | b'\t') {
            k += 1;
        }
        let after_ok = k < b.len()
            && (matches!(
                b[k],
                b'=' | b':' | b'(' | b'"' | b'\'' | b'`' | b'<' | b'!' | b'?' | b'>' | b']'
            ) || (k > ie
                && (b[k..].starts_with(b"is ")
                    || b[k..].starts_with(b"was ")
                    || b[k..].starts_with(b"- ")
                    || b[k].is_ascii_alphanumeric())));
        let mut j = is;
        while j > 0 && is - j < 6 && (b[j - 1] == b' ' || b[j - 1] == b'\t') {
            j -= 1;
        }
        let before_ok = j > 0 && b[j - 1] == b'=';
        if !(after_ok || before_ok) {
            return;
        }
        // Only ASCII bytes were crossed, so `is` and `ie` are char boundaries.
        let name = ident_name(&text[is..ie]);
        if name == Name::No {
            return;
        }
        let verdict = |v: &str| match name {
            Name::Strong => generic_verdict(v),
            _ => weak_name_verdict(v),
        };
        let hi = ceil_boundary(text, ie.saturating_add(1024).min(b.len()));
        if let Some(caps) = self.after_ident.captures(&text[ie..hi]) {
            if let Some(m) = caps.name("braced") {
                // `<secret>{...}</secret>`: a wrapped value, or several words of which the
                // random-looking ones are the credential.
                let (bs, be) = (ie + m.start(), ie + m.end());
                let inner = &text[bs..be];
                if inner.contains([' ', '\t']) {
                    for part in inner.split([' ', '\t']).filter(|p| !p.is_empty()) {
                        let ps = bs + (part.as_ptr() as usize - inner.as_ptr() as usize);
                        if verdict(part) == Verdict::Accept {
                            push(found, ps, ps + part.len(), Verdict::Accept, 0.75, false);
                        }
                    }
                } else {
                    push(
                        found,
                        bs - 1,
                        be + 1,
                        verdict(inner),
                        0.75,
                        self.keep_placeholders,
                    );
                }
            } else if let Some(m) = caps.name("bare") {
                // `Using token 9fQ2…`: a value with no operator before it counts only when it is
                // clearly generated, whatever the name, since prose puts words there.
                let (s, e) = (ie + m.start(), ie + m.end());
                push(
                    found,
                    s,
                    e,
                    weak_name_verdict(&text[s..e]),
                    0.75,
                    self.keep_placeholders,
                );
            } else if let Some((s, e)) = secret_group(&caps) {
                let (s, e) = trim_value(text, ie + s, ie + e);
                push(
                    found,
                    s,
                    e,
                    verdict(&text[s..e]),
                    0.75,
                    self.keep_placeholders,
                );
            }
        }
        // Reverse comparison: only when an operator sits right before the identifier.
        if before_ok {
            let lo = floor_boundary(text, is.saturating_sub(230));
            if let Some(caps) = self.before_ident.captures(&text[lo..is]) {
                if let Some((s, e)) = secret_group(&caps) {
                    push(
                        found,
                        lo + s,
                        lo + e,
                        verdict(&text[lo + s..lo + e]),
                        0.75,
                        self.keep_placeholders,
                    );
                }
            }
        }
    }

    /// Discord bot tokens have no literal prefix: look at each '.' followed by 6 token chars and
    /// another '.', which ordinary prose almost never has.
    fn discord_pass(&self, text: &str, found: &mut Vec<Candidate>) {
        let b = text.as_bytes();
        for i in memchr::memchr_iter(b'.', b) {
            if i < 24 || i + 35 > b.len() || b[i + 7] != b'.' {
                continue;
            }
            if !b[i + 1..i + 7].iter().all(|&c| is_token_byte(c)) {
                continue;
            }
            let lo = floor_boundary(text, i.saturating_sub(26));
            let hi = ceil_boundary(text, (i + 48).min(b.len()));
            for m in self.discord.find_iter(&text[lo..hi]) {
                let (s, e) = (lo + m.start(), lo + m.end());
                // The first dot of the token must be this one, so each token is seen once.
                if text[s..e].find('.').map(|d| s + d) != Some(i) {
                    continue;
                }
                if !bounded(text, s, e) {
                    continue;
                }
                let v = token_verdict(&text[s..e], 3.0);
                push(found, s, e, v, 0.85, self.keep_placeholders);
            }
        }
    }
}

impl Recognizer for SecretRecognizer {
    fn name(&self) -> &'static str {
        "secrets"
    }

    fn find(&self, text: &str, out: &mut Vec<Candidate>) {
        let mut found: Vec<Candidate> = Vec::new();
        // Per rule, the window still open; windows that overlap are merged so each rule scans each
        // byte at most about once and memory stays bounded by the number of rules.
        let mut open: Vec<Option<(usize, usize)>> = vec![None; self.rules.len()];
        let mut last_ident = (usize::MAX, usize::MAX);
        self.pre.for_each_hit(text, |pid, ms, me| {
            if self.generic_kw[pid] {
                self.generic_at(text, ms, me, &mut last_ident, &mut found);
            }
            for &ri in &self.kw_rules[pid] {
                let rule = &self.rules[ri];
                if rule.anchored {
                    self.run_window(text, ri, ms, me.saturating_add(rule.spec.fwd), &mut found);
                    continue;
                }
                let lo = ms.saturating_sub(rule.spec.back);
                let hi = me.saturating_add(rule.spec.fwd);
                match open[ri] {
                    Some((olo, ohi)) if lo <= ohi => open[ri] = Some((olo.min(lo), ohi.max(hi))),
                    Some((olo, ohi)) => {
                        self.run_window(text, ri, olo, ohi, &mut found);
                        open[ri] = Some((lo, hi));
                    }
                    None => open[ri] = Some((lo, hi)),
                }
            }
        });
        for (ri, w) in open.iter().enumerate() {
            if let Some((lo, hi)) = *w {
                self.run_window(text, ri, lo, hi, &mut found);
            }
        }
        self.discord_pass(text, &mut found);
        quoted_pass(text, &mut found);
        resolve_overlaps(&mut found);
        // An already published example key (Firebase's SDK keys) tells the provider nothing: it is
        // a placeholder by what is known of it, not by its shape.
        found.retain_mut(|c| {
            if !is_public_value(&text[c.start..c.end]) {
                return true;
            }
            c.score = PLACEHOLDER_SCORE;
            self.keep_placeholders
        });
        out.extend(found);
    }
}

/// A quoted value that is clearly generated (`'ZrGOAl9jlTlAKxw4hXZXeRmd6wvndEr2'`) is a credential
/// even when nothing names it: code quotes keys that vendor rules do not know, and quotes words,
/// paths and identifiers far more often than random strings. Hex (hashes, UUIDs) is left alone,
/// and so is a value whose name says it is something else (`csrf_token`, `request_id`).
/// Measured: bare near-miss vendor shapes (detect-secrets' and gitleaks' negatives) are mostly
/// unquoted, so requiring the quotes keeps them clean.
fn quoted_pass(text: &str, found: &mut Vec<Candidate>) {
    let b = text.as_bytes();
    let value_byte = |c: u8| {
        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+' | b'/' | b'=' | b'.' | b'~')
    };
    let mut next = 0;
    for i in memchr::memchr2_iter(b'"', b'\'', b) {
        if i < next || (i > 0 && b[i - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let q = b[i];
        let mut j = i + 1;
        while j < b.len() && j - i <= 600 && value_byte(b[j]) {
            j += 1;
        }
        if j >= b.len() || b[j] != q || j - i - 1 < 24 {
            continue;
        }
        next = j + 1;
        // Only ASCII bytes were crossed, so `i + 1` and `j` are char boundaries.
        let v = &text[i + 1..j];
        if !generated_value(v) || named_otherwise(text, i) {
            continue;
        }
        push(found, i + 1, j, Verdict::Accept, 0.6, false);
    }
}

/// Long, letters and digits interleaved throughout, high entropy, not hex, not a path or URL.
fn generated_value(v: &str) -> bool {
    let n = v.len();
    let hex = v.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-');
    !hex && !v.contains("://")
        && !v.starts_with('/')
        && v.matches('/').count() < 2
        && letter_digit_switches(v) >= 4.max(n / 6)
        && shannon(v) >= 4.0
        && generic_verdict(v) == Verdict::Accept
}

/// The identifier a quoted value at `q` is assigned to (`name = "`, `"name": "`, `name="`) names
/// something that is not a credential.
fn named_otherwise(text: &str, q: usize) -> bool {
    let b = text.as_bytes();
    let mut k = q;
    while k > 0 && matches!(b[k - 1], b' ' | b'\t') {
        k -= 1;
    }
    if k == 0 || !matches!(b[k - 1], b'=' | b':') {
        return false;
    }
    k -= 1;
    while k > 0 && matches!(b[k - 1], b' ' | b'\t' | b'"' | b'\'' | b':') {
        k -= 1;
    }
    let e = k;
    while k > 0
        && e - k < 80
        && (b[k - 1].is_ascii_alphanumeric() || matches!(b[k - 1], b'_' | b'-' | b'.'))
    {
        k -= 1;
    }
    if k == e {
        return false;
    }
    let mut name = &text[k..e];
    // An HTML field: `<input name="authenticity_token" value="...">` is named by its `name`.
    if name.eq_ignore_ascii_case("value") {
        let tag = &b[floor_boundary(text, k.saturating_sub(200))..k];
        if let Some(lt) = memchr::memrchr(b'<', tag) {
            let tag = &tag[lt..];
            if let Some(n) = memchr::memmem::rfind(tag, b"name=") {
                let rest = &tag[n + 5..];
                let rest = rest
                    .strip_prefix(b"\"")
                    .or(rest.strip_prefix(b"'"))
                    .unwrap_or(rest);
                let len = rest
                    .iter()
                    .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')))
                    .unwrap_or(rest.len());
                // ASCII only, so this is valid UTF-8.
                name = std::str::from_utf8(&rest[..len]).unwrap_or(name);
            }
        }
    }
    names_something_else(&ident_words(name))
}

/// An identifier's words say it names something other than a credential (`csrf_token`,
/// `password_url`, `keyId`): the one exclusion every name test applies.
fn names_something_else(words: &[String]) -> bool {
    let lists = &data().words;
    words.iter().any(|x| listed(&lists.not_secret_words, x))
        || words
            .last()
            .is_some_and(|l| listed(&lists.not_secret_last_words, l))
}

/// Rewrites `\w`, `\d`, `\s` to their ASCII POSIX classes: the Unicode versions make some of
/// these counted repetitions compile into huge automata, and secrets are ASCII anyway.
fn ascii_classes(pat: &str) -> String {
    let mut out = String::with_capacity(pat.len() + 16);
    let mut depth = 0usize;
    let mut chars = pat.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let n = match chars.next() {
                    Some(n) => n,
                    None => {
                        out.push(c);
                        break;
                    }
                };
                let class = match n {
                    'w' => Some("[:word:]"),
                    'd' => Some("[:digit:]"),
                    's' => Some("[:space:]"),
                    _ => None,
                };
                match class {
                    Some(cl) if depth > 0 => out.push_str(cl),
                    Some(cl) => {
                        out.push('[');
                        out.push_str(cl);
                        out.push(']');
                    }
                    None => {
                        out.push(c);
                        out.push(n);
                    }
                }
            }
            '[' => {
                depth += 1;
                out.push(c);
                // A `]` right after `[` or `[^` is a literal.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Verdicts

#[derive(Clone, Copy, PartialEq, Debug)]
enum Verdict {
    Accept,
    /// Shape of a secret but no information in it.
    Placeholder,
    Reject,
}

fn push(found: &mut Vec<Candidate>, s: usize, e: usize, v: Verdict, score: f32, keep_ph: bool) {
    let score = match v {
        Verdict::Accept => score,
        Verdict::Placeholder if keep_ph => PLACEHOLDER_SCORE,
        _ => return,
    };
    found.push(Candidate {
        start: s,
        end: e,
        label: LABEL,
        tier: Tier::Secret,
        score,
        detector: DETECTOR,
    });
}

fn keyword_id(keywords: &mut Vec<String>, kw_rules: &mut Vec<Vec<usize>>, kw: &str) -> usize {
    match keywords.iter().position(|k| k == kw) {
        Some(p) => p,
        None => {
            keywords.push(kw.to_string());
            kw_rules.push(Vec::new());
            keywords.len() - 1
        }
    }
}

/// Drops trailing `,;)` and spaces that a bare value picked up (`passwd := x,`).
fn trim_value(text: &str, s: usize, mut e: usize) -> (usize, usize) {
    let b = text.as_bytes();
    while e > s && matches!(b[e - 1], b',' | b';' | b' ' | b'\t') {
        e -= 1;
    }
    (s, e)
}

/// First participating group named `s*` or `v*`, else the whole match, as byte offsets.
fn secret_group(caps: &Captures) -> Option<(usize, usize)> {
    for name in [
        "s", "s1", "s2", "s3", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",
    ] {
        if let Some(m) = caps.name(name) {
            return Some((m.start(), m.end()));
        }
    }
    caps.get(0).map(|m| (m.start(), m.end()))
}

fn is_token_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// The secret does not continue into neighbouring token characters (`[A-Za-z0-9_-]`), and is not
/// the tail of a dotted name (`file.ico-<hash>.png`, `xoxe.xoxp-...`).
fn bounded(text: &str, s: usize, e: usize) -> bool {
    let b = text.as_bytes();
    (s == 0 || !(is_token_byte(b[s - 1]) || b[s - 1] == b'.'))
        && (e >= b.len() || !is_token_byte(b[e]))
}

fn token_verdict(v: &str, min_entropy: f32) -> Verdict {
    if looks_masked(v) || has_template_words(v) {
        return Verdict::Placeholder;
    }
    if shannon(v) < min_entropy {
        return Verdict::Reject;
    }
    Verdict::Accept
}

fn keyed_verdict(v: &str, min_entropy: f32) -> Verdict {
    if looks_masked(v) || has_template_words(v) {
        return Verdict::Placeholder;
    }
    if min_entropy > 0.0 && shannon(v) < min_entropy {
        return Verdict::Reject;
    }
    Verdict::Accept
}

/// Shannon entropy in bits per byte.
fn shannon(s: &str) -> f32 {
    let b = s.as_bytes();
    if b.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &c in b {
        counts[c as usize] += 1;
    }
    let n = b.len() as f32;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f32 / n;
            -p * p.log2()
        })
        .sum()
}

/// A value dominated by one character (`xxxx`, `ZZZZ`, `0000`, `****`): a mask, not a secret.
fn looks_masked(v: &str) -> bool {
    let mut counts = [0u32; 256];
    let mut n = 0u32;
    let mut run = 0u32;
    let mut prev = 0u8;
    let mut max_run = 0u32;
    for &c in v.as_bytes() {
        let c = c.to_ascii_lowercase();
        if c == prev {
            run += 1;
        } else {
            run = 1;
            prev = c;
        }
        if matches!(c, b'x' | b'*' | b'#' | b'.') {
            max_run = max_run.max(run);
        }
        // Separators do not count towards the dominance ratio.
        if matches!(c, b'-' | b'_' | b'.' | b'/' | b':') {
            continue;
        }
        counts[c as usize] += 1;
        n += 1;
    }
    if n == 0 {
        return true;
    }
    let top = counts.iter().copied().max().unwrap_or(0);
    (n >= 3 && top == n) || (n >= 6 && top * 10 >= n * 6) || max_run >= 6
}

/// Template wording inside a token: `YOUR_TOKEN_HERE`, `<...>`, `changeme`, `redacted`...
fn has_template_words(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    data()
        .words
        .template_words
        .iter()
        .any(|w| l.contains(w.as_str()))
        || l.ends_with("here")
        // A URL holds several parts (a Slack hook's `TAGGINGEXAMPLE/…/<secret>`): one marked
        // part does not make the others samples.
        || (!v.contains("://")
            && data()
                .words
                .template_marks
                .iter()
                .any(|m| v.contains(m.as_str())))
}

/// A whole value that is a stand-in word rather than a credential.
fn is_placeholder_word(v: &str) -> bool {
    let t = v.trim_matches(|c| c == '"' || c == '\'');
    data()
        .words
        .placeholder_values
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

/// A credential published for anyone to read (`data/secrets.toml`'s `public_values`).
fn is_public_value(v: &str) -> bool {
    listed(&data().words.public_values, v)
}

/// Variable references, templates and format strings: `$VAR`, `${x}`, `{{ x }}`, `%s`, `<x>`.
fn is_reference(v: &str) -> bool {
    let b = v.as_bytes();
    match b.first() {
        None => true,
        Some(b'$') | Some(b'%') | Some(b'<') | Some(b'[') => true,
        Some(b'{') => b.get(1) == Some(&b'{') || v.ends_with('}'),
        Some(b'#') => b.get(1) == Some(&b'{'),
        _ => false,
    }
}

/// Share of adjacent pairs that step by +1 (`abcd`, `1234`, `AbCdEf`): sequential filler.
fn sequential_ratio(v: &str) -> f32 {
    let b = v.as_bytes();
    if b.len() < 2 {
        return 0.0;
    }
    let steps = b
        .windows(2)
        .filter(|w| {
            let (x, y) = (w[0].to_ascii_lowercase(), w[1].to_ascii_lowercase());
            x.is_ascii_alphanumeric() && y == x.wrapping_add(1)
        })
        .count();
    steps as f32 / (b.len() - 1) as f32
}

fn generic_verdict(raw: &str) -> Verdict {
    let v = raw.trim();
    let n = v.chars().count();
    if n < 6 || v.chars().any(char::is_whitespace) || is_reference(v) {
        return Verdict::Reject;
    }
    if is_placeholder_word(v) || looks_masked(v) || has_template_words(v) {
        return Verdict::Placeholder;
    }
    // Letters and separators only: an identifier or a word, not a key (gitleaks' rule of thumb),
    // unless upper and lower case are mixed at random (`wjXKCFzOWEPRqhTmmbWtVQ`).
    if v.bytes()
        .all(|c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'.' | b'-'))
        && !random_case(v)
    {
        return Verdict::Reject;
    }
    // Paths, URLs, dotted references, calls.
    if v.starts_with('/') || v.starts_with("./") || v.starts_with("~/") || v.contains("://") {
        return Verdict::Reject;
    }
    if looks_like_code_ref(v) {
        return Verdict::Reject;
    }
    let min = 3.0f32.min((n as f32).log2() - 0.35);
    if shannon(v) < min || sequential_ratio(v) >= 0.5 {
        return Verdict::Reject;
    }
    // Artifact coordinates and versions (`jjwt-jackson-0.11.2`) are not credentials.
    if ends_with_version(v) {
        return Verdict::Reject;
    }
    // Numbers only (ports, counts, ids) are not credentials.
    if v.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
        return Verdict::Reject;
    }
    Verdict::Accept
}

/// `name-1.2.3`, `lib_2.13`: a trailing dotted version number after a letter-bearing name.
fn ends_with_version(v: &str) -> bool {
    let tail_len = v
        .bytes()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == b'.')
        .count();
    let tail = &v[v.len() - tail_len..];
    let head = &v[..v.len() - tail_len];
    tail.matches('.').count() >= 1
        && tail.split('.').all(|p| !p.is_empty() && p.len() <= 4)
        && (head.ends_with('-')
            || head.ends_with('_')
            || head.ends_with(':')
            || head.ends_with('v'))
        && head.bytes().any(|c| c.is_ascii_alphabetic())
}

/// `os.environ.get(`, `config.db.password`, `getSecret(`, `ENV_VAR_NAME`.
fn looks_like_code_ref(v: &str) -> bool {
    let b = v.as_bytes();
    if !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
        return false;
    }
    let ident_end = b
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b'.'))
        .unwrap_or(b.len());
    let ident = &v[..ident_end];
    if ident_end < b.len() && b[ident_end] == b'(' {
        return true;
    }
    // Whole value is a dotted path of identifiers like `settings.SECRET_KEY` or `self.token2`;
    // not a dotted token whose parts are generated (`oNKE6BzKsFuO8qvuau.kqvuAuEkFUS5hoEo...`).
    ident_end == b.len()
        && ident.contains('.')
        && ident.split('.').all(|p| {
            p.as_bytes()
                .first()
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                && !(p.len() >= 16 && letter_digit_switches(p) >= 3)
        })
}

/// Splits an identifier into lower-case words at `_ - . $ @` and camelCase boundaries.
fn ident_words(ident: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in ident.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// How strongly an identifier names a credential.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Name {
    No,
    /// `key`, `Key1`, `solarwindsKey`, `adobe KEY`: a key of some kind, which may be a lookup
    /// key as well as a credential. Only a value that is clearly random counts.
    Weak,
    /// `db_password`, `apiKey`, `CLIENT_SECRET`: any value that is not a word, path, reference or
    /// placeholder counts.
    Strong,
}

fn ident_name(ident: &str) -> Name {
    if ident_is_secret(ident) {
        return Name::Strong;
    }
    let words = ident_words(ident);
    let excluded = names_something_else(&words);
    let keyish = |w: &String| {
        w.strip_prefix("key")
            .is_some_and(|rest| rest.bytes().all(|c| c.is_ascii_digit()))
    };
    if !excluded && words.iter().any(keyish) {
        Name::Weak
    } else {
        Name::No
    }
}

/// The value test behind a weak name: what the strong test accepts, and in addition
/// random-looking — long, letters and digits interleaved, high entropy — as generated keys are
/// and lookup keys, words, dates and identifiers are not.
fn weak_name_verdict(v: &str) -> Verdict {
    let verdict = generic_verdict(v);
    if verdict != Verdict::Accept {
        return verdict;
    }
    let n = v.chars().count();
    // Generated keys interleave letters and digits; names and dates keep them in runs
    // (`user-profile-2024-11-03`, `report_2023_q4_final`).
    let switches = letter_digit_switches(v);
    if n >= 16
        && switches >= (n / 8).clamp(2, 8)
        && shannon(v) >= 3.3f32.min((n as f32).log2() - 0.6)
    {
        Verdict::Accept
    } else {
        Verdict::Reject
    }
}

/// Letters whose case changes as often as chance would have it: a quarter to three quarters
/// upper case and a case change at least every third letter. camelCase and ACRONYMCase
/// identifiers change case once a word (`getAccessTokenForUser`, `XMLHttpRequestHandler`).
fn random_case(v: &str) -> bool {
    let letters: Vec<u8> = v.bytes().filter(u8::is_ascii_alphabetic).collect();
    let n = letters.len();
    if n < 12 {
        return false;
    }
    let upper = letters.iter().filter(|c| c.is_ascii_uppercase()).count();
    let changes = letters
        .windows(2)
        .filter(|w| w[0].is_ascii_uppercase() != w[1].is_ascii_uppercase())
        .count();
    upper * 4 >= n && upper * 4 <= n * 3 && changes * 3 >= n
}

/// How often a letter and a digit touch: many times in generated strings, rarely in names.
fn letter_digit_switches(v: &str) -> usize {
    v.as_bytes()
        .windows(2)
        .filter(|w| {
            (w[0].is_ascii_digit() && w[1].is_ascii_alphabetic())
                || (w[0].is_ascii_alphabetic() && w[1].is_ascii_digit())
        })
        .count()
}

/// Does this identifier name a credential? `db_password`, `apiKey`, `CLIENT_SECRET`, `secrete`,
/// but not `password_url`, `csrf_token`, `secretName`, `credentialsId`, `publicKey`.
fn ident_is_secret(ident: &str) -> bool {
    let words = ident_words(ident);
    if words.is_empty() {
        return false;
    }
    if names_something_else(&words) {
        return false;
    }
    let lists = &data().words;
    for (i, w) in words.iter().enumerate() {
        if listed(&lists.secret_words, w)
            // Words that merely start or end with a secret word: `dbpass`, `apikey1`, `mytoken`.
            || lists.secret_word_starts.iter().any(|p| w.starts_with(p.as_str()))
            || lists.secret_word_ends.iter().any(|p| w.ends_with(p.as_str()))
        {
            return true;
        }
        if w == "key" && i > 0 && listed(&lists.key_qualifiers, &words[i - 1]) {
            return true;
        }
        if w.ends_with("key")
            && w.len() > 3
            && lists
                .key_qualifiers
                .iter()
                .any(|q| w.len() == q.len() + 3 && w.starts_with(q.as_str()))
        {
            return true;
        }
    }
    false
}

// ---------------------------------------------------------------------------------------------
// JWT

fn jwt_verdict(tok: &str) -> Verdict {
    let header = tok.split('.').next().unwrap_or("");
    let mut buf = [0u8; 512];
    match b64url_decode(header, &mut buf) {
        Some(n) => {
            let h = &buf[..n];
            let is_obj = h.first() == Some(&b'{');
            let has_alg = memchr::memmem::find(h, b"\"alg\"").is_some();
            if is_obj && has_alg {
                Verdict::Accept
            } else {
                Verdict::Reject
            }
        }
        None => Verdict::Reject,
    }
}

/// Decodes unpadded base64url (or standard base64) into `out`; None when invalid or too long.
fn b64url_decode(s: &str, out: &mut [u8]) -> Option<usize> {
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    let mut n = 0usize;
    for &c in s.as_bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            b'=' => break,
            _ => return None,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            if n >= out.len() {
                return None;
            }
            out[n] = (acc >> bits) as u8;
            n += 1;
            acc &= (1 << bits) - 1;
        }
    }
    Some(n)
}

// ---------------------------------------------------------------------------------------------
// URLs, curl

fn url_cred_verdict(user: &str, pass: &str) -> Verdict {
    if pass.chars().count() < 3 || is_reference(pass) || pass.contains("${") || pass.contains("{{")
    {
        return Verdict::Reject;
    }
    // `http://host:8080@...` is not a password; neither is a bare port-like number with no user.
    if user.is_empty() && pass.bytes().all(|c| c.is_ascii_digit()) {
        return Verdict::Reject;
    }
    if is_placeholder_word(pass) || looks_masked(pass) || has_template_words(pass) {
        return Verdict::Placeholder;
    }
    Verdict::Accept
}

/// The curl `-u` value without its outer quotes: (value, start, end) relative to the group.
fn curl_user_span(v: &str) -> (&str, usize, usize) {
    let t = v.trim_end();
    (t, 0, t.len())
}

fn curl_user_verdict(v: &str) -> Verdict {
    let colon = match v.find(':') {
        Some(c) => c,
        None => return Verdict::Reject,
    };
    let strip = |s: &str| s.trim_matches(|c| c == '"' || c == '\'').to_string();
    let user = strip(&v[..colon]);
    let pass = strip(&v[colon + 1..]);
    for part in [&user, &pass] {
        if !part.is_empty()
            && (is_reference(part)
                || part.contains("${")
                || part.contains("$(")
                || part.contains("{{"))
        {
            return Verdict::Reject;
        }
    }
    let secret = if pass.is_empty() { &user } else { &pass };
    if secret.chars().count() < 3 {
        return Verdict::Reject;
    }
    if is_placeholder_word(secret) || looks_masked(secret) || has_template_words(secret) {
        return Verdict::Placeholder;
    }
    if shannon(v) < 2.0 {
        return Verdict::Reject;
    }
    Verdict::Accept
}

/// Parses one curl header value; returns the credential's span (relative) and verdict.
fn curl_header(h: &str) -> Option<(usize, usize, Verdict)> {
    let colon = h.find(':')?;
    let name = h[..colon].trim().to_ascii_lowercase();
    let after = &h[colon + 1..];
    let vstart = colon + 1 + (after.len() - after.trim_start().len());
    let value = after.trim();
    let tok_ok = |t: &str| {
        t.len() >= 8
            && t.bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"_=~@.+/-".contains(&c))
    };
    let (off, tok) = if name == "authorization" {
        let lower = value.to_ascii_lowercase();
        let mut found = None;
        for scheme in ["basic ", "bearer ", "token ", "api-token "] {
            if lower.starts_with(scheme) {
                let rest = &value[scheme.len()..];
                let skip = rest.len() - rest.trim_start().len();
                let t = rest.trim();
                if scheme == "basic " {
                    let body = t.trim_end_matches('=');
                    if t.len() < 8
                        || !body
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/')
                    {
                        return None;
                    }
                } else if !tok_ok(t) {
                    return None;
                }
                found = Some((scheme.len() + skip, t));
                break;
            }
        }
        match found {
            Some(f) => f,
            None if tok_ok(value) => (0, value),
            None => return None,
        }
    } else {
        let sounds_secret = name.ends_with("key")
            || name.ends_with("token")
            || name.ends_with("secret")
            || name.ends_with("password")
            || name.contains("api-key")
            || name.contains("apikey")
            || name.contains("auth");
        if !sounds_secret || name.contains("content") || !tok_ok(value) {
            return None;
        }
        (0, value)
    };
    let s = vstart + off;
    let e = s + tok.len();
    let v = if looks_masked(tok) || has_template_words(tok) {
        Verdict::Placeholder
    } else if shannon(tok) < 2.75 {
        Verdict::Reject
    } else {
        Verdict::Accept
    };
    Some((s, e, v))
}

// ---------------------------------------------------------------------------------------------
// Private keys

/// From a BEGIN marker at `s..e`, finds where the block ends and whether it has key material.
fn private_key_end(text: &str, s: usize, e: usize) -> Option<(usize, Verdict)> {
    const MAX: usize = 64 * 1024;
    let limit = ceil_boundary(text, e.saturating_add(MAX).min(text.len()));
    let rest = &text[e..limit];
    let putty = text[s..e].starts_with("PuTTY");
    let (body_end, block_end) = if putty {
        match memchr::memmem::find(rest.as_bytes(), b"Private-MAC:") {
            Some(p) => {
                let line_end = rest[p..]
                    .find(['\n', '\r'])
                    .map(|x| p + x)
                    .unwrap_or(rest.len());
                (p, line_end)
            }
            None => {
                let b = blank_line(rest);
                (b, b)
            }
        }
    } else {
        match find_end_marker(rest) {
            Some((p, q)) => (p, q),
            None => {
                let b = blank_line(rest);
                (b, b)
            }
        }
    };
    // Key material: enough base64-ish characters between the markers (a one-word stand-in like
    // "..." or "anything" is a placeholder). Literal "\n" escapes (JSON) are not material.
    let body = &rest[..body_end];
    let material = body
        .bytes()
        .filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
        .count()
        - 2 * body.matches("\\n").count().min(body.len() / 2);
    let v = if material >= 12 {
        Verdict::Accept
    } else {
        Verdict::Placeholder
    };
    let end = floor_boundary(text, e + block_end);
    Some((end, v))
}

/// Finds `-----END ...-----` (or `---- END ... ----`): (start of marker, end of marker).
fn find_end_marker(rest: &str) -> Option<(usize, usize)> {
    let b = rest.as_bytes();
    let mut from = 0;
    while let Some(p) = memchr::memmem::find(&b[from..], b"END ") {
        let p = from + p;
        // Must be preceded by dashes (maybe one space).
        let pre = &b[..p];
        let dashes = pre
            .iter()
            .rev()
            .skip_while(|&&c| c == b' ')
            .take_while(|&&c| c == b'-')
            .count();
        if dashes >= 4 {
            let start = pre.len()
                - pre
                    .iter()
                    .rev()
                    .take_while(|&&c| c == b'-' || c == b' ')
                    .count();
            // End of the marker: the run of dashes after the label, within the line.
            let line_end = b[p..]
                .iter()
                .position(|&c| c == b'\n' || c == b'\r' || c == b'"' || c == b'\\')
                .map(|x| p + x)
                .unwrap_or(b.len());
            let mut end = line_end;
            while end > p && (b[end - 1] == b' ') {
                end -= 1;
            }
            let tail_dashes = b[p..end].iter().rev().take_while(|&&c| c == b'-').count();
            if tail_dashes >= 4 {
                return Some((start, end));
            }
            // Dashes glued to the next marker (`-----END X-----` followed by text): cut at label end.
            if let Some(q) = memchr::memmem::find(&b[p..line_end], b"-----") {
                return Some((start, (p + q + 5).min(b.len())));
            }
        }
        from = p + 4;
    }
    None
}

/// Offset of the first blank line (end of an unterminated block), or the end.
fn blank_line(rest: &str) -> usize {
    let b = rest.as_bytes();
    let mut end = memchr::memmem::find(b, b"\n\n")
        .or_else(|| memchr::memmem::find(b, b"\r\n\r\n"))
        .unwrap_or(b.len());
    while end > 0 && (b[end - 1] == b'\n' || b[end - 1] == b'\r' || b[end - 1] == b' ') {
        end -= 1;
    }
    end
}

// ---------------------------------------------------------------------------------------------

/// Several rules can find the same secret (a JWT inside a curl header, a Sidekiq URL that is also a
/// URL with credentials): keep the better-scored, then longer, of overlapping findings.
fn resolve_overlaps(found: &mut Vec<Candidate>) {
    if found.len() < 2 {
        return;
    }
    found.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut kept: Vec<Candidate> = Vec::with_capacity(found.len());
    for c in found.drain(..) {
        if let Some(last) = kept.last_mut() {
            if c.start < last.end {
                let better = c.score > last.score
                    || (c.score == last.score && c.end - c.start > last.end - last.start);
                if better {
                    *last = c;
                }
                continue;
            }
        }
        kept.push(c);
    }
    *found = kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user's own credential format runs through the same prefilter and checks as the
    /// built-in table: found with its keyword, a stand-in value is not, and a rule that cannot
    /// work is an error naming it.
    #[test]
    fn user_secret_rules_extend_the_table() {
        let rules = crate::UserRules::from_toml(
            r#"
            [[secrets]]
            id = "acme-deploy-token"
            keywords = ["ACMEDT_"]
            pattern = 'ACMEDT_[A-Za-z0-9]{24}'
            min_entropy = 3.0
            "#,
        )
        .unwrap();
        let r = SecretRecognizer::with_user_rules(&rules.secrets).unwrap();
        let text = "deploy with ACMEDT_q8Zr2LkP0wXv7NbT4sYc1HdF today";
        let mut out = Vec::new();
        r.find(text, &mut out);
        assert!(
            out.iter().any(|c| c.label == "SECRET"
                && &text[c.start..c.end] == "ACMEDT_q8Zr2LkP0wXv7NbT4sYc1HdF"),
            "{out:?}"
        );
        let mut out = Vec::new();
        r.find("ACMEDT_xxxxxxxxxxxxxxxxxxxxxxxx", &mut out);
        assert!(
            out.iter().all(|c| c.score < 0.5),
            "a stand-in value: {out:?}"
        );
        // Without the user's rule nothing knows the format.
        let mut out = Vec::new();
        SecretRecognizer::new().find(text, &mut out);
        assert!(out.iter().all(|c| c.score < 0.5), "{out:?}");
        for bad in [
            "[[secrets]]\nid = 'x'\nkeywords = ['zz_']\npattern = '('",
            "[[secrets]]\nid = 'y'\nkeywords = []\npattern = 'a'",
            "[[secrets]]\nid = 'z'\nkeywords = ['k']\npattern = 'a'",
        ] {
            let rules = crate::UserRules::from_toml(bad).unwrap();
            let e = SecretRecognizer::with_user_rules(&rules.secrets)
                .err()
                .expect("rejected");
            assert!(e.to_string().contains("secret rule"), "{e}");
        }
    }

    fn spans(text: &str) -> Vec<String> {
        let r = SecretRecognizer::new();
        let mut out = Vec::new();
        r.find(text, &mut out);
        out.iter()
            .map(|c| text[c.start..c.end].to_string())
            .collect()
    }

    fn fires(text: &str, expected: &str) {
        let got = spans(text);
        assert!(
            got.iter().any(|s| s == expected),
            "expected {expected:?} in {text:?}, got {got:?}"
        );
    }

    fn silent(text: &str) {
        let got = spans(text);
        assert!(got.is_empty(), "expected nothing in {text:?}, got {got:?}");
    }

    #[test]
    fn the_rule_file_is_well_formed() {
        let d = data();
        assert!(d.rule.len() >= 90, "rules lost: {}", d.rule.len());
        let mut ids = std::collections::HashSet::new();
        for r in &d.rule {
            assert!(ids.insert(r.id.as_str()), "duplicate rule id {}", r.id);
            assert!(
                !r.keywords.is_empty(),
                "{}: no keyword, it would never run",
                r.id
            );
            for k in &r.keywords {
                // The prefilter folds the text to lower case before comparing.
                assert_eq!(
                    k,
                    &k.to_ascii_lowercase(),
                    "{}: keyword {k:?} not lower case",
                    r.id
                );
            }
            assert!(
                (0.0..=1.0).contains(&r.score),
                "{}: score {}",
                r.id,
                r.score
            );
            assert!(
                (0.0..=6.0).contains(&r.min_entropy),
                "{}: entropy {}",
                r.id,
                r.min_entropy
            );
            assert!(r.fwd > 0 || r.back > 0, "{}: empty window", r.id);
            Regex::new(&ascii_classes(&r.pattern)).unwrap_or_else(|e| panic!("{}: {e}", r.id));
        }
        for (name, list) in [
            ("generic_keywords", &d.words.generic_keywords),
            ("secret_words", &d.words.secret_words),
            ("key_qualifiers", &d.words.key_qualifiers),
            ("not_secret_words", &d.words.not_secret_words),
            ("not_secret_last_words", &d.words.not_secret_last_words),
        ] {
            for w in list {
                // Identifier words are compared after lower-casing.
                assert_eq!(w, &w.to_lowercase(), "{name}: {w:?} not lower case");
            }
        }
    }

    #[test]
    fn all_rules_compile_and_name() {
        let r = SecretRecognizer::new();
        assert_eq!(r.name(), "secrets");
        assert!(r.rules.len() > 60);
    }

    #[test]
    fn cloud_keys() {
        fires(
            "aws_access_key_id = AKIALALEMEL33243OLIB",
            "AKIALALEMEL33243OLIB",
        );
        fires(
            "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9ExM4pQa",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9ExM4pQa",
        );
        fires(
            "key: AIzaSyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-",
            "AIzaSyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-",
        );
        fires(
            "client_secret=bP88Q~rcBcYjzzOhg1Hnn76Wm3jGgakZiZ.8vMgR",
            "bP88Q~rcBcYjzzOhg1Hnn76Wm3jGgakZiZ.8vMgR",
        );
        fires("DefaultEndpointsProtocol=https;AccountName=x;AccountKey=lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==;", "lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==");
        fires(
            r#"IBM-API-KEY : "abcd1234abcd1234abcd1234ABCD1234ABCD1234--__""#,
            "abcd1234abcd1234abcd1234ABCD1234ABCD1234--__",
        );
        fires(
            r#"cos_secret_key = "1234567890abcdef1234567890abcdef1234567890abcdef""#,
            "1234567890abcdef1234567890abcdef1234567890abcdef",
        );
        fires(
            "--softlayer-api-key abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234",
            "abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234",
        );
    }

    #[test]
    fn cloud_lookalikes() {
        silent("key = AKIAXXXXXXXXXXXXXXXX");
        silent("AKIAZZZ");
        silent(r#"apiKey: "AIzaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa""#);
        silent("AIZASYCO2CXRMC9ELSKLHLHRMBSWDEVEDZTLO2O");
        silent("~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
        silent(r#"ibm_iam_key:= "abcd1234abcd1234abcd1234ABCD1234ABCD1234--__extra""#);
        silent("ibm-cloud-pwd = shorter-version");
    }

    #[test]
    fn saas_tokens() {
        fires(
            "token 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 here",
            "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",
        );
        fires(
            "glptt-Need5_T00-be-exactly-40-chars--ELse_fail",
            "glptt-Need5_T00-be-exactly-40-chars--ELse_fail",
        );
        fires(
            "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD",
            "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD",
        );
        fires(
            "url: https://hooks.slack.com/services/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",
            "https://hooks.slack.com/services/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",
        );
        fires(
            "sk_live_ReTllpYQYfIZu2Jnf2lAPFjD",
            "sk_live_ReTllpYQYfIZu2Jnf2lAPFjD",
        );
        fires(
            "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",
            "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",
        );
        fires(
            "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",
            "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",
        );
        fires(
            r#"set apikey="API-ZNRMR7SL6L3ATMOIK7GKJDKLPY""#,
            "API-ZNRMR7SL6L3ATMOIK7GKJDKLPY",
        );
        fires(
            "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
            "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        );
        fires(
            "facebook 1308742762612587|rhoK1cbv0DOU_RTX_87O4MkX7AI",
            "1308742762612587|rhoK1cbv0DOU_RTX_87O4MkX7AI",
        );
        fires(
            "Authorization: Bearer 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",
            "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",
        );
        fires(
            "//registry.npmjs.org/:_authToken=743b294a-cd03-11ec-9d64-0242ac120002",
            "743b294a-cd03-11ec-9d64-0242ac120002",
        );
        fires(
            "https://cafeb4b3:d3adb33f@enterprise.contribsys.com/",
            "cafeb4b3:d3adb33f",
        );
        fires(
            "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",
            "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",
        );
    }

    #[test]
    fn saas_lookalikes() {
        silent("gho_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        silent("foo_wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx");
        silent("glpat-hellOWorld380 testin");
        silent("xoxb-xxxxxxxxx-xxxxxxxxxx-xxxxxxxxxxxx");
        silent(r#""token4": "xoxp-572370529330-573807301142-572331691188-####################""#);
        silent("xoxe.xoxp-1-RANDOMSTRINGHERE");
        silent("https://github.com/xoxa-nyc/xoxa-nyc.github.io/blob/master/README.md");
        silent("SG.ngeVfQFYQlKU0ufo8x5d1A..TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr");
        silent("MZ1yGvKTjE0rY0cV8i47CjAa.uRHQPq.Xb1Mk2nEhe-4iUcrGOuegj57zM");
        silent("PZ1yGvKTjE0rY0cV8i47CjAa.uRHQPq.Xb1Mk2nEhe-4iUcrGOuegj57zMC");
        silent("ntn_123456789012345678901234567890123456789012345678901234567890");
        silent("discord=000000000000000000");
        silent("hvs.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        silent(
            r#"--set kraken.kubeconfig.token.token="sha256~XXXXXXXXXX_PUT_YOUR_TOKEN_HERE_XXXXXXXXXXXX" \"#,
        );
        silent("meraki: aaaaaaaaaa1111111111bbbbbbbbbb2222222222");
        silent("sgp_5555555dAAAAA7777777CcccCFaaaaaaaaaaaaaa");
        silent("    #define OSCHF_DebugGetExpectedAverageCrystalAmplitude NOROM_OSCHF_DebugGetExpectedAverageCrystalAmplitude");
        silent("  M_UINT (ServingCellPriorityParametersDescription_t, H_PRIO, 2, &hf_servingcellpriorityparametersdescription_h_prio),");
    }

    #[test]
    fn placeholders_opt_in() {
        let r = SecretRecognizer::new().with_placeholders(true);
        let mut out = Vec::new();
        r.find("AKIAZZZZZZZZZZZZZZZZ", &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].score < 0.5);
        silent("AKIAZZZZZZZZZZZZZZZZ");
    }

    /// A key published in a public SDK (gitleaks' allowlist of Firebase's example keys) is not
    /// the user's secret; a key of the same shape that nobody published still is.
    #[test]
    fn published_example_keys_are_placeholders() {
        for k in &data().words.public_values {
            silent(k);
            silent(&format!("const firebaseConfig = {{ apiKey: \"{k}\" }};"));
        }
        let mut out = Vec::new();
        SecretRecognizer::new()
            .with_placeholders(true)
            .find("AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs", &mut out);
        assert!(out.len() == 1 && out[0].score < 0.5, "{out:?}");
        let mine = "AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIt";
        fires(mine, mine);
        fires(&format!("apiKey: \"{mine}\""), mine);
    }

    /// AWS's documentation keys carry EXAMPLE in capitals, whole or cut short; a key of the same
    /// shape without it, and a password holding the word, are secrets. Mutation-checked: with
    /// `template_marks` empty, the documentation keys are reported.
    #[test]
    fn documentation_keys_marked_example_are_placeholders() {
        silent("The key AKIAIOSFODNN7EXAMPLE leaked in the log.");
        silent(r#"aws_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY""#);
        silent(r#"aws_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE""#);
        fires("The key AKIAQ3EGRKZ7XPLJ4WMN leaked.", "AKIAQ3EGRKZ7XPLJ4WMN");
        fires(
            r#"aws_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ2KL7XBRE""#,
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ2KL7XBRE",
        );
        fires("password: Example2024!tb", "Example2024!tb");
        let hook = "https://hooks.slack.com/services/TAGGINGEXAMPLE/BASE/91nziTEEzAAcaNZiz1mPPoXyS";
        fires(hook, hook);
    }

    #[test]
    fn private_keys() {
        let k = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1BjP5CE/Wm/Rr500P\n-----END RSA PRIVATE KEY-----";
        fires(&format!("key:\n{k}\nmore"), k);
        fires(
            "some text here\n-----BEGIN PRIVATE KEY-----\nyabba dabba doo",
            "-----BEGIN PRIVATE KEY-----\nyabba dabba doo",
        );
        let j = r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#;
        fires(j, "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----");
        silent("-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----");
        silent("-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----");
        silent("-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQENBFOrMNcBCAC+gLI4s3bUkobS5NpOQbWfjWXbqC0Ixpc5bZYDOvsmfstmswna\n");
    }

    #[test]
    fn jwts() {
        let t = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
        fires(&format!("Authorization: {t}"), t);
        fires("eyJ0eXAiOiJKV1QiLA0KImFsZyI6IkhTMjU2In0.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ", "eyJ0eXAiOiJKV1QiLA0KImFsZyI6IkhTMjU2In0.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ");
        silent("eyJAAAA.eyJBBB");
        silent("eyJBB.eyJCC.eyJDDDD");
        // Header decodes to JSON without "alg".
        silent("eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc");
    }

    #[test]
    fn urls_and_curl() {
        fires(
            "DATABASE_URL=postgres://app:Zq8r!vT2mK@db.internal:5432/prod",
            "Zq8r!vT2mK",
        );
        fires(
            "mongodb+srv://admin:h7Gk2pQx9w@cluster0.mongodb.net/test",
            "h7Gk2pQx9w",
        );
        fires("redis://:s3cr3tRedisPw@cache:6379/0", "s3cr3tRedisPw");
        fires(
            "curl --cacert ca.crt -u elastic:P@ssw0rd$1 https://localhost:9200",
            "elastic:P@ssw0rd$1",
        );
        fires(
            "curl -s --user 'api:d2LkV78zLx!t' \\\n https://api.mailgun.net/v2/x",
            "api:d2LkV78zLx!t",
        );
        fires(
            "curl --header  'Authorization:  5eb4223e-5008-46e5-be67-c7b8f2732305'",
            "5eb4223e-5008-46e5-be67-c7b8f2732305",
        );
        fires(
            r#"curl -X POST --header "Api-Token: Sk94HG7f6KB""#,
            "Sk94HG7f6KB",
        );
        fires(
            r#"curl -H "Authorization: Basic YXBpOmtleS1hN2MzNDJ3MzNhNWQxLTU2M2U3MjlwLTZhYjI3YzYzNzM0Ng==""#,
            "YXBpOmtleS1hN2MzNDJ3MzNhNWQxLTU2M2U3MjlwLTZhYjI3YzYzNzM0Ng==",
        );
        silent("https://username:password@yelp.com");
        silent("'https://url:8000';@something else");
        silent(r#"curl -u "${_username}:${_password}""#);
        silent(r#"curl -k -X POST -I -u "SRVC_JENKINS:${APPID}""#);
        silent("curl -i -u 'test:test'");
        silent("curl http://127.0.0.1:5000/file --user user:pass --digest");
        silent(r#"curl --user "xxx:yyy""#);
        silent(r#"curl -H "Authorization: Bearer $API_KEY" https://x"#);
        silent(
            r#"curl -XPOST http://localhost:8080/api/token -H "Authorization: basic {base64(email:password[\n])}" => token"#,
        );
        silent(r#"curl https://example.com -H "Authorization: Bearer XXXXXXXXXXXX""#);
        silent(
            r#"curl --insecure --ssl-reqd "smtps://smtp.gmail.com" --user "src@gmail.com" --upload-file out.txt"#,
        );
    }

    #[test]
    fn generic_assignments() {
        fires(
            r#"password = "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}""#,
            "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}",
        );
        fires(
            r#"if ("m{{h}o)p${e]nob(ody[finds>-_$#thisone}}" == my_super_password) {"#,
            "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}",
        );
        fires(
            r#"secrete.assign("m{{h}o)p${e]nob(ody[finds>-_$#thisone}}",17);"#,
            "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}",
        );
        fires("DB_PASSWORD=Xk9#mP2$qL7v", "Xk9#mP2$qL7v");
        fires(
            r#"{"client_secret": "6da89121079f83b2eb6acccf8219ea982c3d79bccc3e9c6a85856480661f8fde"}"#,
            "6da89121079f83b2eb6acccf8219ea982c3d79bccc3e9c6a85856480661f8fde",
        );
        fires("db:\n  password: Tr0ub4dor&3x\n", "Tr0ub4dor&3x");
        fires("<password>Qz7!kLp2Xw</password>", "Qz7!kLp2Xw");
        fires("My password is Tr0ub4dor&3 so keep it safe", "Tr0ub4dor&3");
        fires("Server=x;User Id=sa;Password=MyP4ss!9z;", "MyP4ss!9z");
        // A subscript: the name in quotes and brackets before the operator.
        fires(
            r#"os.environ["OPENAI_API_KEY"] = '1bb7dde73fe449de229361ea03bab234'"#,
            "1bb7dde73fe449de229361ea03bab234",
        );
        fires(
            "ENV['STRIPE_SECRET'] = 'Qz7kLp2XwT9mV4bR8cN1'",
            "Qz7kLp2XwT9mV4bR8cN1",
        );
    }

    #[test]
    fn generic_lookalikes() {
        silent(r#""accessor":"rA1wk0Y45YCufyfq","#);
        silent(r#"accessibilityYesOptionId = "0736f5ef-7e88-499a-80cc-90c85d2a5180""#);
        silent(r#"clientId = "73082700-1f09-405b-80d0-3131bfd6272d""#);
        silent(r#""kms_key_id": "555ea4a3-d53a-4412-9c66-3a7cb667b0d6","#);
        silent("csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7+V4eUrLfpuyOuxmiW9rhROG/Whikle15syazJOkrjJa3U2AbhIvUw==");
        silent("    access_token_url='https://github.com/login/oauth/access_token',");
        silent("withCredentials([usernamePassword(credentialsId: '29f63271-dc2f-4734-8221-5b31b5169bac', usernameVariable: 'USERNAME', passwordVariable: 'PASSWORD')]) {");
        silent("snowflake.password=\njdbc.snowflake.url=");
        silent("PuttyPassword=0");
        silent("SUMO_ACCESS_KEY: AbCeFG123");
        silent(r#"sumo_access_key   = "<SUMOLOGIC ACCESS KEY>""#);
        silent(r#"iam_api_key="%s" % IBM_IAM_API_KEY_ENV"#);
        silent(r#"CLOUD_APIKEY: "insert_key_here""#);
        silent(r#"someotherpassword = "doesnt start right""#);
        silent("password: ${DB_PASSWORD}");
        silent("token = os.environ.get('TOKEN')");
        silent(r#"password = "changeme""#);
        silent(r#"api_key = "xxxxxxxxxxxxxxxxxxxx""#);
        silent("secretSize must be >= XXH3_SECRET_SIZE_MIN");
        silent("LLM_SECRET_NAME = \"NEXUS-GPT4-API-KEY\"");
        silent("max_tokens = 4096");
        silent("The password is incorrect. Please reset your token.");
        silent(r#"notes            = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2""#);
        silent("http://assets.r7.com/assets/media_box_tv_tres_colunas/video_box.ico-7a388b69018576d24b59331fd60aab0c.png");
        silent("xoxe.xoxp-1-initial");
        silent(
            r#"<input type="hidden" name="authenticity_token" value="7SWa-Fo1_hsC6oovfBsJFLGPUl2EhkSWPbJhWANwgaJWBDl1vxd9VNqXTNAefsJqzIRYaZEfYZLffa31rw8zJA" autocomplete="off" />"#,
        );
    }

    /// Credentials no vendor rule names: a bare or vendor-qualified `key` with a generated
    /// value, a dash before a quoted value, a credential element holding several words.
    /// A weak name needs a random-looking value, so lookup keys, dates and words stay clean.
    #[test]
    fn weak_names_need_random_values() {
        fires(
            "[DEBUG] Using acme KEY=q7vx2mp9rt4kl8wz3nb6cy1dh5jg0fs",
            "q7vx2mp9rt4kl8wz3nb6cy1dh5jg0fs",
        );
        fires(
            r#"acmeCloudKey := "Zr4Lp8Qx2Nw7Vb3Km9Tj5Hd1Gc6Fs0Ya""#,
            "Zr4Lp8Qx2Nw7Vb3Km9Tj5Hd1Gc6Fs0Ya",
        );
        fires(
            r#"key1 = "9f2c7b1e4d8a3f6c0b5e9d2a7c4f1b8e""#,
            "9f2c7b1e4d8a3f6c0b5e9d2a7c4f1b8e",
        );
        fires(
            "Your ACME key is 7d1f9b3c5a2e8d4f6b0c, keep it safe.",
            "7d1f9b3c5a2e8d4f6b0c",
        );
        fires(
            "acme token - 'Qm3xT8vK1pZ6rW9nL4bY'",
            "Qm3xT8vK1pZ6rW9nL4bY",
        );
        fires(
            "<secret>{acme AQAAABAAA q7Vx2mP9rT4kL8wZ3nB6cY1d}</secret>",
            "q7Vx2mP9rT4kL8wZ3nB6cY1d",
        );
        fires(
            "<password>{AQAAABAAAAAQm8Vx2pL9rT4kZ7wN3bQ6cY1dH5jG0fSe=}</password>",
            "{AQAAABAAAAAQm8Vx2pL9rT4kZ7wN3bQ6cY1dH5jG0fSe=}",
        );
        fires(
            "[DEBUG] Using token Zr4Lp8Qx2Nw7Vb3Km9Tj5Hd1 now",
            "Zr4Lp8Qx2Nw7Vb3Km9Tj5Hd1",
        );
        silent("The token ring networks of the 1990s were slow.");
        silent("Your password manager2024 export is ready.");
        fires(
            "acme token = 'wjQKCFzOWEPRqhTmmbWtVQ'",
            "wjQKCFzOWEPRqhTmmbWtVQ",
        );
        silent("token = getAccessTokenForUser");
        silent(r#"password = "XMLHttpRequestHandler""#);
        silent("cache key: user-profile-2024-11-03");
        silent(r#"key = "sort_by_date_2023_desc""#);
        silent("The key is 12345678901234567890.");
        silent("primary key = customer_id");
        silent(r#"monkey = "a8F3kq92LmZ0pX7wR5tY""#);
        silent(r#"keyId = "a8F3kq92LmZ0pX7wR5tY""#);
        silent(r#"key = "Ab1""#);
        silent("<password>{db_password}</password>");
        silent("acme token - 'see the settings page'");
    }

    /// A quoted generated value is a credential with no name at all; quoted hashes, UUIDs,
    /// paths, words and values named as something else are not.
    #[test]
    fn quoted_generated_values() {
        fires(
            "acme 'Qm3xT8vK1pZ6rW9nL4bY7cD2fG5hJ0kA' acme 'acme.example.com'",
            "Qm3xT8vK1pZ6rW9nL4bY7cD2fG5hJ0kA",
        );
        fires(
            r#"client = Acme("z9Q2w7E4r1T8y5U3i6O0p2A7s4D9f1G6")"#,
            "z9Q2w7E4r1T8y5U3i6O0p2A7s4D9f1G6",
        );
        silent(r#"sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08""#);
        silent(r#"run_id: "3f2b9c1e-8d4a-4e7b-9c2d-1a5f6e7b8c9d""#);
        silent(r#"path = "src/assets/img/logo_2x_v3/header-1920x1080.png""#);
        silent(r#"title = "Quarterly-report-for-the-finance-team""#);
        silent(r#"request_id = "Qm3xT8vK1pZ6rW9nL4bY7cD2fG5hJ0kA""#);
        silent(
            r#"<input type="hidden" name="csrf_token" value="Qm3xT8vK1pZ6rW9nL4bY7cD2fG5hJ0kA" />"#,
        );
        silent("He said 'Qm3xT8vK1pZ6rW9nL4bY' and left"); // too short to be sure
    }

    #[test]
    fn prose_and_odd_input() {
        silent("The quick brown fox jumps over the lazy dog. Ask about the task at the desk.");
        silent("Keys to success: pass the exam, keep your secret recipe, token of appreciation.");
        // Never panic on arbitrary UTF-8, keyword at the very end, multi-byte chars near windows.
        for t in [
            "token",
            "password=",
            "é-----BEGIN PRIVATE KEY-----",
            "curl -u",
            "AKIA",
            "eyJ",
            "://",
            "日本語password = \"ÿÿÿÿÿÿÿÿ\"",
            "a.bcdefg.h",
            "Q~",
        ] {
            let _ = spans(t);
        }
        let long: String = "password=".repeat(5000);
        let _ = spans(&long);
    }
}
