//! Files only this user may read: Tandem's data and config directories are created 0700, its
//! databases (and the WAL/SHM files SQLite derives from them), exports and state files 0600.
//! The index holds the full text of sensitive folders and the conversations hold restored
//! originals: another local account must not read them. Elsewhere than Unix the platform's
//! per-user profile directories already do this job; the calls are no-ops there.

use std::io;
use std::path::Path;

/// Creates `dir` (and missing parents) with mode 0700. A directory that already existed is left
/// alone: it may be one the user chose (`TANDEM_LEDGER=/tmp/l.sqlite3` must not lock `/tmp`).
/// Tandem's own directories are tightened by `harden_own_dirs`.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    set_mode(dir, 0o700)
}

/// Makes Tandem's own data and config directories (`<data dir>/tandem`, `<config dir>/tandem`
/// or `TANDEM_CONFIG_DIR`) 0700, creating them when missing. Hosts call it at start.
pub fn harden_own_dirs() -> io::Result<()> {
    let data = dirs::data_dir().map(|d| d.join("tandem"));
    for dir in data.into_iter().chain([crate::config::config_dir()]) {
        std::fs::create_dir_all(&dir)?;
        set_mode(&dir, 0o700)?;
    }
    Ok(())
}

/// Makes an existing file 0600 (files made before this rule existed are tightened too).
pub fn private_file(path: &Path) -> io::Result<()> {
    set_mode(path, 0o600)
}

/// Creates `path` empty with mode 0600 if it does not exist, then makes sure it is 0600. SQLite
/// creates a database's `-wal` and `-shm` files with the database file's own mode, so calling
/// this before `Connection::open` covers all three.
pub fn prepare_db(path: &Path) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        private_dir(dir)?;
    }
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    drop(o.open(path)?);
    private_file(path)?;
    // A WAL or SHM left by an older version keeps its old mode until SQLite recreates it.
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        match private_file(Path::new(&side)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` readable by this user only, through a temporary file renamed into
/// place (a crash never leaves half a file).
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)?;
        }
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    {
        use std::io::Write;
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        let mut f = o.open(&tmp)?;
        private_file(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// The pragmas every Tandem database gets: deleted rows are overwritten on disk, not left in
/// free pages where a copy of the file would still hold them.
pub fn secure_pragmas(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "secure_delete", "ON")
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path)?;
    if meta.permissions().mode() & 0o777 != mode {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &std::path::Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn databases_and_their_wal_are_private() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("data");
        let db = dir.join("x.sqlite3");
        super::prepare_db(&db).unwrap();
        let c = rusqlite::Connection::open(&db).unwrap();
        c.pragma_update(None, "journal_mode", "WAL").unwrap();
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&db), 0o600);
        let wal = dir.join("x.sqlite3-wal");
        assert!(wal.exists());
        assert_eq!(mode(&wal), 0o600);
        assert_eq!(mode(&dir.join("x.sqlite3-shm")), 0o600);
        let f = d.path().join("export.json");
        super::write_private(&f, b"{}").unwrap();
        assert_eq!(mode(&f), 0o600);
    }
}
