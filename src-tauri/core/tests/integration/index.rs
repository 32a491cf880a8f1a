//! The local index on real folders and a real SQLite file: a sensitive and a normal folder,
//! bad files among good ones, changes, deletions, and an interrupted pass that resumes.

use std::path::Path;

use tandem_core::extract::Limits;
use tandem_core::index::{Folder, Folders, Index};
use tandem_core::sensitivity::{Scanner, UserRules, Verdict};

fn scanner() -> Scanner {
    Scanner::rules_only(&UserRules::default()).unwrap()
}

fn put(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn folders_are_indexed_searched_and_kept_current() {
    let tmp = tempfile::tempdir().unwrap();
    let private = tmp.path().join("private");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(private.join("2026")).unwrap();
    std::fs::create_dir_all(work.join(".git")).unwrap();
    put(
        &private.join("2026"),
        "lab.txt",
        "Lab report: HbA1c 7.1 percent, fasting glucose normal.",
    );
    put(&private, "budget.csv", "month,amount\nMay,1200\n");
    put(&work, "notes.md", "# Notes\nShip the gateway on Thursday.");
    put(
        &work,
        "contact.txt",
        "Write to jane.doe@posteo.de about the gateway.",
    );
    put(&work, "broken.pdf", "%PDF-1.7 and nothing else");
    put(&work, "empty.txt", "");
    put(&work.join(".git"), "config", "[core] secret = 1");
    std::os::unix::fs::symlink(work.join("loop2"), work.join("loop1")).unwrap();
    std::os::unix::fs::symlink(work.join("loop1"), work.join("loop2")).unwrap();
    let folders = vec![
        Folder {
            path: private.clone(),
            sensitive: true,
            ..Folder::default()
        },
        Folder {
            path: work.clone(),
            sensitive: false,
            ..Folder::default()
        },
    ];
    let db = tmp.path().join("index.sqlite3");
    let s = scanner();
    let mut idx = Index::open(&db, Limits::default()).unwrap();
    let stats = idx.pass(&folders, &s, |_| {}).unwrap();
    // 2 private + notes, contact, broken, empty + 2 link-loop entries; .git skipped.
    assert_eq!(stats.seen, 8, "{stats:?}");
    assert_eq!((stats.indexed, stats.failed), (5, 3), "{stats:?}");

    let st = idx.status().unwrap();
    assert_eq!((st.indexed, st.failed, st.queued), (5, 3, 0), "{st:?}");
    assert_eq!(st.by_verdict.get("local_only"), Some(&2), "{st:?}");
    assert_eq!(st.by_verdict.get("maskable"), Some(&1), "{st:?}");
    assert!(
        st.failures
            .iter()
            .any(|(p, e)| p.ends_with("broken.pdf") && e.contains("PDF")),
        "{st:?}"
    );
    assert!(
        st.failures.iter().any(|(p, _)| p.ends_with("loop1")),
        "{st:?}"
    );

    let hits = idx.search("HbA1c", 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert!(hits[0].path.ends_with("lab.txt") && hits[0].sensitive_source);
    assert_eq!(hits[0].verdict, Some(Verdict::LocalOnly));
    assert!(hits[0].snippet.contains("[HbA1c]"), "{:?}", hits[0]);
    let hits = idx.search("gateway", 5).unwrap();
    assert_eq!(hits.len(), 2);
    // Any text is a valid query (FTS syntax is not interpreted).
    assert!(idx.search("\"unbalanced AND (", 5).is_ok());
    assert!(
        idx.search("secret", 5).unwrap().is_empty(),
        "hidden folders are skipped"
    );

    // A second pass changes nothing; an edit, a touch and a deletion are each seen.
    // A file that failed to parse is recorded once and not read again until it changes (the
    // link loops, unreadable, are tried again: that costs nothing).
    let stats = idx.pass(&folders, &s, |_| {}).unwrap();
    assert_eq!((stats.indexed, stats.unchanged), (0, 6), "{stats:?}");
    assert_eq!(stats.failed, 2, "{stats:?}");
    assert!(
        idx.status()
            .unwrap()
            .failures
            .iter()
            .any(|(p, _)| p.ends_with("loop1")),
        "still listed as failed"
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    put(&work, "notes.md", "# Notes\nShip the gateway on Friday.");
    std::fs::File::options()
        .append(true)
        .open(work.join("contact.txt"))
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    std::fs::remove_file(private.join("budget.csv")).unwrap();
    let stats = idx.pass(&folders, &s, |_| {}).unwrap();
    assert_eq!(
        (stats.indexed, stats.unchanged, stats.removed),
        // The touched contact.txt, empty.txt, lab.txt and the failed broken.pdf are unchanged.
        (1, 4, 1),
        "{stats:?}"
    );
    assert!(idx.search("Friday", 5).unwrap()[0]
        .path
        .ends_with("notes.md"));
    assert!(idx.search("Thursday", 5).unwrap().is_empty());

    // A folder no longer watched leaves the index.
    let stats = idx.pass(&folders[1..], &s, |_| {}).unwrap();
    assert_eq!(stats.removed, 1, "{stats:?}");
    assert!(idx.search("HbA1c", 5).unwrap().is_empty());
}

/// A link in a watched folder to a file outside it (or a linked folder on the way) is not
/// read: the index holds only what the user chose to watch. Mutation-checked: without the
/// check in `read_file` the canary is found.
#[test]
fn links_out_of_a_watched_folder_are_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let notes = tmp.path().join("notes");
    let secrets = tmp.path().join("home-ssh");
    std::fs::create_dir_all(notes.join("sub")).unwrap();
    std::fs::create_dir_all(&secrets).unwrap();
    put(&secrets, "id.txt", "canary-zebra-7731 private key material");
    put(&notes.join("sub"), "plan.txt", "Garden plan: tulips by the fence.");
    std::os::unix::fs::symlink(secrets.join("id.txt"), notes.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink(&secrets, notes.join("linked")).unwrap();
    // A link that stays inside the folder is one of its files.
    std::os::unix::fs::symlink(notes.join("sub/plan.txt"), notes.join("plan-link.txt")).unwrap();
    let folders = vec![Folder {
        path: notes.clone(),
        sensitive: false,
        ..Folder::default()
    }];
    let s = scanner();
    let mut idx = Index::open(&tmp.path().join("index.sqlite3"), Limits::default()).unwrap();
    idx.pass(&folders, &s, |_| {}).unwrap();
    // The watcher's path for a file under a linked folder: read one file by name.
    let _ = idx.index_file(&notes.join("linked/id.txt"), &notes.to_string_lossy(), false, &s);
    assert!(
        idx.search("zebra", 5).unwrap().is_empty(),
        "a file outside the watched folder was indexed"
    );
    let st = idx.status().unwrap();
    assert!(
        st.failures
            .iter()
            .any(|(p, e)| p.ends_with("leak.txt") && e.contains("out of the watched folder")),
        "{st:?}"
    );
    let hits = idx.search("tulips", 5).unwrap();
    assert_eq!(hits.len(), 2, "the file and the link inside the folder: {hits:?}");
}

#[test]
fn an_interrupted_pass_resumes_and_indexes_each_file_once() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for i in 0..40 {
        put(
            &docs,
            &format!("f{i:02}.txt"),
            &format!("document number {i} about apples"),
        );
    }
    let folder = Folder {
        path: docs.clone(),
        sensitive: false,
        ..Folder::default()
    };
    let db = tmp.path().join("index.sqlite3");
    let s = scanner();
    {
        let mut idx = Index::open(&db, Limits::default()).unwrap();
        assert_eq!(idx.enqueue_folder(&folder).unwrap(), 40);
        // Stop after 15 files, as a crash would (the panic unwinds out of the pass).
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            idx.process_queue(&s, |st| {
                if st.seen == 15 {
                    panic!("stopped");
                }
            })
        }));
        assert!(r.is_err());
    }
    let mut idx = Index::open(&db, Limits::default()).unwrap();
    let st = idx.status().unwrap();
    assert_eq!((st.indexed, st.queued), (15, 25), "{st:?}");
    let stats = idx.pass(std::slice::from_ref(&folder), &s, |_| {}).unwrap();
    assert_eq!((stats.indexed, stats.unchanged), (25, 15), "{stats:?}");
    assert_eq!(idx.search("apples", 100).unwrap().len(), 40);
}

