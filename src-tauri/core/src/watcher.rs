//! Watching folders: file-system events (notify, debounced, renames tracked) become "this file
//! settled" or "this file is gone" for the index. A file is read only once its size and mtime
//! have stayed the same for the settle window, so a half-copied file is never indexed and then
//! forgotten. Lost or overflowed events trigger a rescan of the folders; hitting the inotify
//! watch limit falls back to polling for that folder, with a warning.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify_debouncer_full::notify::{self, PollWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, new_debouncer_opt, DebounceEventResult, NoCache};
use serde::Serialize;

use crate::index::{Folder, Index, IndexError, Outcome};
use crate::sensitivity::Scanner;

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// notify events closer than this are merged.
    pub debounce: Duration,
    /// Size and mtime must stay the same this long before a file is read.
    pub settle: Duration,
    /// Poll instead of OS events (network file systems), at this interval.
    pub poll: Option<Duration>,
}

impl Default for WatchOptions {
    fn default() -> Self {
        Self {
            debounce: Duration::from_millis(200),
            settle: Duration::from_millis(500),
            poll: None,
        }
    }
}

/// What the watcher did, for hosts (the app shows it; `tandem watch` prints it).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WatchEvent {
    Indexed { path: String },
    Unchanged { path: String },
    Failed { path: String },
    Removed { path: String },
    Rescanned { folders: usize, indexed: u64 },
    Warning { message: String },
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    #[error("cannot watch {path}: {message}")]
    Watch { path: String, message: String },
    #[error(transparent)]
    Index(#[from] IndexError),
}

impl crate::ErrorCode for WatchError {
    fn code(&self) -> &'static str {
        match self {
            WatchError::Watch { .. } => "watch.failed",
            WatchError::Index(e) => e.code(),
        }
    }
}

enum Msg {
    Touched(PathBuf),
    Rescan,
    Warning(String),
}

/// A running watcher; dropping it (or `stop`) ends the watch.
pub struct FolderWatcher {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

struct Pending {
    folder: usize,
    seen: Option<(u64, std::time::SystemTime)>,
    stable_since: Instant,
}

/// notify's callback runs on its own thread and must not block: it only forwards.
fn forward(tx: mpsc::Sender<Msg>) -> impl FnMut(DebounceEventResult) + Send + 'static {
    move |res: DebounceEventResult| match res {
        Ok(events) => {
            for ev in events {
                // Reading a file or listing a folder (the indexer does both) is not a change.
                if matches!(ev.kind, notify::EventKind::Access(_)) {
                    continue;
                }
                if ev.need_rescan() {
                    let _ = tx.send(Msg::Rescan);
                }
                for p in &ev.paths {
                    let _ = tx.send(Msg::Touched(p.clone()));
                }
            }
        }
        Err(errors) => {
            for e in errors {
                let _ = tx.send(Msg::Warning(format!("watch error: {e}")));
            }
            let _ = tx.send(Msg::Rescan);
        }
    }
}

fn hidden(path: &Path, root: &Path) -> bool {
    path.strip_prefix(root)
        .map(|rel| {
            rel.components().any(|c| {
                let n = c.as_os_str().to_string_lossy();
                n.starts_with('.') || n == "node_modules" || n == "__pycache__" || n.ends_with('~')
            })
        })
        .unwrap_or(true)
}

