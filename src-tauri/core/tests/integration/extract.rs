//! Document extraction on real files: every format Tandem reads, and every kind of bad input
//! the watched folders and drag-and-drop will meet, each answered with a clear error.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tandem_core::extract::{self, ExtractError, Kind, Limits};
use tandem_core::ErrorCode;

use crate::pdf_support::pdf;

const IBAN: &str = "DE89 3704 0044 0532 0130 00";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        z.start_file(*name, opts).unwrap();
        z.write_all(data).unwrap();
    }
    z.finish().unwrap().into_inner()
}

fn docx(body: &str, header: &str) -> Vec<u8> {
    let ns = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;
    let doc = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document {ns}><w:body><w:p><w:r><w:t>Dear Jane,</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">{body} </w:t></w:r><w:r><w:tab/><w:t>Rock &amp; Roll</w:t></w:r></w:p></w:body></w:document>"#
    );
    let head = format!(r#"<w:hdr {ns}><w:p><w:r><w:t>{header}</w:t></w:r></w:p></w:hdr>"#);
    zip_of(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", doc.as_bytes()),
        ("word/header1.xml", head.as_bytes()),
    ])
}

fn xlsx(dimension: &str) -> Vec<u8> {
    let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let workbook = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{main}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Accounts" sheetId="1" r:id="rId1"/></sheets></workbook>"#
    );
    let rels = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#;
    let strings = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{main}" count="1" uniqueCount="1"><si><t>Jane Doe</t></si></sst>"#
    );
    let sheet = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{main}"><dimension ref="{dimension}"/><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><t>{IBAN}</t></is></c></row><row r="2"><c r="A2"><v>1234567</v></c><c r="B2"><v>2.5</v></c></row></sheetData></worksheet>"#
    );
    let root = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#;
    zip_of(&[
        ("_rels/.rels", root.as_bytes()),
        ("xl/workbook.xml", workbook.as_bytes()),
        ("xl/_rels/workbook.xml.rels", rels.as_bytes()),
        ("xl/sharedStrings.xml", strings.as_bytes()),
        ("xl/worksheets/sheet1.xml", sheet.as_bytes()),
    ])
}

fn code(e: &ExtractError) -> &'static str {
    e.code()
}