#[test]
fn the_folders_file_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("cfg/folders.toml");
    let mut f = Folders::load(&file).unwrap();
    assert!(f.folders.is_empty());
    f.add(tmp.path(), true).unwrap();
    assert!(f.add(&tmp.path().join("missing"), false).is_err());
    f.save(&file).unwrap();
    let mut g = Folders::load(&file).unwrap();
    assert_eq!(g.folders, f.folders);
    assert!(g.remove(tmp.path()));
    std::fs::write(&file, "folder = 3").unwrap();
    assert!(Folders::load(&file).is_err());
}

#[test]
fn include_and_exclude_globs_choose_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("docs");
    std::fs::create_dir_all(root.join("drafts")).unwrap();
    put(&root, "a.txt", "alpha words");
    put(&root, "b.md", "beta words");
    put(&root.join("drafts"), "c.txt", "gamma words");
    let root = std::fs::canonicalize(&root).unwrap();
    let mut folders = Folders::default();
    let f = folders
        .add_with(
            &root,
            false,
            vec!["**/*.txt".into()],
            vec!["drafts/**".into()],
        )
        .unwrap();
    assert!(folders
        .add_with(&root, false, vec!["[unclosed".into()], vec![])
        .is_err());
    let s = scanner();
    let mut idx = Index::open(&tmp.path().join("i.sqlite3"), Limits::default()).unwrap();
    let stats = idx.pass(std::slice::from_ref(&f), &s, |_| {}).unwrap();
    assert_eq!((stats.seen, stats.indexed), (1, 1), "{stats:?}");
    assert_eq!(idx.search("words", 10).unwrap().len(), 1);
    // Narrowing the globs later removes what no longer matches.
    let all = Folder {
        path: root.clone(),
        ..Folder::default()
    };
    idx.pass(std::slice::from_ref(&all), &s, |_| {}).unwrap();
    assert_eq!(idx.search("words", 10).unwrap().len(), 3);
    let stats = idx.pass(std::slice::from_ref(&f), &s, |_| {}).unwrap();
    assert_eq!(stats.removed, 2, "{stats:?}");
}

