//! PDF (pdf-extract, behind a panic guard), DOCX (zip + quick-xml: paragraphs, tabs, breaks,
//! headers, footers, notes, comments) and XLSX (calamine's streaming cell reader, so a sheet
//! that declares a million rows allocates nothing for them). Zip archives are checked for bombs
//! before anything is inflated.

use std::io::{Cursor, Read};
use std::path::Path;

use calamine::{DataRef, Reader as _, Xlsx};
use quick_xml::events::Event;

use super::{shown, ExtractError, Limits};

fn corrupt(path: &Path, kind: &'static str, detail: impl std::fmt::Display) -> ExtractError {
    ExtractError::Corrupt {
        path: shown(path),
        kind,
        detail: detail.to_string(),
    }
}

/// Arrays and dictionaries nested deeper than this are refused before parsing: lopdf parses
/// them recursively, and a stack overflow aborts the process past any panic guard (a known
/// lopdf advisory). Real documents nest a handful of levels.
pub(crate) const MAX_PDF_NESTING: usize = 256;

/// The deepest `[`/`<<` nesting in a PDF's bytes outside strings, comments and streams.
fn pdf_nesting(bytes: &[u8]) -> usize {
    let (mut depth, mut max, mut i) = (0usize, 0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
            }
            b'(' => {
                // A literal string: balanced parentheses, backslash escapes.
                let mut level = 1;
                i += 1;
                while i < bytes.len() && level > 0 {
                    match bytes[i] {
                        b'\\' => i += 1,
                        b'(' => level += 1,
                        b')' => level -= 1,
                        _ => {}
                    }
                    i += 1;
                }
                continue;
            }
            b'<' if bytes.get(i + 1) == Some(&b'<') => {
                depth += 1;
                i += 1;
            }
            b'<' => {
                // A hex string.
                while i < bytes.len() && bytes[i] != b'>' {
                    i += 1;
                }
            }
            b'>' if bytes.get(i + 1) == Some(&b'>') => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b's' if bytes[i..].starts_with(b"stream")
                && matches!(bytes.get(i + 6), Some(b'\r' | b'\n')) =>
            {
                // Stream data is binary: skip to its end.
                match memchr::memmem::find(&bytes[i..], b"endstream") {
                    Some(n) => i += n + 9,
                    None => return max,
                }
                continue;
            }
            _ => {}
        }
        max = max.max(depth);
        i += 1;
    }
    max
}

pub(crate) fn pdf(path: &Path, bytes: &[u8], limits: &Limits) -> Result<String, ExtractError> {
    if !bytes.starts_with(b"%PDF-") {
        return Err(corrupt(path, "PDF", "no %PDF- header"));
    }
    if pdf_inflates_past(bytes, limits.max_unzipped_bytes) {
        return Err(ExtractError::ZipBomb {
            path: shown(path),
            max: limits.max_unzipped_bytes,
        });
    }
    let nesting = pdf_nesting(bytes);
    if nesting > MAX_PDF_NESTING {
        return Err(corrupt(
            path,
            "PDF",
            format!("objects nested {nesting} deep (more than {MAX_PDF_NESTING}): not parsed"),
        ));
    }
    // Parsed on a thread with a large stack (nesting inside compressed object streams is not
    // seen by the check above), behind a panic guard: parsers of this format are known to panic
    // on odd fonts, and a panic here is one bad file.
    let owned = bytes.to_vec();
    let parsed = std::thread::Builder::new()
        .name("tandem-pdf".into())
        .stack_size(256 << 20)
        .spawn(move || {
            std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(&owned))
                .map(|r| r.map_err(|e| e.to_string()))
        })
        .ok()
        .and_then(|t| t.join().ok());
    match parsed {
        Some(Ok(Ok(text))) => Ok(text),
        Some(Ok(Err(e))) => Err(corrupt(path, "PDF", e)),
        _ => Err(ExtractError::Panicked {
            path: shown(path),
            kind: "PDF",
        }),
    }
}

