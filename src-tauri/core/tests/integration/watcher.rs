//! The watcher on a real folder: a file copied in slowly is indexed once, after it settled, with
//! all its content; renames, deletions and new sub-folders are followed; polling works too.

use std::io::Write;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use tandem_core::extract::Limits;
use tandem_core::index::{Folder, Index};
use tandem_core::sensitivity::{Scanner, UserRules};
use tandem_core::watcher::{FolderWatcher, WatchEvent, WatchOptions};

fn wait_for(
    rx: &mpsc::Receiver<WatchEvent>,
    want: impl Fn(&WatchEvent) -> bool,
) -> Vec<WatchEvent> {
    let t = Instant::now();
    let mut seen = Vec::new();
    while t.elapsed() < Duration::from_secs(10) {
        if let Ok(ev) = rx.recv_timeout(Duration::from_millis(100)) {
            let done = want(&ev);
            seen.push(ev);
            if done {
                return seen;
            }
        }
    }
    panic!("the expected event never came; saw {seen:?}");
}

/// `quiet`: nothing may follow the last change (OS events; a poller may still report a late
/// look at a file it had seen, which must then be `unchanged`).
fn run(opts: WatchOptions, quiet: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("private");
    std::fs::create_dir_all(&root).unwrap();
    let root = std::fs::canonicalize(&root).unwrap();
    let db = tmp.path().join("index.sqlite3");
    let scanner = Arc::new(Scanner::rules_only(&UserRules::default()).unwrap());
    let folders = vec![Folder {
        path: root.clone(),
        sensitive: true,
        ..Folder::default()
    }];
    let (tx, rx) = mpsc::channel();
    let w = FolderWatcher::start(
        folders,
        Index::open(&db, Limits::default()).unwrap(),
        scanner,
        opts,
        move |ev| {
            let _ = tx.send(ev);
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));

    // A slow copy: three pieces 200 ms apart (shorter than the settle window).
    let report = root.join("lab.txt");
    let mut f = std::fs::File::create(&report).unwrap();
    for piece in [
        "Lab report. ",
        "HbA1c 7.1 percent. ",
        "Signed: Dr. Weiss, zebrafinch.",
    ] {
        f.write_all(piece.as_bytes()).unwrap();
        f.flush().unwrap();
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(f);
    let seen = wait_for(
        &rx,
        |e| matches!(e, WatchEvent::Indexed { path } if path.ends_with("lab.txt")),
    );
    let indexed_lab = seen
        .iter()
        .filter(|e| matches!(e, WatchEvent::Indexed { path } if path.ends_with("lab.txt")))
        .count();
    assert_eq!(indexed_lab, 1, "{seen:?}");
    let search = Index::open(&db, Limits::default()).unwrap();
    let hits = search.search("zebrafinch", 5).unwrap();
    assert_eq!(hits.len(), 1, "the whole file was read, once it settled");
    assert!(hits[0].sensitive_source);

    // Editors save by rename: a new name appears, the old one goes.
    let moved = root.join("lab-2026.txt");
    std::fs::rename(&report, &moved).unwrap();
    wait_for(
        &rx,
        |e| matches!(e, WatchEvent::Indexed { path } if path.ends_with("lab-2026.txt")),
    );
    let hits = search.search("zebrafinch", 5).unwrap();
    assert!(
        hits.len() == 1 && hits[0].path.ends_with("lab-2026.txt"),
        "{hits:?}"
    );

    // A new sub-folder with a file in it; then a deletion.
    let sub = tmp.path().join("staging");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("scan.md"), "Insurance number kestrelbird").unwrap();
    std::fs::rename(&sub, root.join("2026")).unwrap();
    wait_for(
        &rx,
        |e| matches!(e, WatchEvent::Indexed { path } if path.ends_with("scan.md")),
    );
    assert_eq!(search.search("kestrelbird", 5).unwrap().len(), 1);
    std::fs::remove_file(&moved).unwrap();
    wait_for(
        &rx,
        |e| matches!(e, WatchEvent::Removed { path } if path.ends_with("lab-2026.txt")),
    );
    assert!(search.search("zebrafinch", 5).unwrap().is_empty());
    // Quiet afterwards: reading files to index them is not a change (no feedback loop).
    std::thread::sleep(Duration::from_millis(1500));
    let late: Vec<WatchEvent> = rx.try_iter().collect();
    assert!(
        late.iter().all(|e| match e {
            WatchEvent::Indexed { .. } => false,
            WatchEvent::Unchanged { .. } => !quiet,
            _ => true,
        }),
        "{late:?}"
    );
    w.stop();
}

#[test]
fn os_events_follow_changes_after_they_settle() {
    run(WatchOptions::default(), true);
}

#[test]
fn polling_follows_changes_too() {
    run(
        WatchOptions {
            poll: Some(Duration::from_millis(200)),
            ..WatchOptions::default()
        },
        false,
    );
}
