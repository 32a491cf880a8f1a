//! Pause cloud: one switch for every host. It is a file in Tandem's configuration directory
//! (`cloud-paused`): the app's header and tray, `tandem cloud pause|resume`, `tandem ask` and a
//! running `tandem serve` all read the same file, and the egress guard reads it before every
//! transmission (a stat, microseconds), so a gateway started long ago obeys at its next request.
//! A file whose presence cannot be determined (permissions, I/O error) reads as paused: the
//! safe side. Tests and benchmarks use an in-memory switch.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The file's name inside the configuration directory.
pub const PAUSE_FILE: &str = "cloud-paused";

/// `<config dir>/cloud-paused` (`TANDEM_CONFIG_DIR` honoured).
pub fn default_path() -> PathBuf {
    crate::config::config_dir().join(PAUSE_FILE)
}

/// The separate switch for the user's own devices (`--trust device` providers): Pause cloud
/// does not stop them, this does.
pub const DEVICES_FILE: &str = "devices-paused";

pub fn devices_path() -> PathBuf {
    crate::config::config_dir().join(DEVICES_FILE)
}

#[derive(Debug)]
enum Where {
    File(PathBuf),
    Memory(AtomicBool),
}

/// The switch. Cheap to read; share it in an `Arc`.
#[derive(Debug)]
pub struct PauseSwitch(Where);

impl PauseSwitch {
    /// The switch every host shares (`default_path`).
    pub fn shared() -> Self {
        Self::at(default_path())
    }

    /// The devices' switch every host shares (`devices_path`).
    pub fn devices() -> Self {
        Self::at(devices_path())
    }

    /// A persisted switch at `path`.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self(Where::File(path.into()))
    }

    /// A switch that lives in this process only (tests, benchmarks).
    pub fn memory() -> Self {
        Self(Where::Memory(AtomicBool::new(false)))
    }

    pub fn path(&self) -> Option<&Path> {
        match &self.0 {
            Where::File(p) => Some(p),
            Where::Memory(_) => None,
        }
    }

    pub fn is_paused(&self) -> bool {
        match &self.0 {
            Where::Memory(b) => b.load(Ordering::SeqCst),
            Where::File(p) => match std::fs::symlink_metadata(p) {
                Ok(_) => true,
                Err(e) => e.kind() != io::ErrorKind::NotFound,
            },
        }
    }

    /// Switches it; a persisted switch is seen by every other host at once.
    pub fn set(&self, paused: bool) -> io::Result<()> {
        match &self.0 {
            Where::Memory(b) => {
                b.store(paused, Ordering::SeqCst);
                Ok(())
            }
            Where::File(p) if paused => {
                if let Some(dir) = p.parent() {
                    crate::private_fs::private_dir(dir)?;
                }
                crate::private_fs::write_private(
                    p,
                    b"Paused: Tandem sends nothing to the providers this switch covers.\n",
                )
            }
            Where::File(p) => match std::fs::remove_file(p) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_persisted_switch_is_one_switch_for_every_reader() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cfg").join(super::PAUSE_FILE);
        let (a, b) = (super::PauseSwitch::at(&p), super::PauseSwitch::at(&p));
        assert!(!a.is_paused());
        a.set(true).unwrap();
        assert!(b.is_paused(), "another host sees it");
        b.set(false).unwrap();
        assert!(!a.is_paused());
        b.set(false).unwrap();
        let m = super::PauseSwitch::memory();
        m.set(true).unwrap();
        assert!(m.is_paused());
    }
}
