//! The local document index: the folders the user chose, every file in them with its size,
//! mtime, content hash, type, extraction status and a sensitivity summary (labels and counts,
//! never values), and text chunks searchable with SQLite FTS5. Text stays on the device. The
//! work queue is a table, so an interrupted pass resumes where it stopped, and unchanged files
//! are skipped by (size, mtime) then by hash.
//!
//! `rusqlite::Connection` is not `Sync`: an `Index` lives on one thread (hosts run passes on a
//! blocking thread or an actor).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::extract::{self, Limits};
use crate::sensitivity::{Provenance, Scanner, Verdict};
use crate::ErrorCode;

/// Characters per chunk (about a paragraph or two: what a local model can take a few of).
const CHUNK_CHARS: usize = 1200;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    #[error("the index database failed: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("{path}: {message}")]
    Folder { path: String, message: String },
    #[error("the folders file {path} is invalid: {message}")]
    Config { path: String, message: String },
}

impl ErrorCode for IndexError {
    fn code(&self) -> &'static str {
        match self {
            IndexError::Db(_) => "index.db",
            IndexError::Folder { .. } => "index.folder",
            IndexError::Config { .. } => "index.config",
        }
    }
}

/// A watched folder: `sensitive` makes everything inside `local_only`, whatever it says.
/// `include`/`exclude` are globs on the path relative to the folder (`**/*.pdf`, `drafts/**`):
/// with includes, only matching files are read; excludes always win.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Folder {
    pub path: PathBuf,
    pub sensitive: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
}

/// A folder's globs, compiled.
#[derive(Debug, Clone)]
pub struct Filter {
    include: Option<globset::GlobSet>,
    exclude: globset::GlobSet,
}

impl Filter {
    pub fn new(f: &Folder) -> Result<Self, IndexError> {
        let set = |globs: &[String]| -> Result<globset::GlobSet, IndexError> {
            let mut b = globset::GlobSetBuilder::new();
            for g in globs {
                b.add(globset::Glob::new(g).map_err(|e| IndexError::Folder {
                    path: f.path.display().to_string(),
                    message: format!("bad glob {g:?}: {e}"),
                })?);
            }
            b.build().map_err(|e| IndexError::Folder {
                path: f.path.display().to_string(),
                message: e.to_string(),
            })
        };
        Ok(Self {
            include: (!f.include.is_empty())
                .then(|| set(&f.include))
                .transpose()?,
            exclude: set(&f.exclude)?,
        })
    }

    /// Whether a file at `path` (under `root`) is read.
    pub fn allows(&self, root: &Path, path: &Path) -> bool {
        let rel = path.strip_prefix(root).unwrap_or(path);
        !self.exclude.is_match(rel) && self.include.as_ref().is_none_or(|i| i.is_match(rel))
    }
}

/// The folders file, `<config dir>/folders.toml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Folders {
    #[serde(default, rename = "folder")]
    pub folders: Vec<Folder>,
}

impl Folders {
    pub fn file() -> PathBuf {
        crate::config::config_dir().join("folders.toml")
    }