/// Refuses a workbook whose shared-string table declares more entries than its size could hold:
/// calamine reserves room for the declared count before reading, so a 1 KB file declaring four
/// billion strings aborts the process on allocation (past any panic guard).
fn check_shared_strings(
    path: &Path,
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
) -> Result<(), ExtractError> {
    let names: Vec<String> = zip
        .file_names()
        .filter(|n| n.to_ascii_lowercase().ends_with("sharedstrings.xml"))
        .map(String::from)
        .collect();
    for name in names {
        let f = zip.by_name(&name).map_err(|e| corrupt(path, "XLSX", e))?;
        let size = f.size();
        // The declaration sits in the root element, at the start of the part.
        let mut head = Vec::new();
        f.take(4096)
            .read_to_end(&mut head)
            .map_err(|e| corrupt(path, "XLSX", e))?;
        let head = String::from_utf8_lossy(&head);
        for attr in ["uniqueCount=\"", "count=\""] {
            let Some(at) = head.find(attr) else { continue };
            let digits: String = head[at + attr.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            // Each entry takes at least `<si/>` (5 bytes); too many digits is too many entries.
            let declared = digits.parse::<u64>().unwrap_or(u64::MAX);
            if declared > size / 5 + 16 {
                return Err(corrupt(
                    path,
                    "XLSX",
                    format!("its shared-string table declares {declared} entries in {size} bytes"),
                ));
            }
        }
    }
    Ok(())
}

/// Opens a zip and refuses it when what it declares would inflate past the limit, or when an
/// entry claims a ratio no document has.
fn open_zip<'a>(
    path: &Path,
    kind: &'static str,
    bytes: &'a [u8],
    limits: &Limits,
) -> Result<zip::ZipArchive<Cursor<&'a [u8]>>, ExtractError> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| corrupt(path, kind, e))?;
    let bomb = || ExtractError::ZipBomb {
        path: shown(path),
        max: limits.max_unzipped_bytes,
    };
    let mut total = 0u64;
    for i in 0..zip.len() {
        let f = zip.by_index_raw(i).map_err(|e| corrupt(path, kind, e))?;
        total = total.saturating_add(f.size());
        let ratio = f.size() / f.compressed_size().max(1);
        if total > limits.max_unzipped_bytes || (f.size() > (1 << 20) && ratio > 1000) {
            return Err(bomb());
        }
    }
    // What the entries really inflate to, not what the archive's index declares: a part that
    // declares 100 bytes and inflates to gigabytes would pass the check above, and the parsers
    // (calamine) hold a whole part in memory. Counted, never kept; stops at the limit.
    let mut inflated = 0u64;
    for i in 0..zip.len() {
        let f = zip.by_index(i).map_err(|e| corrupt(path, kind, e))?;
        let room = limits.max_unzipped_bytes.saturating_sub(inflated);
        let n = std::io::copy(&mut f.take(room + 1), &mut std::io::sink())
            .map_err(|e| corrupt(path, kind, e))?;
        inflated += n;
        if inflated > limits.max_unzipped_bytes {
            return Err(bomb());
        }
    }
    Ok(zip)
}

/// Refuses a PDF whose Flate streams inflate past `max` bytes in all: the parser inflates each
/// stream whole, with no limit of its own, so a 1 MB stream of zeros becomes 1 GB in memory.
/// Counted, never kept; stops at the limit. (Streams cannot sit inside object streams, so the
/// file's own streams are all there is.)
fn pdf_inflates_past(bytes: &[u8], max: u64) -> bool {
    use std::io::Read as _;
    let mut total = 0u64;
    let mut at = 0;
    while let Some(i) = memchr::memmem::find(&bytes[at..], b"stream") {
        let kw = at + i;
        at = kw + 6;
        // `stream` as a keyword: after `>>` (and blanks), followed by an end of line.
        let dict_end = bytes[..kw].iter().rposition(|b| !b.is_ascii_whitespace());
        if dict_end.is_none_or(|e| e < 1 || &bytes[e - 1..=e] != b">>") {
            continue;
        }
        let mut start = at;
        if bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if bytes.get(start) != Some(&b'\n') {
            continue;
        }
        start += 1;
        let dict_from = bytes[..kw].windows(2).rposition(|w| w == b"<<").unwrap_or(0);
        if memchr::memmem::find(&bytes[dict_from..kw], b"FlateDecode").is_none() {
            continue;
        }
        let end = memchr::memmem::find(&bytes[start..], b"endstream")
            .map_or(bytes.len(), |e| start + e);
        let room = max.saturating_sub(total);
        let mut z = flate2::read::ZlibDecoder::new(&bytes[start..end]).take(room + 1);
        // A stream that does not inflate cleanly counts what it gave before the error.
        let mut buf = [0u8; 16 << 10];
        loop {
            match z.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n as u64,
            }
        }
        if total > max {
            return true;
        }
        at = end;
    }
    false
}

