//! How an address laid out as a block is reported: one span per line of the block.
//!
//! An address inside a sentence ("send it to 74 Diakou Street, Suite 680, Kissousa") is one
//! span. An address set out on its own lines — a letter's header, a signature, a shipping
//! label — has its parts separated by the layout itself, and labelled data (presidio-research's
//! letter templates) marks them part by part ("20789" | "Allika 46" | "Suite 501" | "62488"):
//! one whole span matches none of those parts. Reporting the lines lets either granularity
//! overlap. An address merely wrapped over lines ("Kaster\n, VWV\n 04494": a line opens with
//! the comma of the line before) is one address, reported whole; so is one in a sentence that
//! goes on to its unit ("12521 Belgrád rkp. 18. Apt. 417"). What lies between the parts (a
//! city or country word) is left to the entity step, which masks names in such material
//! anyway.

use super::types::Candidate;

/// Replaces each multi-line STREET_ADDRESS that starts its own line by one span per line
/// (byte offsets, sorted, disjoint); every other candidate is kept as it is.
pub(crate) fn split_address_blocks(text: &str, kept: Vec<Candidate>) -> Vec<Candidate> {
    if !kept.iter().any(|c| c.label == "STREET_ADDRESS") {
        return kept;
    }
    let mut out = Vec::with_capacity(kept.len() + 4);
    for c in kept {
        if c.label != "STREET_ADDRESS" {
            out.push(c);
            continue;
        }
        if continued_lines(&text[c.start..c.end]) {
            // One address wrapped over lines ("Toronto\n, ON\n Canada 27539"): a line that
            // opens with the comma of the line before continues it, so the block is one
            // address written small, not a header laid out part by part.
            out.push(c);
            continue;
        }
        if !text[c.start..c.end].contains('\n') || !starts_its_line(text, c.start) {
            // In a sentence: one span, less a building number before a numbered street when
            // the address stops there.
            let whole = &text[c.start..c.end];
            let first = whole.find(['\n', ',']).unwrap_or(whole.len());
            // "5850 Jana Nerudy 894 Apt. 417 ...": an address that goes on to its unit (on
            // its line or the next) is written out whole, and reported whole.
            let has_unit = whole.split_whitespace().any(|w| {
                super::quasi::lexicon()
                    .line_unit_words
                    .contains(&w.to_lowercase().as_str())
            });
            let split = if has_unit {
                Vec::new()
            } else {
                parts(&whole[..first])
            };
            match split.as_slice() {
                [(0, n), (rest, _)] => {
                    out.push(Candidate {
                        end: c.start + n,
                        ..c.clone()
                    });
                    out.push(Candidate {
                        start: c.start + rest,
                        ..c
                    });
                }
                _ => out.push(c),
            }
            continue;
        }
        let mut pos = c.start;
        for line in text[c.start..c.end].split('\n') {
            let (a, b) = trim_line(text, pos, pos + line.len());
            pos += line.len() + 1;
            for (s, e) in parts(&text[a..b]) {
                out.push(Candidate {
                    start: a + s,
                    end: a + e,
                    ..c.clone()
                });
            }
        }
    }
    out
}

/// Some line after the first opens with a comma (after spaces).
fn continued_lines(addr: &str) -> bool {
    addr.split('\n')
        .skip(1)
        .any(|l| l.trim_start().starts_with(','))
}

/// Only spaces and quote markers ("> ", "??? " where a mailer lost them) before `at` on its line.
fn starts_its_line(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..at]
        .chars()
        .all(|c| c.is_whitespace() || c == '>' || c == '?')
}

/// `a..b` without leading spaces and quote markers, trailing spaces and commas.
fn trim_line(text: &str, mut a: usize, mut b: usize) -> (usize, usize) {
    let t = &text[a..b];
    a += t.len()
        - t.trim_start_matches(|c: char| c.is_whitespace() || c == '>' || c == '?')
            .len();
    let t = &text[a..b];
    b -= t.len()
        - t.trim_end_matches(|c: char| c.is_whitespace() || c == ',')
            .len();
    (a, b.max(a))
}

