//! Indexing a generated corpus of 10,000 mixed files with planted identifiers (text, Markdown,
//! CSV, some PDF and DOCX) in 100 folders: initial throughput (files/s, MB/s) against a peer in
//! the same run (reading every file's bytes), peak memory, a second pass (nothing indexed twice),
//! and change → re-classified latency through the watcher (OS events, 500 ms settle window).
//!
//!     cargo bench --profile dev --workspace --bench index

use std::io::{Cursor, Write};
use std::path::Path;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use tandem_core::extract::Limits;
use tandem_core::index::{Folder, Index};
use tandem_core::sensitivity::{Scanner, UserRules};
use tandem_core::watcher::{FolderWatcher, WatchEvent, WatchOptions};

#[path = "../tests/support/pdf.rs"]
mod pdf_support;
use pdf_support::pdf;

const FILES: usize = 10_000;

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn docx(text: &str) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    z.start_file("word/document.xml", opts).expect("zip");
    write!(z, r#"<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:body></w:document>"#).expect("zip");
    z.finish().expect("zip").into_inner()
}

/// The i-th file: name and bytes. One in five carries an identifier.
fn file(i: usize) -> (String, Vec<u8>) {
    let planted = match i % 5 {
        0 => format!(" Pay to DE89 3704 0044 0532 0130 00 ref {i}."),
        1 => format!(" Contact anna.berg{i}@posteo.de."),
        _ => String::new(),
    };
    let body = format!(
        "Meeting notes {i}: we reviewed the roadmap, agreed on the budget and the next steps for the quarter.{planted}"
    );
    match i % 100 {
        0 | 1 | 2 => (format!("f{i}.pdf"), pdf(&body)),
        3 => (format!("f{i}.docx"), docx(&body)),
        4..=11 => (
            format!("f{i}.csv"),
            format!("item,amount,note\nrent,1200,{body}\n").into_bytes(),
        ),
        12..=31 => (
            format!("f{i}.md"),
            format!("# Notes {i}\n\n{body}\n").into_bytes(),
        ),
        _ => (format!("f{i}.txt"), body.into_bytes()),
    }
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return; // `cargo test --all-targets` smoke run: nothing to check here
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("corpus");
    let mut bytes = 0u64;
    for i in 0..FILES {
        let dir = root.join(format!("d{:02}", i % 100));
        std::fs::create_dir_all(&dir).expect("dir");
        let (name, data) = file(i);
        bytes += data.len() as u64;
        std::fs::write(dir.join(name), data).expect("write");
    }
    let root = std::fs::canonicalize(&root).expect("canonical");
    let folders = vec![Folder {
        path: root.clone(),
        sensitive: false,
        ..Folder::default()
    }];
    let scanner = Arc::new(Scanner::rules_only(&UserRules::default()).expect("scanner"));
    let rss_before = status_kb("VmRSS:");

    // Peer: read every file's bytes (what any indexer must at least do).
    let t = Instant::now();
    let mut n = 0u64;
    for d in std::fs::read_dir(&root).expect("read") {
        for f in std::fs::read_dir(d.expect("entry").path()).expect("read") {
            n += std::fs::read(f.expect("entry").path()).expect("read").len() as u64;
        }
    }
    let peer = t.elapsed();
    assert_eq!(n, bytes);

    let db = tmp.path().join("index.sqlite3");
    let mut idx = Index::open(&db, Limits::default()).expect("index");
    let t = Instant::now();
    let stats = idx.pass(&folders, &scanner, |_| {}).expect("pass");
    let took = t.elapsed();
    let hwm = status_kb("VmHWM:");
    println!(
        "initial pass: {} files ({:.1} MB) in {:.2} s = {:.0} files/s, {:.2} MB/s; indexed {}, failed {}; peer (read every file) {:.2} s, ratio {:.2}",
        stats.seen,
        bytes as f64 / 1e6,
        took.as_secs_f64(),
        stats.seen as f64 / took.as_secs_f64(),
        bytes as f64 / 1e6 / took.as_secs_f64(),
        stats.indexed,
        stats.failed,
        peer.as_secs_f64(),
        peer.as_secs_f64() / took.as_secs_f64()
    );
    println!(
        "memory: RSS before the pass {} MB, peak (VmHWM) of the whole process {} MB",
        rss_before / 1024,
        hwm / 1024
    );
    let st = idx.status().expect("status");
    println!("verdicts: {:?}", st.by_verdict);

    let t = Instant::now();
    let again = idx.pass(&folders, &scanner, |_| {}).expect("pass");
    println!(
        "second pass (restart): {} indexed again, {} unchanged, in {:.2} s",
        again.indexed,
        again.unchanged,
        t.elapsed().as_secs_f64()
    );

    // Change → re-classified, through the watcher.
    let settle = Duration::from_millis(500);
    let (tx, rx) = mpsc::channel();
    let w = FolderWatcher::start(
        folders,
        Index::open(&db, Limits::default()).expect("index"),
        scanner,
        WatchOptions {
            settle,
            ..WatchOptions::default()
        },
        move |ev| {
            let _ = tx.send((Instant::now(), ev));
        },
    )
    .expect("watch");
    std::thread::sleep(Duration::from_millis(500));
    let mut lat = Vec::new();
    for k in 0..40 {
        let p = root
            .join(format!("d{:02}", k % 100))
            .join(format!("new{k}.txt"));
        std::fs::write(
            &p,
            format!("New note {k}: call 030 1234567 about IBAN DE89370400440532013000."),
        )
        .expect("write");
        let written = Instant::now();
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        loop {
            let (at, ev) = rx.recv_timeout(Duration::from_secs(10)).expect("an event");
            if matches!(&ev, WatchEvent::Indexed { path } if Path::new(path).ends_with(&name)) {
                lat.push(at - written);
                break;
            }
        }
    }
    w.stop();
    let (p50, p99) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99));
    let after = |d: Duration| d.saturating_sub(settle).as_secs_f64() * 1e3;
    println!(
        "change → re-classified (40 new files): p50 {:.0} ms, p99 {:.0} ms from the write; after the {} ms settle window: p50 {:.0} ms, p99 {:.0} ms",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        settle.as_millis(),
        after(p50),
        after(p99)
    );
}