pub(crate) fn docx(path: &Path, bytes: &[u8], limits: &Limits) -> Result<String, ExtractError> {
    let mut zip = open_zip(path, "DOCX", bytes, limits)?;
    let mut names: Vec<String> = zip
        .file_names()
        .filter(|n| {
            *n == "word/document.xml"
                || ((n.starts_with("word/header")
                    || n.starts_with("word/footer")
                    || *n == "word/footnotes.xml"
                    || *n == "word/endnotes.xml"
                    || *n == "word/comments.xml")
                    && n.ends_with(".xml"))
        })
        .map(String::from)
        .collect();
    if !names.iter().any(|n| n == "word/document.xml") {
        return Err(corrupt(path, "DOCX", "no word/document.xml"));
    }
    // The body first, then the rest in a stable order.
    names.sort_by_key(|n| (n != "word/document.xml", n.clone()));
    let mut out = String::new();
    let mut budget = limits.max_unzipped_bytes;
    for name in names {
        let entry = zip.by_name(&name).map_err(|e| corrupt(path, "DOCX", e))?;
        // Declared sizes can lie: read at most what is left of the budget.
        let mut xml = Vec::new();
        entry
            .take(budget + 1)
            .read_to_end(&mut xml)
            .map_err(|e| corrupt(path, "DOCX", e))?;
        if xml.len() as u64 > budget {
            return Err(ExtractError::ZipBomb {
                path: shown(path),
                max: limits.max_unzipped_bytes,
            });
        }
        budget -= xml.len() as u64;
        word_xml_text(&xml, &mut out).map_err(|e| corrupt(path, "DOCX", e))?;
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

/// The text of WordprocessingML: `w:t` runs, `w:tab` as a tab, `w:br`/`w:cr` and paragraph
/// ends as line breaks.
fn word_xml_text(xml: &[u8], out: &mut String) -> Result<(), quick_xml::Error> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut in_text = false;
    loop {
        match reader.read_event_into(&mut buf)? {
            Event::Start(e) if e.local_name().as_ref() == b"t" => in_text = true,
            Event::End(e) => match e.local_name().as_ref() {
                b"t" => in_text = false,
                b"p" => out.push('\n'),
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                b"tab" => out.push('\t'),
                b"br" | b"cr" => out.push('\n'),
                _ => {}
            },
            Event::Text(t) if in_text => {
                out.push_str(&t.decode().map_err(quick_xml::Error::Encoding)?)
            }
            Event::GeneralRef(r) if in_text => {
                if let Some(c) = r.resolve_char_ref()? {
                    out.push(c);
                } else {
                    out.push(match &*r {
                        b"amp" => '&',
                        b"lt" => '<',
                        b"gt" => '>',
                        b"quot" => '"',
                        b"apos" => '\'',
                        _ => ' ',
                    });
                }
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
        buf.clear();
    }
}

fn cell_text(v: &DataRef<'_>) -> Option<String> {
    Some(match v {
        DataRef::Empty => return None,
        DataRef::String(s) | DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => s.clone(),
        DataRef::SharedString(s) => s.to_string(),
        // Whole numbers as integers: account numbers must read as they were typed.
        DataRef::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        DataRef::Float(f) => f.to_string(),
        DataRef::Int(i) => i.to_string(),
        DataRef::Bool(b) => b.to_string(),
        DataRef::DateTime(d) => d.to_string(),
        DataRef::Error(e) => format!("#{e:?}"),
    })
}

pub(crate) fn xlsx(
    path: &Path,
    bytes: &[u8],
    limits: &Limits,
    notes: &mut Vec<String>,
) -> Result<String, ExtractError> {
    // The bomb check runs on our own view of the archive; calamine then opens it again.
    let mut zip = open_zip(path, "XLSX", bytes, limits)?;
    check_shared_strings(path, &mut zip)?;
    let mut wb: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(|e| corrupt(path, "XLSX", e))?;
    let mut out = String::new();
    let mut cells = 0u64;
    for name in wb.sheet_names() {
        let mut reader = wb
            .worksheet_cells_reader(&name)
            .map_err(|e| corrupt(path, "XLSX", e))?;
        out.push_str(&format!("# {name}\n"));
        let mut row = None;
        while let Some(cell) = reader.next_cell().map_err(|e| corrupt(path, "XLSX", e))? {
            cells += 1;
            if cells > limits.max_cells {
                notes.push(format!(
                    "only the first {} cells were read",
                    limits.max_cells
                ));
                return Ok(out);
            }
            let Some(text) = cell_text(cell.get_value()) else {
                continue;
            };
            let (r, _) = cell.get_position();
            match row {
                Some(prev) if prev == r => out.push('\t'),
                Some(_) => out.push('\n'),
                None => {}
            }
            row = Some(r);
            out.push_str(&text);
        }
        out.push('\n');
    }
    Ok(out)
}