#[test]
fn every_format_gives_its_text() {
    let d = tempfile::tempdir().unwrap();
    let l = Limits::default();
    let get = |name: &str, bytes: &[u8]| {
        extract::extract_file(&write(d.path(), name, bytes), &l).unwrap()
    };

    let t = get("note.md", format!("# Rent\nPaid to {IBAN}.").as_bytes());
    assert_eq!((t.kind, t.encoding), (Kind::Markdown, "utf-8"));
    assert!(t.text.contains(IBAN));
    let t = get(
        "a.csv",
        b"\xEF\xBB\xBFname,iban\n\"Doe, Jane\",DE89370400440532013000\n",
    );
    assert_eq!(t.kind, Kind::Csv);
    assert_eq!(t.text, "name\tiban\nDoe, Jane\tDE89370400440532013000\n");
    let t = get(
        "p.html",
        b"<html><head><script>x=1</script></head><body><p>Call &quot;Jane&quot;</p></body></html>",
    );
    assert_eq!(t.text.trim(), "Call \"Jane\"");
    let t = get("d.json", br#"{"iban": "DE89370400440532013000"}"#);
    assert_eq!(t.kind, Kind::Json);
    let t = get("main.rs", b"let key = \"sk-live\";");
    assert_eq!(t.kind, Kind::Code);
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend("Grüße".encode_utf16().flat_map(|u| u.to_le_bytes()));
    let t = get("letter.txt", &utf16);
    assert_eq!((t.text.as_str(), t.encoding), ("Grüße", "utf-16le"));
    let t = get("old.txt", b"Ren\xE9e M\xFCller");
    assert_eq!((t.text.as_str(), t.encoding), ("Renée Müller", "latin-1"));
    // Unknown extensions are read when they hold text.
    let t = get("notes.weird", b"plain words");
    assert_eq!(t.kind, Kind::Text);

    let t = get(
        "letter.docx",
        &docx(&format!("Please pay {IBAN}."), "Private header"),
    );
    assert_eq!(t.kind, Kind::Docx);
    assert!(t.text.starts_with("Dear Jane,\n"), "{t:?}");
    assert!(
        t.text
            .contains(&format!("Please pay {IBAN}. \tRock & Roll")),
        "{t:?}"
    );
    assert!(t.text.contains("Private header"), "{t:?}");

    let t = get("accounts.xlsx", &xlsx("A1:B2"));
    assert_eq!(t.kind, Kind::Xlsx);
    assert_eq!(
        t.text,
        format!("# Accounts\nJane Doe\t{IBAN}\n1234567\t2.5\n")
    );

    let t = get("statement.pdf", &pdf("Hello Jane DE89370400440532013000"));
    assert_eq!(t.kind, Kind::Pdf);
    assert!(
        t.text.contains("Hello") && t.text.contains("DE89370400440532013000"),
        "{t:?}"
    );

    // A 0-byte file is an empty document, not an error.
    let t = get("empty.txt", b"");
    assert_eq!(t.text, "");
}

#[test]
fn bad_input_is_a_clear_error_on_that_file() {
    let d = tempfile::tempdir().unwrap();
    let l = Limits::default();
    let err = |p: PathBuf, l: &Limits| extract::extract_file(&p, l).unwrap_err();

    let e = err(write(d.path(), "a.docx", b"PK\x03\x04 not really"), &l);
    assert_eq!(code(&e), "extract.corrupt", "{e}");
    assert!(
        e.to_string().contains("a.docx") && e.to_string().contains("DOCX"),
        "{e}"
    );
    assert_eq!(
        code(&err(write(d.path(), "b.xlsx", b"garbage"), &l)),
        "extract.corrupt"
    );
    assert_eq!(
        code(&err(write(d.path(), "c.pdf", b"%PDF-1.4\ngarbage"), &l)),
        "extract.corrupt"
    );
    assert_eq!(
        code(&err(write(d.path(), "d.pdf", b"hello"), &l)),
        "extract.corrupt"
    );
    let no_body = zip_of(&[("word/other.xml", b"<x/>")]);
    assert_eq!(
        code(&err(write(d.path(), "e.docx", &no_body), &l)),
        "extract.corrupt"
    );

    // Zip bombs: a document that inflates past the limit, in DOCX and in XLSX.
    let small = Limits {
        max_unzipped_bytes: 1 << 20,
        ..Limits::default()
    };
    let big = vec![b' '; 4 << 20];
    let bomb = zip_of(&[("word/document.xml", &big)]);
    assert!(bomb.len() < 64 << 10, "the bomb is small on disk");
    assert_eq!(
        code(&err(write(d.path(), "bomb.docx", &bomb), &small)),
        "extract.zip_bomb"
    );
    let bomb = zip_of(&[("xl/workbook.xml", b"<x/>"), ("xl/sharedStrings.xml", &big)]);
    assert_eq!(
        code(&err(write(d.path(), "bomb.xlsx", &bomb), &small)),
        "extract.zip_bomb"
    );

    // The same bomb, its zip headers lying that each part inflates to 100 bytes: judged on
    // what it really inflates to. Mutation-checked: without the count in `open_zip` this
    // file reaches calamine, which holds the 4 MB part in memory.
    let mut liar = bomb.clone();
    let patch = |z: &mut Vec<u8>, sig: &[u8], at: usize| {
        let mut i = 0;
        while let Some(j) = z[i..].windows(4).position(|w| w == sig) {
            let h = i + j;
            z[h + at..h + at + 4].copy_from_slice(&100u32.to_le_bytes());
            i = h + 4;
        }
    };
    patch(&mut liar, b"PK\x03\x04", 22);
    patch(&mut liar, b"PK\x01\x02", 24);
    assert_eq!(
        code(&err(write(d.path(), "liar.xlsx", &liar), &small)),
        "extract.zip_bomb"
    );
    // A PDF whose one Flate stream inflates to 4 MB of zeros.
    let zeros = {
        use std::io::Write as _;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&vec![0u8; 4 << 20]).unwrap();
        z.finish().unwrap()
    };
    let mut pdf = b"%PDF-1.7\n1 0 obj\n<< /Length ".to_vec();
    pdf.extend_from_slice(format!("{} /Filter /FlateDecode >>\nstream\n", zeros.len()).as_bytes());
    pdf.extend_from_slice(&zeros);
    pdf.extend_from_slice(b"\nendstream\nendobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");
    assert!(pdf.len() < 64 << 10, "the bomb is small on disk");
    assert_eq!(
        code(&err(write(d.path(), "bomb.pdf", &pdf), &small)),
        "extract.zip_bomb"
    );

    // A sheet declaring every cell Excel allows is read by its real cells, and the cell cap holds.
    let t =
        extract::extract_file(&write(d.path(), "huge.xlsx", &xlsx("A1:XFD1048576")), &l).unwrap();
    assert!(t.text.contains("Jane Doe"));
    let few = Limits {
        max_cells: 2,
        ..Limits::default()
    };
    let t = extract::extract_file(&write(d.path(), "cap.xlsx", &xlsx("A1:B2")), &few).unwrap();
    assert!(
        !t.text.contains("1234567") && t.notes.iter().any(|n| n.contains("first 2 cells")),
        "{t:?}"
    );

    // Binary content under a text name; a binary file of unknown type.
    assert_eq!(
        code(&err(
            write(d.path(), "x.txt", b"\x7FELF\x02\x01\x00\x00"),
            &l
        )),
        "extract.binary"
    );
    assert_eq!(
        code(&err(write(d.path(), "x.bin", b"\x00\x01\x02"), &l)),
        "extract.unsupported"
    );

    // A 2 GB file is refused from its size, without reading it (sparse here).
    let p = d.path().join("huge.txt");
    std::fs::File::create(&p).unwrap().set_len(2 << 30).unwrap();
    let e = err(p, &l);
    assert_eq!(code(&e), "extract.too_large");
    assert!(e.to_string().contains("2147483648"), "{e}");

    // A symlink loop, a directory, a file that is gone.
    let a = d.path().join("loop_a.txt");
    let b = d.path().join("loop_b.txt");
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let e = err(a, &l);
    assert_eq!(code(&e), "extract.io", "{e}");
    assert_eq!(code(&err(d.path().to_path_buf(), &l)), "extract.not_a_file");
    assert_eq!(
        code(&err(d.path().join("gone.txt"), &l)),
        "extract.not_found"
    );

    // A name that is not UTF-8 is read, and shown lossily in errors.
    use std::os::unix::ffi::OsStrExt;
    let odd = d.path().join(std::ffi::OsStr::from_bytes(b"caf\xE9.txt"));
    std::fs::write(&odd, "a note").unwrap();
    assert_eq!(extract::extract_file(&odd, &l).unwrap().text, "a note");
    std::fs::write(&odd, b"\x00\x01").unwrap();
    assert!(err(odd, &l).to_string().contains("caf\u{FFFD}.txt"));

    // Permission denied cannot be staged for root (root reads every file); the mapping of
    // EACCES to extract.permission_denied is what a user sees (README).
}