impl FolderWatcher {
    /// Starts watching `folders`, indexing into `index` on a thread of its own (the index's
    /// connection lives there). Hosts usually run a full `Index::pass` first.
    pub fn start(
        folders: Vec<Folder>,
        mut index: Index,
        scanner: Arc<Scanner>,
        opts: WatchOptions,
        mut on_event: impl FnMut(WatchEvent) + Send + 'static,
    ) -> Result<Self, WatchError> {
        let (tx, rx) = mpsc::channel::<Msg>();
        // Watchers are created here so a folder that cannot be watched fails the start.
        let mut os = match opts.poll {
            None => Some(
                new_debouncer(opts.debounce, None, forward(tx.clone())).map_err(|e| {
                    WatchError::Watch {
                        path: String::new(),
                        message: e.to_string(),
                    }
                })?,
            ),
            Some(_) => None,
        };
        let mut polls = Vec::new();
        let poll = |path: &Path, interval: Duration| -> Result<_, WatchError> {
            let config = notify::Config::default().with_poll_interval(interval);
            let mut d = new_debouncer_opt::<_, PollWatcher, NoCache>(
                opts.debounce,
                None,
                forward(tx.clone()),
                NoCache,
                config,
            )
            .map_err(|e| WatchError::Watch {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            d.watch(path, RecursiveMode::Recursive)
                .map_err(|e| WatchError::Watch {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
            Ok(d)
        };
        for f in &folders {
            match (&mut os, opts.poll) {
                (Some(d), _) => match d.watch(&f.path, RecursiveMode::Recursive) {
                    Ok(()) => {}
                    Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
                        on_event(WatchEvent::Warning {
                            message: format!(
                                "the OS limit on watched folders was reached (raise fs.inotify.max_user_watches); polling {} every 2 s instead",
                                f.path.display()
                            ),
                        });
                        polls.push(poll(&f.path, Duration::from_secs(2))?);
                    }
                    Err(e) => {
                        return Err(WatchError::Watch {
                            path: f.path.display().to_string(),
                            message: e.to_string(),
                        })
                    }
                },
                (None, Some(interval)) => polls.push(poll(&f.path, interval)?),
                (None, None) => unreachable!("either OS events or polling"),
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let settle = opts.settle;
        let thread = std::thread::Builder::new()
            .name("tandem-watcher".into())
            .spawn(move || {
                // The watchers live as long as this loop.
                let _keep = (os, polls);
                let mut pending: HashMap<PathBuf, Pending> = HashMap::new();
                while !stopping.load(Ordering::Relaxed) {
                    let mut rescan = false;
                    match rx.recv_timeout(Duration::from_millis(50)) {
                        Ok(Msg::Touched(p)) => {
                            touch(&folders, &mut pending, p);
                        }
                        Ok(Msg::Rescan) => rescan = true,
                        Ok(Msg::Warning(message)) => on_event(WatchEvent::Warning { message }),
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                    // Take everything else that arrived, then look at the pending files.
                    while let Ok(m) = rx.try_recv() {
                        match m {
                            Msg::Touched(p) => touch(&folders, &mut pending, p),
                            Msg::Rescan => rescan = true,
                            Msg::Warning(message) => on_event(WatchEvent::Warning { message }),
                        }
                    }
                    if rescan {
                        match index.pass(&folders, &scanner, |_| {}) {
                            Ok(s) => on_event(WatchEvent::Rescanned {
                                folders: folders.len(),
                                indexed: s.indexed,
                            }),
                            Err(e) => on_event(WatchEvent::Warning {
                                message: format!("rescan failed: {e}"),
                            }),
                        }
                    }
                    settle_pending(
                        &folders,
                        &mut pending,
                        &mut index,
                        &scanner,
                        settle,
                        &mut on_event,
                    );
                }
            })
            .map_err(|e| WatchError::Watch {
                path: String::new(),
                message: e.to_string(),
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }

    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for FolderWatcher {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Notes a path as changed: a file waits to settle; a new folder's files all do.
fn touch(folders: &[Folder], pending: &mut HashMap<PathBuf, Pending>, p: PathBuf) {
    let Some(fi) = folders
        .iter()
        .enumerate()
        .filter(|(_, f)| p.starts_with(&f.path))
        .max_by_key(|(_, f)| f.path.as_os_str().len())
        .map(|(i, _)| i)
    else {
        return;
    };
    if hidden(&p, &folders[fi].path) {
        return;
    }
    // Links to folders are not followed (no loops: `a -> .` twice branches to the OS's link
    // limit; no leaving the folder). A link to a file is judged when it is read.
    let meta = std::fs::symlink_metadata(&p);
    if meta.as_ref().is_ok_and(|m| m.file_type().is_symlink()) && p.is_dir() {
        return;
    }
    let is_dir = meta.is_ok_and(|m| m.is_dir());
    if !is_dir
        && !crate::index::Filter::new(&folders[fi]).is_ok_and(|f| f.allows(&folders[fi].path, &p))
    {
        return;
    }
    if is_dir {
        // A folder moved in or created with files: everything under it.
        if let Ok(entries) = std::fs::read_dir(&p) {
            for e in entries.flatten() {
                touch(folders, pending, e.path());
            }
        }
        return;
    }
    // Already waiting: the settle check compares size and mtime, so a new event changes nothing.
    pending.entry(p).or_insert_with(|| Pending {
        folder: fi,
        seen: None,
        stable_since: Instant::now(),
    });
}

fn settle_pending(
    folders: &[Folder],
    pending: &mut HashMap<PathBuf, Pending>,
    index: &mut Index,
    scanner: &Scanner,
    settle: Duration,
    on_event: &mut impl FnMut(WatchEvent),
) {
    let mut ready = Vec::new();
    pending.retain(|path, p| {
        let now_seen = std::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.len(), m.modified().unwrap_or(std::time::UNIX_EPOCH)));
        if now_seen.is_none() {
            ready.push((path.clone(), p.folder));
            return false;
        }
        if now_seen != p.seen {
            p.seen = now_seen;
            p.stable_since = Instant::now();
            return true;
        }
        if p.stable_since.elapsed() >= settle {
            ready.push((path.clone(), p.folder));
            return false;
        }
        true
    });
    for (path, fi) in ready {
        let f = &folders[fi];
        let shown = path.to_string_lossy().into_owned();
        let ev = match index.index_file(&path, &f.path.to_string_lossy(), f.sensitive, scanner) {
            Ok(Outcome::Indexed) => WatchEvent::Indexed { path: shown },
            Ok(Outcome::Unchanged) => WatchEvent::Unchanged { path: shown },
            Ok(Outcome::Failed) => WatchEvent::Failed { path: shown },
            Ok(Outcome::Removed) => WatchEvent::Removed { path: shown },
            Err(e) => WatchEvent::Warning {
                message: format!("{shown}: {e}"),
            },
        };
        on_event(ev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder moved in is read whole, but links to folders are not followed: `a -> .`
    /// would otherwise be read again under `a/a/a/…` to the OS's link limit (two such links
    /// branch at every level). Mutation-checked: with `p.is_dir()` (which follows links) the
    /// file is queued again under `again/`, `again/again/`, ….
    #[test]
    fn a_folder_moved_in_is_read_without_following_links() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("notes");
        let moved = root.join("moved");
        std::fs::create_dir_all(&moved).unwrap();
        std::fs::write(moved.join("plan.txt"), "tulips").unwrap();
        std::os::unix::fs::symlink(".", moved.join("again")).unwrap();
        let folders = vec![Folder {
            path: root.clone(),
            sensitive: false,
            ..Folder::default()
        }];
        let mut pending = HashMap::new();
        touch(&folders, &mut pending, moved.clone());
        let queued: Vec<&PathBuf> = pending.keys().collect();
        assert_eq!(queued, [&moved.join("plan.txt")], "{queued:?}");
    }
}