    pub fn load(path: &Path) -> Result<Self, IndexError> {
        match std::fs::read_to_string(path) {
            Ok(s) => toml::from_str(&s).map_err(|e| IndexError::Config {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(IndexError::Config {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), IndexError> {
        let err = |message: String| IndexError::Config {
            path: path.display().to_string(),
            message,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        let text = toml::to_string(self).map_err(|e| err(e.to_string()))?;
        // Written beside and renamed: a crash never leaves half a file.
        // Which folders are sensitive says a lot about the user: this user only.
        crate::private_fs::write_private(path, text.as_bytes()).map_err(|e| err(e.to_string()))
    }

    /// Adds (or relabels) a folder; the path must be an existing directory.
    pub fn add(&mut self, path: &Path, sensitive: bool) -> Result<Folder, IndexError> {
        self.add_with(path, sensitive, Vec::new(), Vec::new())
    }

    /// Adds (or replaces) a folder with include/exclude globs (checked here).
    pub fn add_with(
        &mut self,
        path: &Path,
        sensitive: bool,
        include: Vec<String>,
        exclude: Vec<String>,
    ) -> Result<Folder, IndexError> {
        let canon = std::fs::canonicalize(path).map_err(|e| IndexError::Folder {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        if !canon.is_dir() {
            return Err(IndexError::Folder {
                path: path.display().to_string(),
                message: "not a folder".into(),
            });
        }
        self.folders.retain(|f| f.path != canon);
        let f = Folder {
            path: canon,
            sensitive,
            include,
            exclude,
        };
        Filter::new(&f)?;
        self.folders.push(f.clone());
        Ok(f)
    }

    /// The folder marked sensitive that encloses `path`, if any. The path's real location counts
    /// (symlinks resolved), so a link from elsewhere into a sensitive folder is sensitive too;
    /// with nested folders any sensitive one wins, whatever order they were added in. This is
    /// the one place a path becomes provenance: attachments, folder excerpts and index passes
    /// all ask here.
    pub fn sensitive_for(&self, path: &Path) -> Option<&Folder> {
        let real = std::fs::canonicalize(path).ok();
        let abs = std::path::absolute(path).ok();
        self.folders.iter().filter(|f| f.sensitive).find(|f| {
            [real.as_deref(), abs.as_deref(), Some(path)]
                .into_iter()
                .flatten()
                .any(|p| p.starts_with(&f.path))
        })
    }

    pub fn remove(&mut self, path: &Path) -> bool {
        let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let before = self.folders.len();
        self.folders.retain(|f| f.path != canon && f.path != path);
        before != self.folders.len()
    }
}

/// `TANDEM_INDEX` or `<data dir>/tandem/index.sqlite3`.
pub fn default_path() -> PathBuf {
    crate::config::data_file("TANDEM_INDEX", "index.sqlite3")
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS files (
  path TEXT PRIMARY KEY,
  folder TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  hash TEXT,
  kind TEXT,
  status TEXT NOT NULL,
  error_code TEXT,
  error TEXT,
  verdict TEXT,
  labels TEXT,
  sensitive_source INTEGER NOT NULL,
  indexed_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS queue (path TEXT PRIMARY KEY, folder TEXT NOT NULL, sensitive INTEGER NOT NULL);
-- Folders last enqueued as sensitive: a file under any of them is sensitive, whichever
-- enclosing folder queued it (nested folders, added in any order).
CREATE TABLE IF NOT EXISTS sensitive_roots (path TEXT PRIMARY KEY);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(path UNINDEXED, seq UNINDEXED, text);
CREATE TABLE IF NOT EXISTS docs (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
";

/// A document's chunks have rowids `id * PER_DOC + seq`: deleting them is a rowid range, not a
/// scan of the FTS table (which made a pass quadratic in the number of files).
const PER_DOC: i64 = 1_000_000;

fn doc_id(conn: &Connection, path: &str) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT OR IGNORE INTO docs (path) VALUES (?1)",
        params![path],
    )?;
    conn.query_row("SELECT id FROM docs WHERE path = ?1", params![path], |r| {
        r.get(0)
    })
}

fn delete_chunks(conn: &Connection, path: &str) -> rusqlite::Result<()> {
    let id: Option<i64> = conn
        .query_row("SELECT id FROM docs WHERE path = ?1", params![path], |r| {
            r.get(0)
        })
        .optional()?;
    if let Some(id) = id {
        conn.execute(
            "DELETE FROM chunks WHERE rowid >= ?1 AND rowid < ?2",
            params![id * PER_DOC, (id + 1) * PER_DOC],
        )?;
    }
    Ok(())
}

/// What one pass did.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, ts_rs::TS)]
pub struct PassStats {
    pub seen: u64,
    pub indexed: u64,
    pub unchanged: u64,
    pub failed: u64,
    pub removed: u64,
}

/// The index's totals (`tandem index status`).
#[derive(Debug, Clone, Default, Serialize, ts_rs::TS)]
#[ts(rename = "IndexStatus")]
pub struct Status {
    pub files: u64,
    pub indexed: u64,
    pub failed: u64,
    /// Files whose text left the index under the retention (listed, not searchable).
    pub expired: u64,
    pub queued: u64,
    pub chunks: u64,
    pub by_verdict: BTreeMap<String, u64>,
    pub failures: Vec<(String, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub path: String,
    pub snippet: String,
    /// The whole chunk (about 1,200 characters) the snippet comes from.
    pub text: String,
    pub verdict: Option<Verdict>,
    pub sensitive_source: bool,
}

pub struct Index {
    conn: Connection,
    limits: Limits,
    /// Retention (`keep_index_days`): the text of files not modified for this long leaves the
    /// index after each pass (they stay listed, not searchable). `None`: kept.
    keep_text_days: Option<u64>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or_default()
}

/// Hidden files and version-control folders are skipped (caches, keys of tools, repositories).
fn skipped(name: &std::ffi::OsStr) -> bool {
    let n = name.to_string_lossy();
    n.starts_with('.') || n == "node_modules" || n == "__pycache__" || n.ends_with('~')
}

/// Splits text into chunks of about `CHUNK_CHARS`, at a paragraph or line break when one is
/// near, else at a space.
fn chunks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if rest.len() <= CHUNK_CHARS {
            out.push(rest);
            break;
        }
        let mut end = CHUNK_CHARS;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let window = &rest[..end];
        let cut = window
            .rfind("\n\n")
            .filter(|&i| i > CHUNK_CHARS / 2)
            .or_else(|| window.rfind('\n').filter(|&i| i > CHUNK_CHARS / 2))
            .or_else(|| window.rfind(' ').filter(|&i| i > CHUNK_CHARS / 2))
            .map(|i| i + 1)
            .unwrap_or(end);
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out.into_iter().filter(|c| !c.trim().is_empty()).collect()
}

impl Index {
    pub fn open(path: &Path, limits: Limits) -> Result<Self, IndexError> {
        // The index holds the full text of sensitive folders: this user only.
        crate::private_fs::prepare_db(path).map_err(|e| IndexError::Folder {
            path: path.display().to_string(),
            message: format!("cannot create the index: {e}"),
        })?;
        let conn = Connection::open(path)?;
        crate::private_fs::secure_pragmas(&conn)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn,
            limits,
            keep_text_days: None,
        })
    }

    /// Sets the retention of file text (`keep_index_days`; `None` keeps it).
    pub fn keep_text_days(mut self, days: Option<u64>) -> Self {
        self.keep_text_days = days;
        self
    }

    /// Files modified before this (ns since the epoch) keep no text under the retention.
    fn text_cutoff_ns(&self) -> Option<i64> {
        let days = self.keep_text_days?;
        let now = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_nanos() as i64;
        Some(now.saturating_sub((days as i64).saturating_mul(86_400_000_000_000)))
    }

    /// Applies the retention: drops the text (chunks) of indexed files older than the cutoff
    /// and marks them `expired`. Returns how many files lost their text.
    pub fn expire_text(&mut self) -> Result<u64, IndexError> {
        let Some(cutoff) = self.text_cutoff_ns() else {
            return Ok(0);
        };
        let old: Vec<String> = {
            let mut st = self
                .conn
                .prepare("SELECT path FROM files WHERE status = 'indexed' AND mtime_ns < ?1")?;
            let r = st
                .query_map(params![cutoff], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            r
        };
        let tx = self.conn.transaction()?;
        for path in &old {
            delete_chunks(&tx, path)?;
            tx.execute("DELETE FROM docs WHERE path = ?1", params![path])?;
            tx.execute(
                "UPDATE files SET status = 'expired' WHERE path = ?1",
                params![path],
            )?;
        }
        tx.commit()?;
        Ok(old.len() as u64)
    }

    /// Puts every file under `folder` on the persisted queue (links to folders are not
    /// followed: no loops, no leaving the folder). Unreadable sub-folders are skipped.
    pub fn enqueue_folder(&mut self, folder: &Folder) -> Result<u64, IndexError> {
        let filter = Filter::new(folder)?;
        let root = folder.path.to_string_lossy();
        if folder.sensitive {
            self.conn.execute(
                "INSERT OR IGNORE INTO sensitive_roots (path) VALUES (?1)",
                params![root],
            )?;
        } else {
            self.conn
                .execute("DELETE FROM sensitive_roots WHERE path = ?1", params![root])?;
        }
        let roots = self.sensitive_roots()?;
        let tx = self.conn.transaction()?;
        let mut n = 0;
        {
            let mut ins = tx.prepare(
                "INSERT OR REPLACE INTO queue (path, folder, sensitive) VALUES (?1, ?2, ?3)",
            )?;
            let mut stack = vec![folder.path.clone()];
            while let Some(dir) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    tracing::warn!(dir = %dir.display(), "cannot read a folder; skipped");
                    continue;
                };
                for e in entries.flatten() {
                    if skipped(&e.file_name()) {
                        continue;
                    }
                    let Ok(ft) = e.file_type() else { continue };
                    let p = e.path();
                    if ft.is_dir() {
                        stack.push(p);
                    } else if (ft.is_file() || ft.is_symlink()) && filter.allows(&folder.path, &p) {
                        let sensitive = folder.sensitive || roots.iter().any(|r| p.starts_with(r));
                        ins.execute(params![
                            p.to_string_lossy(),
                            folder.path.to_string_lossy(),
                            sensitive
                        ])?;
                        n += 1;
                    }
                }
            }
        }
        tx.commit()?;
        Ok(n)
    }

    /// Works through the queue in batches: the files of a batch are extracted and classified
    /// on up to `bulk_threads()` threads at once (the scanner's bulk names model, one session
    /// per thread), then each is written in one transaction and leaves the queue, in queue
    /// order. Stopping at any point loses at most one batch's work.
    pub fn process_queue(
        &mut self,
        scanner: &Scanner,
        mut progress: impl FnMut(&PassStats),
    ) -> Result<PassStats, IndexError> {
        let threads = crate::sensitivity::bulk_threads();
        let mut stats = PassStats::default();
        loop {
            let batch: Vec<(String, String, bool)> = {
                let mut st = self
                    .conn
                    .prepare("SELECT path, folder, sensitive FROM queue ORDER BY path LIMIT ?1")?;
                let rows = st.query_map(params![(threads * 4) as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?;
                rows.collect::<Result<_, _>>()?
            };
            if batch.is_empty() {
                break;
            }
            let mut steps = Vec::with_capacity(batch.len());
            for (path, folder, sensitive) in &batch {
                steps.push(self.prepare(Path::new(path), folder, *sensitive, threads > 1)?);
            }
            let mut read = read_jobs(&steps, &self.limits, scanner, threads);
            for ((path, ..), step) in batch.iter().zip(steps) {
                stats.seen += 1;
                let outcome = match step {
                    Step::Done(o) => o,
                    Step::Read(job) => match read.next() {
                        Some(r) => self.commit(&job, r)?,
                        None => Outcome::Failed,
                    },
                };
                match outcome {
                    Outcome::Indexed => stats.indexed += 1,
                    Outcome::Unchanged => stats.unchanged += 1,
                    Outcome::Failed => stats.failed += 1,
                    Outcome::Removed => stats.removed += 1,
                }
                self.conn
                    .execute("DELETE FROM queue WHERE path = ?1", params![path])?;
                progress(&stats);
            }
        }
        Ok(stats)
    }

    fn sensitive_roots(&self) -> Result<Vec<PathBuf>, IndexError> {
        let mut st = self.conn.prepare("SELECT path FROM sensitive_roots")?;
        let roots = st
            .query_map([], |r| r.get::<_, String>(0))?
            .map(|r| r.map(PathBuf::from))
            .collect::<Result<_, _>>()?;
        Ok(roots)
    }

    /// Indexes one file now (a watcher calls this after the file settled).
    pub fn index_file(
        &mut self,
        path: &Path,
        folder: &str,
        sensitive: bool,
        scanner: &Scanner,
    ) -> Result<Outcome, IndexError> {
        match self.prepare(path, folder, sensitive, false)? {
            Step::Done(o) => Ok(o),
            Step::Read(job) => {
                let r = read_file(&job, &self.limits, scanner);
                self.commit(&job, r)
            }
        }
    }

    /// Decides whether `path` must be read, from what the index knows of it; if so, marks it
    /// as being read (`in_batch`: beside other files), so that a file that takes the process
    /// down is known at the next pass.
    fn prepare(
        &mut self,
        path: &Path,
        folder: &str,
        sensitive: bool,
        in_batch: bool,
    ) -> Result<Step, IndexError> {
        let key = path.to_string_lossy().into_owned();
        let sensitive = sensitive || self.sensitive_roots()?.iter().any(|r| path.starts_with(r));
        let meta = match std::fs::metadata(path) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.forget(&key)?;
                return Ok(Step::Done(Outcome::Removed));
            }
            // Permission denied, a link loop, ...: extraction below records the clear error.
            Err(_) => None,
        };
        // A file whose metadata cannot be read (permissions, a link loop) is tried again each
        // pass: that costs nothing, and it may have become readable.
        let readable = meta.is_some();
        let (size, mtime) = meta
            .map(|m| (m.len() as i64, mtime_ns(&m)))
            .unwrap_or((0, 0));
        let known: Option<(i64, i64, Option<String>, String, bool)> = self
            .conn
            .query_row(
                "SELECT size, mtime_ns, hash, status, sensitive_source FROM files WHERE path = ?1",
                params![key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        // A file that was being read beside others when the process died may be innocent: it
        // is read again, alone, and only a crash then marks it failed.
        let mut alone = !in_batch;
        if let Some((s, m, _, status, was_sensitive)) = &known {
            if *s == size && *m == mtime && readable {
                match status.as_str() {
                    // Marked sensitive since it was read: the mark changes, not the text.
                    "indexed" | "failed" => {
                        if *was_sensitive != sensitive {
                            self.conn.execute(
                                "UPDATE files SET sensitive_source = ?2 WHERE path = ?1",
                                params![key, sensitive],
                            )?;
                        }
                        // A file that failed is recorded once, not read again every pass,
                        // until it changes.
                        return Ok(Step::Done(Outcome::Unchanged));
                    }
                    // Its text left under the retention and it has not changed since: it is
                    // not read again (unless the retention no longer covers it).
                    "expired" if self.text_cutoff_ns().is_some_and(|c| mtime < c) => {
                        return Ok(Step::Done(Outcome::Unchanged));
                    }
                    // The process died while reading this very file, alone (a parser that
                    // aborts or overflows its stack is past any guard): record it failed once.
                    "extracting" => {
                        self.conn.execute(
                            "UPDATE files SET status = 'failed', error_code = 'extract.crashed', error = ?2, sensitive_source = ?3, indexed_ms = ?4 WHERE path = ?1",
                            params![key, format!("{key}: Tandem stopped while reading this file; it is not read again until it changes"), sensitive, now_ms()],
                        )?;
                        return Ok(Step::Done(Outcome::Failed));
                    }
                    "extracting_batch" => alone = true,
                    _ => {}
                }
            }
        }
        self.conn.execute(
            "INSERT INTO files (path, folder, size, mtime_ns, hash, kind, status, error_code, error, verdict, labels, sensitive_source, indexed_ms)
             VALUES (?1, ?2, ?3, ?4, NULL, NULL, ?5, NULL, NULL, NULL, NULL, ?6, ?7)
             ON CONFLICT(path) DO UPDATE SET status = excluded.status, size = excluded.size, mtime_ns = excluded.mtime_ns, sensitive_source = excluded.sensitive_source",
            params![
                key,
                folder,
                size,
                mtime,
                if alone { "extracting" } else { "extracting_batch" },
                sensitive,
                now_ms()
            ],
        )?;
        let known_hash = match known {
            Some((_, _, Some(h), status, _)) if status == "indexed" => Some(h),
            _ => None,
        };
        Ok(Step::Read(ReadJob {
            path: path.to_path_buf(),
            key,
            folder: folder.to_string(),
            size,
            mtime,
            sensitive,
            known_hash,
            alone,
        }))
    }

    /// Writes what reading a file gave, in one transaction.
    fn commit(&mut self, job: &ReadJob, read: Read) -> Result<Outcome, IndexError> {
        let (key, folder, size, mtime, sensitive) =
            (&job.key, &job.folder, job.size, job.mtime, job.sensitive);
        match read {
            Read::Failed { code, message } => {
                let tx = self.conn.transaction()?;
                delete_chunks(&tx, key)?;
                tx.execute(
                    "INSERT OR REPLACE INTO files (path, folder, size, mtime_ns, hash, kind, status, error_code, error, verdict, labels, sensitive_source, indexed_ms)
                     VALUES (?1, ?2, ?3, ?4, NULL, NULL, 'failed', ?5, ?6, NULL, NULL, ?7, ?8)",
                    params![key, folder, size, mtime, code, message, sensitive, now_ms()],
                )?;
                tx.commit()?;
                Ok(Outcome::Failed)
            }
            Read::Same => {
                // Touched, not changed (a save without edits): keep the chunks.
                self.conn.execute(
                    "UPDATE files SET size = ?2, mtime_ns = ?3, status = 'indexed', sensitive_source = ?4 WHERE path = ?1",
                    params![key, size, mtime, sensitive],
                )?;
                Ok(Outcome::Unchanged)
            }
            Read::Text {
                text,
                hash,
                kind,
                verdict,
                labels,
            } => {
                let tx = self.conn.transaction()?;
                delete_chunks(&tx, key)?;
                {
                    let id = doc_id(&tx, key)?;
                    let mut ins = tx.prepare(
                        "INSERT INTO chunks (rowid, path, seq, text) VALUES (?1, ?2, ?3, ?4)",
                    )?;
                    for (i, c) in chunks(&text).into_iter().take(PER_DOC as usize).enumerate() {
                        ins.execute(params![id * PER_DOC + i as i64, key, i as i64, c])?;
                    }
                }
                tx.execute(
                    "INSERT OR REPLACE INTO files (path, folder, size, mtime_ns, hash, kind, status, error_code, error, verdict, labels, sensitive_source, indexed_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'indexed', NULL, NULL, ?7, ?8, ?9, ?10)",
                    params![key, folder, size, mtime, hash, kind, verdict, labels, sensitive, now_ms()],
                )?;
                tx.commit()?;
                Ok(Outcome::Indexed)
            }
        }
    }

    /// Drops a file (deleted, or its folder removed).
    pub fn forget(&mut self, path: &str) -> Result<(), IndexError> {
        let tx = self.conn.transaction()?;
        delete_chunks(&tx, path)?;
        tx.execute("DELETE FROM docs WHERE path = ?1", params![path])?;
        tx.execute("DELETE FROM files WHERE path = ?1", params![path])?;
        tx.commit()?;
        Ok(())
    }

    /// Files indexed under `folder` that no longer exist, or every file of a folder that is no
    /// longer watched, leave the index.
    pub fn prune(&mut self, folders: &[Folder]) -> Result<u64, IndexError> {
        let rows: Vec<(String, String)> = {
            let mut st = self.conn.prepare("SELECT path, folder FROM files")?;
            let r = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            r
        };
        let mut n = 0;
        for (path, folder) in rows {
            let watched = folders.iter().any(|f| {
                f.path.to_string_lossy() == folder.as_str()
                    && Filter::new(f).is_ok_and(|flt| flt.allows(&f.path, Path::new(&path)))
            });
            if !watched || std::fs::symlink_metadata(&path).is_err() {
                self.forget(&path)?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// One full pass over the folders: prune, queue everything, work the queue (a queue left
    /// by an interrupted pass is worked first).
    pub fn pass(
        &mut self,
        folders: &[Folder],
        scanner: &Scanner,
        progress: impl FnMut(&PassStats),
    ) -> Result<PassStats, IndexError> {
        let removed = self.prune(folders)?;
        for f in folders {
            self.enqueue_folder(f)?;
        }
        let stats = self.process_queue(scanner, progress);
        // The pass's names-model sessions are not kept between passes (a watcher's single
        // files load them again when needed).
        scanner.release_bulk();
        let mut stats = stats?;
        stats.removed += removed;
        self.expire_text()?;
        Ok(stats)
    }

    pub fn status(&self) -> Result<Status, IndexError> {
        let count = |sql: &str| -> Result<u64, IndexError> {
            Ok(self.conn.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64)
        };
        let mut s = Status {
            files: count("SELECT count(*) FROM files")?,
            indexed: count("SELECT count(*) FROM files WHERE status = 'indexed'")?,
            failed: count("SELECT count(*) FROM files WHERE status = 'failed'")?,
            expired: count("SELECT count(*) FROM files WHERE status = 'expired'")?,
            queued: count("SELECT count(*) FROM queue")?,
            chunks: count("SELECT count(*) FROM chunks")?,
            ..Status::default()
        };
        let mut st = self.conn.prepare(
            "SELECT verdict, count(*) FROM files WHERE status = 'indexed' GROUP BY verdict",
        )?;
        for r in st.query_map([], |r| {
            Ok((r.get::<_, Option<String>>(0)?, r.get::<_, i64>(1)?))
        })? {
            let (v, n) = r?;
            s.by_verdict.insert(v.unwrap_or_default(), n as u64);
        }
        let mut st = self.conn.prepare(
            "SELECT path, error FROM files WHERE status = 'failed' ORDER BY path LIMIT 50",
        )?;
        for r in st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
            s.failures.push(r?);
        }
        Ok(s)
    }

    /// Lexical search over chunks (FTS5, BM25 order). The query's words are matched as words,
    /// never as FTS syntax, so any text is a valid query.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, IndexError> {
        let terms: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| format!("\"{w}\""))
            .collect();
        self.matching(&terms.join(" "), limit)
    }

    /// Chunks related to a question: any of its words (short and common ones dropped), best
    /// first. What `ask --from-folders` attaches.
    pub fn related(&self, question: &str, limit: usize) -> Result<Vec<Hit>, IndexError> {
        const COMMON: &[&str] = &[
            "the", "and", "for", "with", "what", "did", "does", "was", "were", "are", "you",
            "your", "my", "mine", "our", "about", "say", "said", "tell", "from", "that", "this",
            "how", "when", "where", "which", "who", "why", "can", "could", "would", "should",
            "have", "has", "had", "last", "please", "show", "find", "into", "there",
        ];
        let terms: Vec<String> = question
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3 && !COMMON.contains(&w.to_lowercase().as_str()))
            .map(|w| format!("\"{w}\""))
            .collect();
        self.matching(&terms.join(" OR "), limit)
    }

    fn matching(&self, expr: &str, limit: usize) -> Result<Vec<Hit>, IndexError> {
        if expr.is_empty() {
            return Ok(Vec::new());
        }
        let mut st = self.conn.prepare(
            "SELECT c.path, snippet(chunks, 2, '[', ']', '…', 16), f.verdict, f.sensitive_source, c.text
             FROM chunks c JOIN files f ON f.path = c.path
             WHERE chunks MATCH ?1 ORDER BY bm25(chunks) LIMIT ?2",
        )?;
        let rows = st.query_map(params![expr, limit as i64], |r| {
            Ok(Hit {
                path: r.get(0)?,
                snippet: r.get(1)?,
                verdict: r
                    .get::<_, Option<String>>(2)?
                    .and_then(|v| serde_json::from_value(serde_json::Value::String(v)).ok()),
                sensitive_source: r.get(3)?,
                text: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// What a pass decided for one queued file.
enum Step {
    Done(Outcome),
    Read(ReadJob),
}

/// A file to read: everything `read_file` needs, away from the index's connection.
struct ReadJob {
    path: PathBuf,
    key: String,
    folder: String,
    size: i64,
    mtime: i64,
    sensitive: bool,
    /// The hash it was indexed with: a file touched but not changed keeps its chunks.
    known_hash: Option<String>,
    /// Read on its own, not beside other files (see `prepare`).
    alone: bool,
}

/// What reading one file gave.
enum Read {
    Failed {
        code: &'static str,
        message: String,
    },
    /// The text is the one already indexed.
    Same,
    Text {
        text: String,
        hash: String,
        kind: Option<String>,
        verdict: Option<String>,
        labels: String,
    },
}

/// Reads the batch's files that need it, in their order: those read beside others on up to
/// `threads` threads, each taking the next file as it frees up; those to be read alone after.
fn read_jobs(
    steps: &[Step],
    limits: &Limits,
    scanner: &Scanner,
    threads: usize,
) -> std::vec::IntoIter<Read> {
    let jobs: Vec<&ReadJob> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Read(j) => Some(j),
            Step::Done(_) => None,
        })
        .collect();
    let mut out: Vec<Option<Read>> = jobs.iter().map(|_| None).collect();
    let together: Vec<usize> = (0..jobs.len()).filter(|&i| !jobs[i].alone).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::with_capacity(together.len()));
    std::thread::scope(|s| {
        for _ in 0..threads.min(together.len()) {
            s.spawn(|| {
                yield_to_the_user();
                loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&i) = together.get(n) else {
                        break;
                    };
                    let r = read_file(jobs[i], limits, scanner);
                    done.lock().unwrap_or_else(|p| p.into_inner()).push((i, r));
                }
            });
        }
    });
    for (i, r) in done.into_inner().unwrap_or_else(|p| p.into_inner()) {
        out[i] = Some(r);
    }
    for (i, j) in jobs.iter().enumerate() {
        if j.alone {
            out[i] = Some(read_file(j, limits, scanner));
        }
    }
    out.into_iter()
        .map(|r| {
            r.unwrap_or(Read::Failed {
                code: "extract.panicked",
                message: "the file could not be read".into(),
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// Lowers the calling thread's scheduling priority (nice 10): a pass's threads use every core,
/// and should give way to what the user is waiting for (the local model answering, the
/// window). Linux keeps a nice value per thread, inherited by the threads it starts (the
/// extraction thread); elsewhere this does nothing yet.
fn yield_to_the_user() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain syscalls on the calling thread's own id; a failure only leaves the
        // priority as it was.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, 10);
        }
    }
}

/// Whether `path` is one of the watched folder `root`'s own files once links are resolved: a
/// link (or a linked folder on the way) to a file outside the folder is not read, or the index
/// would hold what the user never chose to watch (`notes/x -> ~/.ssh/id_rsa`, or an archive
/// that plants `leak.txt -> ../../.aws/credentials`). Judged when the file is read, so a link
/// changed after it was queued is judged as it is then.
fn inside_folder(root: &Path, path: &Path) -> bool {
    match (std::fs::canonicalize(root), std::fs::canonicalize(path)) {
        (Ok(r), Ok(p)) => p.starts_with(&r),
        // Missing or unreadable: extraction reports it as usual.
        (_, Err(_)) => true,
        (Err(_), Ok(_)) => false,
    }
}

/// Extracts, hashes and classifies one file (any thread).
fn read_file(job: &ReadJob, limits: &Limits, scanner: &Scanner) -> Read {
    if !inside_folder(Path::new(&job.folder), &job.path) {
        return Read::Failed {
            code: "index.outside_folder",
            message: format!(
                "{} leads out of the watched folder {} (a link); not read",
                job.path.display(),
                job.folder
            ),
        };
    }
    let doc = match extract_guarded(&job.path, limits) {
        Ok(d) => d,
        Err(e) => {
            return Read::Failed {
                code: e.code(),
                message: e.to_string(),
            }
        }
    };
    let hash = hex::encode(sha2::Sha256::digest(doc.text.as_bytes()));
    if job.known_hash.as_deref() == Some(hash.as_str()) {
        return Read::Same;
    }
    let provenance = if job.sensitive {
        Provenance::SensitiveSource
    } else {
        Provenance::Content
    };
    let report = scanner.scan_bulk(&doc.text, provenance);
    let mut labels: BTreeMap<&str, u64> = BTreeMap::new();
    for s in &report.spans {
        *labels.entry(s.label.as_str()).or_default() += 1;
    }
    let verdict = serde_json::to_value(report.verdict)
        .ok()
        .and_then(|v| v.as_str().map(String::from));
    let kind = serde_json::to_value(doc.kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from));
    let labels = serde_json::to_string(&labels).unwrap_or_default();
    Read::Text {
        text: doc.text,
        hash,
        kind,
        verdict,
        labels,
    }
}

/// Extracts on a thread of its own with a large stack, the panic guard and the same timeout as
/// attachments: a parser that never finishes is abandoned (its thread ends on its own), and the
/// pass moves on.
fn extract_guarded(
    path: &Path,
    limits: &Limits,
) -> Result<extract::Extracted, extract::ExtractError> {
    let shown = path.display().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    let (p, lim) = (path.to_path_buf(), limits.clone());
    let spawned = std::thread::Builder::new()
        .name("tandem-extract".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(|| extract::extract_file(&p, &lim));
            let _ = tx.send(r);
        });
    let panicked = || extract::ExtractError::Panicked {
        path: shown.clone(),
        kind: "document",
    };
    if spawned.is_err() {
        return Err(panicked());
    }
    match rx.recv_timeout(limits.timeout) {
        Ok(Ok(r)) => r,
        Ok(Err(_)) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(panicked()),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(extract::ExtractError::Timeout {
            path: shown.clone(),
            seconds: limits.timeout.as_secs(),
        }),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Indexed,
    Unchanged,
    Failed,
    Removed,
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunks_cut_at_breaks_and_cover_the_text() {
        let text = "word ".repeat(1000);
        let c = super::chunks(&text);
        assert!(c.len() >= 4);
        assert!(c.iter().all(|c| c.len() <= super::CHUNK_CHARS));
        assert_eq!(c.concat(), text);
    }
}
