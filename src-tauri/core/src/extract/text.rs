//! Text-like files: binary detection, decoding (UTF-8, UTF-16 with a BOM, Latin-1 as the last
//! resort), HTML to text, CSV to tab-separated lines.

use std::path::Path;

/// NUL bytes in the first 8 KB mean binary, unless a UTF-16 BOM explains them.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return false;
    }
    memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some()
}

/// Decodes text bytes; never fails (Latin-1 maps every byte to a character).
pub(crate) fn decode(bytes: Vec<u8>) -> (String, &'static str) {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return match std::str::from_utf8(rest) {
            Ok(s) => (s.to_string(), "utf-8"),
            Err(_) => (latin1(rest), "latin-1"),
        };
    }
    let utf16 = |rest: &[u8], le: bool| -> String {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return (utf16(rest, true), "utf-16le");
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return (utf16(rest, false), "utf-16be");
    }
    match String::from_utf8(bytes) {
        Ok(s) => (s, "utf-8"),
        Err(e) => (latin1(e.as_bytes()), "latin-1"),
    }
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| b as char).collect()
}

/// Visible text of an HTML page: tags dropped, script/style/head contents dropped, block
/// elements as line breaks, the common entities decoded. Malformed markup degrades to text.
pub(crate) fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    let b = html.as_bytes();
    while i < b.len() {
        if b[i] == b'<' {
            let Some(end) = html[i..].find('>').map(|e| i + e) else {
                break;
            };
            let tag = lower[i + 1..end].trim_start_matches('/');
            let name: String = tag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let closing = lower[i + 1..end].starts_with('/');
            if !closing && matches!(name.as_str(), "script" | "style" | "head" | "template") {
                // Skip to the matching end tag (or the end of the page).
                let close = format!("</{name}");
                i = lower[end..]
                    .find(&close)
                    .map(|p| end + p)
                    .and_then(|p| lower[p..].find('>').map(|q| p + q + 1))
                    .unwrap_or(b.len());
                continue;
            }
            if matches!(
                name.as_str(),
                "p" | "br"
                    | "div"
                    | "li"
                    | "tr"
                    | "h1"
                    | "h2"
                    | "h3"
                    | "h4"
                    | "h5"
                    | "h6"
                    | "section"
                    | "article"
                    | "table"
                    | "ul"
                    | "ol"
                    | "hr"
                    | "title"
            ) && !out.ends_with('\n')
            {
                out.push('\n');
            } else if !closing
                && matches!(name.as_str(), "td" | "th")
                && !out.is_empty()
                && !out.ends_with('\n')
            {
                // Cells of one row: separated by tabs, like CSV rows.
                out.push('\t');
            }
            i = end + 1;
            continue;
        }
        let next = html[i..].find('<').map(|p| i + p).unwrap_or(b.len());
        out.push_str(&entities(&html[i..next]));
        i = next;
    }
    // Block tags at the top leave empty lines before the first words.
    out.trim_start_matches('\n').to_string()
}

fn entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[..rest.len().min(12)].find(';');
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some(' '),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// CSV/TSV as tab-separated lines (ragged rows kept; a bad record ends the table with what was
/// read so far, plus the raw rest, so nothing sensitive is hidden from the scanner).
pub(crate) fn csv_to_text(text: &str, path: &Path) -> String {
    let tsv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("tsv"));
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(if tsv { b'\t' } else { b',' })
        .from_reader(text.as_bytes());
    let mut out = String::with_capacity(text.len());
    let mut rec = csv::StringRecord::new();
    loop {
        match r.read_record(&mut rec) {
            Ok(true) => {
                let row: Vec<&str> = rec.iter().collect();
                out.push_str(&row.join("\t"));
                out.push('\n');
            }
            Ok(false) => break,
            Err(_) => {
                let at = r.position().byte() as usize;
                out.push_str(text.get(at..).unwrap_or_default());
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_boms_and_falls_back_to_latin1() {
        assert_eq!(decode(b"\xEF\xBB\xBFhi".to_vec()), ("hi".into(), "utf-8"));
        assert_eq!(
            decode(vec![0xFF, 0xFE, b'h', 0, b'i', 0]),
            ("hi".into(), "utf-16le")
        );
        assert_eq!(
            decode(vec![0xFE, 0xFF, 0, b'h', 0, b'i']),
            ("hi".into(), "utf-16be")
        );
        assert_eq!(decode(b"caf\xE9".to_vec()), ("café".into(), "latin-1"));
        assert!(looks_binary(b"\x7FELF\x00\x01"));
        assert!(!looks_binary(&[0xFF, 0xFE, b'h', 0]));
    }

    #[test]
    fn html_keeps_visible_text_only() {
        let t = html_to_text("<html><head><title>x</title><style>p{}</style></head><body><p>Dear &amp; dear</p><script>var k='sk-1';</script><table><tr><td>IBAN</td><td>DE89&#32;3704</td></tr></table></body>");
        assert!(t.contains("Dear & dear"), "{t}");
        assert!(t.contains("IBAN\tDE89 3704"), "{t}");
        assert!(!t.contains("var k") && !t.contains("p{}"), "{t}");
    }

    #[test]
    fn csv_rows_become_tab_separated_lines() {
        let t = csv_to_text(
            "name,iban\n\"Doe, Jane\",DE89\nragged\n",
            Path::new("a.csv"),
        );
        assert_eq!(t, "name\tiban\nDoe, Jane\tDE89\nragged\n");
    }
}
