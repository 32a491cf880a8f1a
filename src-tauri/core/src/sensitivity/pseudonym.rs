//! Reversible masking: sensitive spans become typed, numbered placeholders (`[PERSON_1]`,
//! `[IBAN_2]`) that stay consistent for a whole conversation, and come back as the originals
//! in the cloud's reply. The mapping lives only in this struct's memory: it is never
//! serialized, logged or sent (its `Debug` shows counts only).

use std::collections::HashMap;
use std::fmt;

use regex::Regex;
use serde::Serialize;

use super::Span;

/// Short placeholder kind for a label: readable for the cloud model, stable for restore.
pub fn kind_for_label(label: &str) -> String {
    match label {
        "CREDIT_CARD" => "CARD".into(),
        "IBAN_CODE" => "IBAN".into(),
        "EMAIL_ADDRESS" => "EMAIL".into(),
        "PHONE_NUMBER" => "PHONE".into(),
        "STREET_ADDRESS" => "ADDRESS".into(),
        "IP_ADDRESS" => "IP".into(),
        "MAC_ADDRESS" => "MAC".into(),
        "US_SSN" => "SSN".into(),
        "DATE_TIME" => "DATE".into(),
        "DATE_OF_BIRTH" => "DOB".into(),
        "URL_WITH_CREDENTIALS" => "URL".into(),
        "ABA_ROUTING_NUMBER" => "ROUTING".into(),
        other => other.to_ascii_uppercase(),
    }
}

/// Code point offsets → byte offsets (offsets past the end map to the end), in one pass.
fn cp_to_byte(text: &str, marks: impl Iterator<Item = usize>) -> HashMap<usize, usize> {
    let mut marks: Vec<usize> = marks.collect();
    marks.sort_unstable();
    marks.dedup();
    let mut out = HashMap::with_capacity(marks.len());
    let mut it = text
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(text.len()))
        .enumerate();
    let mut cur = it.next();
    for m in marks {
        while let Some((cp, b)) = cur {
            if cp == m {
                out.insert(m, b);
                break;
            }
            cur = it.next();
        }
        if cur.is_none() {
            out.insert(m, text.len());
        }
    }
    out
}

/// One replacement made by `mask`, in code point offsets of the **masked** text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replacement {
    pub start: usize,
    pub end: usize,
    pub placeholder: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Masked {
    pub text: String,
    pub replacements: Vec<Replacement>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Restored {
    pub text: String,
    /// How many placeholders were put back.
    pub restored: usize,
    /// Placeholder-looking tokens this conversation never issued (a model inventing `[PERSON_7]`):
    /// left in place and reported, never guessed.
    pub unknown: Vec<String>,
}

/// One per conversation.
#[derive(Default)]
pub struct Pseudonymizer {
    /// (kind, original) → number.
    forward: HashMap<(String, String), u32>,
    /// (kind, number) → original.
    back: HashMap<(String, u32), String>,
    next: HashMap<String, u32>,
    /// Restore pattern, rebuilt when a new kind is issued.
    pattern: Option<Regex>,
}

impl fmt::Debug for Pseudonymizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pseudonymizer")
            .field("placeholders", &self.back.len())
            .finish_non_exhaustive()
    }
}