/// Retention (`keep_index_days`): the text of files older than the setting leaves the index
/// (not searchable, listed as expired, not read again while unchanged); newer files keep it.
#[test]
fn the_index_keeps_text_only_as_long_as_the_retention_says() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    std::fs::create_dir_all(&dir).unwrap();
    put(
        &dir,
        "old.txt",
        "The quarterly zephyrine report from long ago.",
    );
    put(
        &dir,
        "new.txt",
        "The quarterly zephyrine report from this week.",
    );
    let year_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(400 * 86_400);
    std::fs::File::options()
        .write(true)
        .open(dir.join("old.txt"))
        .unwrap()
        .set_modified(year_ago)
        .unwrap();
    let folders = vec![Folder {
        path: dir.clone(),
        sensitive: true,
        ..Folder::default()
    }];
    let db = tmp.path().join("index.sqlite3");
    let s = scanner();
    let mut idx = Index::open(&db, Limits::default())
        .unwrap()
        .keep_text_days(Some(30));
    idx.pass(&folders, &s, |_| {}).unwrap();
    let hits: Vec<String> = idx
        .search("zephyrine", 10)
        .unwrap()
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].ends_with("new.txt"), "{hits:?}");
    let st = idx.status().unwrap();
    assert_eq!((st.indexed, st.expired), (1, 1), "{st:?}");
    // Nothing of the old file's text is left in the database file's tables.
    let again = idx.pass(&folders, &s, |_| {}).unwrap();
    assert_eq!(again.unchanged, 2, "{again:?}");
    drop(idx);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM chunks WHERE text LIKE '%long ago%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 0);
    // Without a retention everything is kept.
    let mut idx = Index::open(&db, Limits::default()).unwrap();
    idx.pass(&folders, &s, |_| {}).unwrap();
    assert_eq!(idx.search("zephyrine", 10).unwrap().len(), 2);
}

/// A file being read when the process died: alone, it is the culprit and is recorded failed
/// once; read beside others (a batch), it may be innocent and is read again, alone. Both
/// states are planted in the real database as a crash would leave them.
#[test]
fn a_crash_in_a_batch_fails_no_innocent_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("docs");
    std::fs::create_dir_all(&dir).unwrap();
    put(&dir, "alone.txt", "read alone when the process died");
    put(
        &dir,
        "beside.txt",
        "read beside others when the process died",
    );
    let folders = vec![Folder {
        path: dir.clone(),
        sensitive: false,
        ..Folder::default()
    }];
    let db = tmp.path().join("index.sqlite3");
    let s = scanner();
    Index::open(&db, Limits::default())
        .unwrap()
        .pass(&folders, &s, |_| {})
        .unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    for (file, status) in [
        ("alone.txt", "extracting"),
        ("beside.txt", "extracting_batch"),
    ] {
        let n = conn
            .execute(
                "UPDATE files SET status = ?2 WHERE path = ?1",
                rusqlite::params![dir.join(file).to_string_lossy(), status],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    drop(conn);
    let mut idx = Index::open(&db, Limits::default()).unwrap();
    let stats = idx.pass(&folders, &s, |_| {}).unwrap();
    assert_eq!((stats.indexed, stats.failed), (1, 1), "{stats:?}");
    let st = idx.status().unwrap();
    assert!(
        st.failures
            .iter()
            .any(|(p, e)| p.ends_with("alone.txt") && e.contains("stopped while reading")),
        "{st:?}"
    );
    assert_eq!(idx.search("beside", 5).unwrap().len(), 1);
}