/// The parts of one address line (offsets into `line`): a leading building number before a
/// street that has its own number ("20789 Allika 46" → "20789", "Allika 46"; "5521 119
/// Countess Close" → "5521", "119 Countess Close"); only the postcode
/// of a "Country 62488" line; else the whole line.
fn parts(line: &str) -> Vec<(usize, usize)> {
    if line.is_empty() {
        return Vec::new();
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if (3..=5).contains(&digits)
        && line[digits..].starts_with(' ')
        && line[digits + 1..].bytes().any(|c| c.is_ascii_alphabetic())
        && line[digits + 1..].bytes().any(|c| c.is_ascii_digit())
    {
        return vec![(0, digits), (digits + 1, line.len())];
    }
    let tail = line.bytes().rev().take_while(u8::is_ascii_digit).count();
    let head = line[..line.len() - tail].trim_end();
    if (4..=6).contains(&tail)
        && head.len() < line.len() - tail
        && !head.is_empty()
        && !head.bytes().any(|c| c.is_ascii_digit())
        && !head.split_whitespace().any(|w| {
            super::quasi::lexicon()
                .line_unit_words
                .contains(&w.to_lowercase().as_str())
        })
    {
        return vec![(line.len() - tail, line.len())];
    }
    vec![(0, line.len())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tier;

    fn addr(text: &str, whole: &str) -> Vec<String> {
        let start = text.find(whole).unwrap();
        let c = Candidate {
            start,
            end: start + whole.len(),
            label: "STREET_ADDRESS",
            tier: Tier::Contact,
            score: 0.9,
            detector: "rules",
        };
        split_address_blocks(text, vec![c])
            .into_iter()
            .map(|c| text[c.start..c.end].to_string())
            .collect()
    }

    #[test]
    fn a_block_is_reported_line_by_line_and_a_sentence_whole() {
        let letter = "William Hughes\n\n20789 Allika 46\n Suite 501\n Riisa\n\n Estonia 62488\n";
        assert_eq!(
            addr(
                letter,
                "20789 Allika 46\n Suite 501\n Riisa\n\n Estonia 62488"
            ),
            ["20789", "Allika 46", "Suite 501", "Riisa", "62488"]
        );
        let quoted = "Ship to:\n> 228 Ringvej 144\n>Apt. 902\n>Qaqortoq";
        assert_eq!(
            addr(quoted, "228 Ringvej 144\n>Apt. 902\n>Qaqortoq"),
            ["228", "Ringvej 144", "Apt. 902", "Qaqortoq"]
        );
        let inline = "please send a new one to 1987 74 Diakou Street\n Suite 680\n Kissousa";
        assert_eq!(
            addr(inline, "1987 74 Diakou Street\n Suite 680\n Kissousa"),
            ["1987 74 Diakou Street\n Suite 680\n Kissousa"]
        );
        // Without a unit, a building number before a numbered street is its own part.
        let short = "Tosh Olsen lives at 172 Maneeži 75";
        assert_eq!(addr(short, "172 Maneeži 75"), ["172", "Maneeži 75"]);
        // Wrapped, not laid out: a line opening with the comma of the line before.
        let wrapped = "Address:\n87645 22 Talga Court Apt. 331\nKaster\n, VWV\n 04494.";
        assert_eq!(
            addr(
                wrapped,
                "87645 22 Talga Court Apt. 331\nKaster\n, VWV\n 04494"
            ),
            ["87645 22 Talga Court Apt. 331\nKaster\n, VWV\n 04494"]
        );
        // Inline and going on to its unit: written out whole, reported whole.
        let unit = "I'll meet you at 12521 Belgrád rkp. 18. Apt. 417 Csipkerek Vas after lunch";
        assert_eq!(
            addr(unit, "12521 Belgrád rkp. 18. Apt. 417 Csipkerek Vas"),
            ["12521 Belgrád rkp. 18. Apt. 417 Csipkerek Vas"]
        );
        let plain = "The office is at 1600 Pennsylvania Avenue, Washington.";
        assert_eq!(
            addr(plain, "1600 Pennsylvania Avenue"),
            ["1600 Pennsylvania Avenue"]
        );
    }
}
