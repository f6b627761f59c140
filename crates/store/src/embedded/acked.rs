//! The acknowledged mark: the newest revision the store told a writer was durable, kept in a
//! small file beside the store, so a start tells the commit in flight at a crash (which redb
//! may roll back, and no writer was told of) from an acknowledged commit that is lost.
//!
//! The writer records the mark after each commit is durable and before it answers the
//! writers, with one write and no fsync of its own: a killed process leaves what it wrote to
//! the file, and a power loss can only leave the mark behind the file (never ahead of it), so
//! the mark never raises a false alarm.

use crate::StoreError;
use reactor_core::object::Revision;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The file's name, beside `store.redb`.
pub const FILE_NAME: &str = "store.acked";

/// Mixed into the second copy of the revision, so a file of another program, or one cut
/// short, is not taken for a mark.
const CHECK: u64 = 0x7265_6163_746f_7221;

/// The mark of one store file, kept up by the writer thread.
#[derive(Debug)]
pub struct Acked {
    file: File,
    path: PathBuf,
    /// The revision in the file: the mark only moves up.
    recorded: Revision,
    /// Set once a write of the mark failed, so the log says it once.
    failed: bool,
}

/// The mark in `path`, if it holds one. A missing file, or one that does not hold a mark, is
/// `None`: nothing is known of what was acknowledged (a store made before the mark existed).
pub fn read(path: &Path) -> Option<Revision> {
    let bytes = std::fs::read(path).ok()?;
    let (revision, check) = bytes.split_at_checked(8)?;
    let revision = u64::from_le_bytes(revision.try_into().ok()?);
    let check = u64::from_le_bytes(check.get(..8)?.try_into().ok()?);
    (check == revision ^ CHECK).then_some(revision)
}

fn encode(revision: Revision) -> [u8; 16] {
    let mut bytes = [0; 16];
    bytes[..8].copy_from_slice(&revision.to_le_bytes());
    bytes[8..].copy_from_slice(&(revision ^ CHECK).to_le_bytes());
    bytes
}

impl Acked {
    /// Opens (or creates, 0600) the mark in `path`, raising it to `at_least` if it is lower.
    pub fn open(path: &Path, at_least: Revision) -> Result<Self, StoreError> {
        let recorded = read(path).unwrap_or(0);
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let cannot =
            |e: std::io::Error| StoreError::Backend(format!("cannot open {}: {e}", path.display()));
        let file = options.open(path).map_err(cannot)?;
        reactor_core::private::restrict_file(path).map_err(cannot)?;
        let mut acked = Self {
            file,
            path: path.to_owned(),
            recorded,
            failed: false,
        };
        if acked.recorded < at_least || read(path).is_none() {
            acked.write(at_least.max(recorded)).map_err(cannot)?;
        }
        Ok(acked)
    }

    /// Records that `revision` is durable and about to be acknowledged. A failure is logged
    /// (once) and not returned: the commit is durable all the same, and a mark left behind
    /// can only miss a later loss, never report one that did not happen.
    pub fn record(&mut self, revision: Revision) {
        if revision <= self.recorded {
            return;
        }
        if let Err(e) = self.write(revision) {
            if !self.failed {
                tracing::warn!(
                    file = %self.path.display(),
                    error = %e,
                    "cannot record the acknowledged revision: a commit lost later may go unnoticed"
                );
            }
            self.failed = true;
        }
    }

    fn write(&mut self, revision: Revision) -> std::io::Result<()> {
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(&encode(revision))?;
        self.recorded = revision;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_only_moves_up_and_a_foreign_file_is_no_mark() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(FILE_NAME);
        assert_eq!(read(&path), None, "no file, no mark");
        let mut acked = Acked::open(&path, 7).expect("open");
        assert_eq!(read(&path), Some(7));
        acked.record(12);
        acked.record(9);
        assert_eq!(read(&path), Some(12), "a lower revision leaves the mark");
        drop(acked);
        // Reopened lower than the mark (a file rolled back): the mark stays where it was.
        let acked = Acked::open(&path, 3).expect("reopen");
        assert_eq!(acked.recorded, 12);
        assert_eq!(read(&path), Some(12));
        std::fs::write(&path, b"0123456789abcdef").expect("write");
        assert_eq!(read(&path), None, "a file that is not a mark");
        std::fs::write(&path, &encode(5)[..12]).expect("write");
        assert_eq!(read(&path), None, "a mark cut short");
    }
}
