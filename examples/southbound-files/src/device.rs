//! A folder standing for a device: JSON files written atomically, listed, removed, and the
//! failures an operator injects under `.fail/`.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The folder that failure-injection files live in, mirroring the value files.
pub const FAIL_DIR: &str = ".fail";

/// A device: the folder `root` (`/` in a component: the descriptor's own southbound folder).
#[derive(Debug, Clone)]
pub struct Device {
    root: PathBuf,
}

/// An injected failure taken for one create or update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Injected {
    /// Retriable (`busy: ...`), with the number of failures still to come.
    Busy { left: u32 },
    /// Not retriable (`fatal: ...`), with the number of failures still to come.
    Fatal { left: u32 },
}

/// What went wrong on the device: the path (as the component sees it) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for DeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl Device {
    /// The component's root, the folder the agent preopened as `/`.
    pub fn root() -> Self {
        Self::at("/")
    }

    /// A device in any folder (tests).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Device { root: root.into() }
    }

    /// `file` (relative, e.g. `a/b.json`) as shown in messages: `/a/b.json`.
    pub fn shown(file: &str) -> String {
        format!("/{file}")
    }

    fn path(&self, file: &str) -> PathBuf {
        self.root.join(file)
    }

    fn error(file: &str, doing: &str, error: impl std::fmt::Display) -> DeviceError {
        DeviceError {
            path: Self::shown(file),
            message: format!("{doing}: {error}"),
        }
    }

    /// Writes `text` to `file` through a temporary file and a rename, so a reader (or a
    /// crash) never sees half a value; parent folders are created.
    pub fn write(&self, file: &str, text: &str) -> Result<(), DeviceError> {
        let path = self.path(file);
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(Self::error(file, "write", "not a file path"));
        };
        std::fs::create_dir_all(parent).map_err(|e| Self::error(file, "create folder", e))?;
        let tmp = parent.join(format!(".{}.tmp", name.to_string_lossy()));
        std::fs::write(&tmp, text).map_err(|e| Self::error(file, "write", e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Self::error(file, "rename", e)
        })
    }

    /// Reads `file`; `None` if it does not exist.
    pub fn read(&self, file: &str) -> Result<Option<String>, DeviceError> {
        match std::fs::read_to_string(self.path(file)) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Self::error(file, "read", e)),
        }
    }

    /// Removes `file` and the folders it leaves empty; false if it was not there.
    pub fn remove(&self, file: &str) -> Result<bool, DeviceError> {
        let path = self.path(file);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(Self::error(file, "remove", e)),
        }
        self.prune(&path);
        Ok(true)
    }

    /// Removes the empty folders above `path`, up to the root (excluded).
    fn prune(&self, path: &Path) {
        let mut folder = path.parent();
        while let Some(dir) = folder {
            if dir == self.root || !dir.starts_with(&self.root) {
                break;
            }
            let empty = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none());
            if !empty || std::fs::remove_dir(dir).is_err() {
                break;
            }
            folder = dir.parent();
        }
    }

    /// Every value file, as (path relative to the root without `.json`, content), sorted.
    /// Names starting with `.` (`.fail/`, temporary files) and other files are skipped; a
    /// file removed while listing is skipped too.
    pub fn list(&self) -> Result<Vec<(String, String)>, DeviceError> {
        let mut found = Vec::new();
        self.walk("", &mut found)?;
        found.sort();
        Ok(found)
    }

    fn walk(&self, folder: &str, found: &mut Vec<(String, String)>) -> Result<(), DeviceError> {
        let shown = folder;
        let entries = match std::fs::read_dir(self.path(folder)) {
            Ok(entries) => entries,
            // A folder pruned while listing.
            Err(e) if e.kind() == ErrorKind::NotFound && !folder.is_empty() => return Ok(()),
            Err(e) => return Err(Self::error(shown, "list", e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Self::error(shown, "list", e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let relative = if folder.is_empty() {
                name.clone()
            } else {
                format!("{folder}/{name}")
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                self.walk(&relative, found)?;
            } else if let Some(stem) = relative.strip_suffix(".json")
                && kind.is_file()
                && let Some(text) = self.read(&relative)?
            {
                found.push((stem.to_owned(), text));
            }
        }
        Ok(())
    }

    /// Takes one injected failure for `file`, if `.fail/<file>` exists: it holds
    /// `[busy|fatal] [COUNT]` (default `busy 1`, so an empty file fails once, retriably);
    /// the count is decremented, and the file removed when it reaches zero.
    pub fn take_failure(&self, file: &str) -> Result<Option<Injected>, DeviceError> {
        let fail = format!("{FAIL_DIR}/{file}");
        let Some(text) = self.read(&fail)? else {
            return Ok(None);
        };
        let malformed = || {
            Self::error(
                &fail,
                "failure file",
                format!("holds {:?}, expected `[busy|fatal] [COUNT]`", text.trim()),
            )
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        let (fatal, count) = match words.as_slice() {
            [] | ["busy"] => (false, None),
            ["fatal"] => (true, None),
            ["busy", count] | [count] => (false, Some(*count)),
            ["fatal", count] => (true, Some(*count)),
            _ => return Err(malformed()),
        };
        let count = match count {
            None => 1,
            Some(count) => count.parse::<u32>().map_err(|_| malformed())?,
        };
        if count == 0 {
            self.remove(&fail)?;
            return Ok(None);
        }
        let left = count - 1;
        if left == 0 {
            self.remove(&fail)?;
        } else {
            let kind = if fatal { "fatal" } else { "busy" };
            self.write(&fail, &format!("{kind} {left}\n"))?;
        }
        Ok(Some(if fatal {
            Injected::Fatal { left }
        } else {
            Injected::Busy { left }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A fresh folder under the system's temporary folder.
    fn scratch() -> Device {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "southbound-files-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        Device::at(dir)
    }

    #[test]
    fn values_are_written_listed_and_removed_with_their_empty_folders() {
        let device = scratch();
        device.write("a.json", "{}").expect("write");
        device
            .write("lender/10.0.0.1/24.json", "{\"x\":1}")
            .expect("write");
        device.write(".fail/a.json", "2").expect("failure file");
        std::fs::write(device.path("notes.txt"), "not a value").expect("other file");
        let listed = device.list().expect("list");
        assert_eq!(
            listed,
            vec![
                ("a".to_owned(), "{}".to_owned()),
                ("lender/10.0.0.1/24".to_owned(), "{\"x\":1}".to_owned())
            ]
        );
        assert!(device.remove("lender/10.0.0.1/24.json").expect("remove"));
        assert!(
            !device.path("lender").exists(),
            "emptied folders are pruned"
        );
        assert!(!device.remove("lender/10.0.0.1/24.json").expect("gone"));
        assert!(device.root.exists(), "the root stays");
    }

    #[test]
    fn injected_failures_count_down_then_stop() {
        let device = scratch();
        device.write(".fail/t.json", "2\n").expect("failure file");
        assert_eq!(
            device.take_failure("t.json").expect("take"),
            Some(Injected::Busy { left: 1 })
        );
        assert_eq!(
            device.take_failure("t.json").expect("take"),
            Some(Injected::Busy { left: 0 })
        );
        assert_eq!(device.take_failure("t.json").expect("take"), None);
        assert!(!device.path(".fail/t.json").exists());

        device.write(".fail/t.json", "fatal").expect("failure file");
        assert_eq!(
            device.take_failure("t.json").expect("take"),
            Some(Injected::Fatal { left: 0 })
        );
        device
            .write(".fail/t.json", "")
            .expect("empty failure file");
        assert_eq!(
            device.take_failure("t.json").expect("take"),
            Some(Injected::Busy { left: 0 })
        );
        device
            .write(".fail/t.json", "fatal 3")
            .expect("failure file");
        assert_eq!(
            device.take_failure("t.json").expect("take"),
            Some(Injected::Fatal { left: 2 })
        );
        assert_eq!(
            device.read(".fail/t.json").expect("read").as_deref(),
            Some("fatal 2\n")
        );
        device.write(".fail/t.json", "often").expect("failure file");
        let error = device.take_failure("t.json").expect_err("malformed");
        assert_eq!(error.path, "/.fail/t.json");
        assert!(error.message.contains("\"often\""), "{error}");
    }
}