impl Pseudonymizer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of distinct originals masked so far.
    pub fn len(&self) -> usize {
        self.back.len()
    }

    pub fn is_empty(&self) -> bool {
        self.back.is_empty()
    }

    /// Replaces `spans` (code point offsets into `text`, non-overlapping) with placeholders.
    /// The same original (same kind) always gets the same placeholder in this conversation.
    pub fn mask(&mut self, text: &str, spans: &[&Span]) -> Masked {
        let mut spans: Vec<&Span> = spans.to_vec();
        spans.sort_by_key(|s| s.start);
        let mut out = String::with_capacity(text.len());
        let mut replacements = Vec::new();
        let byte_of = cp_to_byte(text, spans.iter().flat_map(|s| [s.start, s.end]));
        let mut copied = 0usize; // bytes of `text` already copied
        let mut out_chars = 0usize;
        let mut prev_end = 0usize;
        for s in spans {
            if s.start < prev_end || s.end <= s.start {
                continue; // overlapping or empty: the scanner never produces these
            }
            let (Some(&bs), Some(&be)) = (byte_of.get(&s.start), byte_of.get(&s.end)) else {
                continue;
            };
            let before = &text[copied..bs];
            out.push_str(before);
            out_chars += before.chars().count();
            let original = &text[bs..be];
            let placeholder = self.placeholder_for(&s.label, original);
            let n = placeholder.chars().count();
            replacements.push(Replacement {
                start: out_chars,
                end: out_chars + n,
                placeholder: placeholder.clone(),
                label: s.label.clone(),
            });
            out.push_str(&placeholder);
            out_chars += n;
            copied = be;
            prev_end = s.end;
        }
        out.push_str(&text[copied..]);
        Masked {
            text: out,
            replacements,
        }
    }

    fn placeholder_for(&mut self, label: &str, original: &str) -> String {
        let kind = kind_for_label(label);
        // Normalise whitespace so "John  Smith" and "John Smith" share a placeholder.
        let key_text = original.split_whitespace().collect::<Vec<_>>().join(" ");
        let key = (kind.clone(), key_text);
        let n = match self.forward.get(&key) {
            Some(n) => *n,
            None => {
                let n = self.next.entry(kind.clone()).or_insert(0);
                *n += 1;
                let n = *n;
                self.forward.insert(key, n);
                self.back.insert((kind.clone(), n), original.to_string());
                self.pattern = None;
                n
            }
        };
        format!("[{kind}_{n}]")
    }

    fn restore_pattern(&mut self) -> Option<&Regex> {
        if self.pattern.is_none() {
            let mut kinds: Vec<&str> = self.next.keys().map(String::as_str).collect();
            // Longest first so "US_SSN" is not read as "SSN".
            kinds.sort_by_key(|k| std::cmp::Reverse(k.len()));
            let loose: Vec<String> = kinds
                .iter()
                .map(|k| {
                    k.split('_')
                        .map(regex::escape)
                        .collect::<Vec<_>>()
                        .join(r"[ _\-]?")
                })
                .collect();
            let exact: Vec<String> = kinds.iter().map(|k| regex::escape(k)).collect();
            let (loose, exact) = if kinds.is_empty() {
                (r"[^\s\S]".to_string(), r"[^\s\S]".to_string())
            } else {
                (loose.join("|"), exact.join("|"))
            };
            // In brackets of any shape: any case, `_`/space/`-` separators. Bare: only the exact
            // `KIND_N` shape (any case), so prose like "person 1" is not rewritten.
            let re = format!(
                r"(?i)[\[\(\{{<]\s*({loose})[ _\-]?(\d{{1,6}})\s*[\]\)\}}>]|\b({exact})_(\d{{1,6}})\b"
            );
            // Kinds are escaped, so this cannot fail; if it ever did, restore leaves text as is.
            self.pattern = Regex::new(&re).ok();
        }
        self.pattern.as_ref()
    }

    /// Puts originals back into a reply, tolerating reformatted placeholders (`[person_1]`,
    /// `PERSON 1`, `(PERSON_1)`, `**[PERSON_1]**`).
    pub fn restore(&mut self, reply: &str) -> Restored {
        if self.back.is_empty() {
            return Restored {
                text: reply.to_string(),
                restored: 0,
                unknown: Vec::new(),
            };
        }
        // Kinds in the reply are matched case-insensitively and with any separator; map them
        // back to the issued kind by normalising.
        let norm = |k: &str| k.to_ascii_uppercase().replace([' ', '-'], "_");
        let by_norm: HashMap<String, String> =
            self.next.keys().map(|k| (norm(k), k.clone())).collect();
        let mut out = String::with_capacity(reply.len());
        let mut restored = 0;
        let mut unknown = Vec::new();
        let mut last = 0;
        let Some(re) = self.restore_pattern().cloned() else {
            return Restored {
                text: reply.to_string(),
                restored: 0,
                unknown: Vec::new(),
            };
        };
        for caps in re.captures_iter(reply) {
            let (Some(whole), Some(kind), Some(num)) = (
                caps.get(0),
                caps.get(1).or(caps.get(3)),
                caps.get(2).or(caps.get(4)),
            ) else {
                continue;
            };
            let issued_kind = by_norm.get(&norm(kind.as_str()).replace("__", "_"));
            let n: Option<u32> = num.as_str().parse().ok();
            let original = match (issued_kind, n) {
                (Some(k), Some(n)) => self.back.get(&(k.clone(), n)),
                _ => None,
            };
            out.push_str(&reply[last..whole.start()]);
            match original {
                Some(o) => {
                    out.push_str(o);
                    restored += 1;
                }
                None => {
                    out.push_str(whole.as_str());
                    unknown.push(whole.as_str().to_string());
                }
            }
            last = whole.end();
        }
        out.push_str(&reply[last..]);
        Restored {
            text: out,
            restored,
            unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensitivity::Tier;

    fn span(text: &str, needle: &str, label: &str) -> Span {
        let b = text.find(needle).expect("needle");
        let start = text[..b].chars().count();
        Span {
            start,
            end: start + needle.chars().count(),
            label: label.into(),
            tier: Tier::QuasiIdentifier,
            score: 1.0,
            detector: "test".into(),
        }
    }

    #[test]
    fn masks_consistently_and_restores_reformatted_placeholders() {
        let mut p = Pseudonymizer::new();
        let t1 = "Jürgen Groß paid DE89370400440532013000 to Anna.";
        let spans = [
            span(t1, "Jürgen Groß", "PERSON"),
            span(t1, "DE89370400440532013000", "IBAN_CODE"),
            span(t1, "Anna", "PERSON"),
        ];
        let m = p.mask(t1, &spans.iter().collect::<Vec<_>>());
        assert_eq!(m.text, "[PERSON_1] paid [IBAN_1] to [PERSON_2].");
        assert_eq!(m.replacements[1].start, "[PERSON_1] paid ".chars().count());
        let t2 = "Did Anna get it?";
        let m2 = p.mask(t2, &[&span(t2, "Anna", "PERSON")]);
        assert_eq!(m2.text, "Did [PERSON_2] get it?");
        let r =
            p.restore("Yes, **[person_2]** got it from (PERSON 1) via [ IBAN_1 ]; ask [PERSON_9].");
        assert_eq!(
            r.text,
            "Yes, **Anna** got it from Jürgen Groß via DE89370400440532013000; ask [PERSON_9]."
        );
        assert_eq!(r.restored, 3);
        assert_eq!(r.unknown, vec!["[PERSON_9]".to_string()]);
    }

    #[test]
    fn debug_never_shows_originals() {
        let mut p = Pseudonymizer::new();
        let t = "call Bob";
        p.mask(t, &[&span(t, "Bob", "PERSON")]);
        assert!(!format!("{p:?}").contains("Bob"));
    }

    #[test]
    fn ordinary_words_with_numbers_are_left_alone() {
        let mut p = Pseudonymizer::new();
        let t = "ask Bob";
        p.mask(t, &[&span(t, "Bob", "PERSON")]);
        let r = p.restore("Windows 10 and personal 1 and PERSONAL_1 stay.");
        assert_eq!(r.text, "Windows 10 and personal 1 and PERSONAL_1 stay.");
        assert!(r.unknown.is_empty());
    }
}