#[tokio::test]
async fn the_async_guard_times_out_and_survives_broken_pdfs() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "big.txt", &vec![b'a'; 8 << 20]);
    let l = Limits {
        timeout: Duration::ZERO,
        ..Limits::default()
    };
    // The extraction runs on a blocking thread from the moment it is asked for, so on a
    // loaded machine it can finish before the zero timeout is first checked: the guard must
    // win at least once in five (without it, none would time out).
    let mut outcomes = Vec::new();
    for _ in 0..5 {
        match extract::extract(&p, &l).await {
            Err(e) if code(&e) == "extract.timeout" => break,
            other => outcomes.push(
                other
                    .map(|r| r.text.len())
                    .map_err(|e| code(&e).to_string()),
            ),
        }
    }
    assert!(outcomes.len() < 5, "never timed out: {outcomes:?}");

    // Damaged PDFs (bytes flipped all over a valid one): every one ends in text or an error,
    // none takes the process down.
    let good = pdf("Hello Jane");
    let l = Limits {
        timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    let mut outcomes = std::collections::BTreeMap::new();
    for seed in 0..120u64 {
        let mut bytes = good.clone();
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        for _ in 0..(1 + seed % 8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = 9 + (x as usize) % (bytes.len() - 9);
            bytes[at] = (x >> 32) as u8;
        }
        let p = write(d.path(), &format!("broken{seed}.pdf"), &bytes);
        let key = match extract::extract(&p, &l).await {
            Ok(_) => "ok",
            Err(e) => code(&e),
        };
        *outcomes.entry(key).or_insert(0) += 1;
    }
    assert!(
        outcomes
            .keys()
            .all(|k| ["ok", "extract.corrupt", "extract.panicked"].contains(k)),
        "{outcomes:?}"
    );
    eprintln!("damaged PDFs: {outcomes:?}");
}
