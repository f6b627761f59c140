//! Files and folders only their owner can read: data folders 0700, their files 0600, whatever
//! the umask; and a guard that turns a library's panic into an error.

use std::io::Write;
use std::path::Path;

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

/// Creates `dir` (and its parents) if missing, and makes it 0700: a data folder holds the
/// token and every object, so no other local user may list or read it.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder.create(dir)?;
    #[cfg(unix)]
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(())
}

/// Makes an existing file 0600.
pub fn restrict_file(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Writes `bytes` to `path` atomically and durably, mode 0600: a crash leaves the old or the
/// new content, never half of it. The folder is created private if missing.
pub fn write_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        create_dir(dir)?;
    }
    let partial = path.with_extension("partial");
    let _ = std::fs::remove_file(&partial);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options.open(&partial)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&partial, path)
}

/// Runs `f`, answering a panic inside it as its message instead of unwinding, and without
/// printing it: for libraries that panic on bad input they read (a damaged file).
pub fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    result.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic without a message".to_owned())
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn folders_and_files_are_private_whatever_the_umask() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join("data");
        std::fs::create_dir(&dir).expect("create");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        create_dir(&dir).expect("private");
        assert_eq!(mode(&dir), 0o700);
        let file = dir.join("state.json");
        write_durably(&file, b"{}").expect("write");
        assert_eq!(mode(&file), 0o600);
        assert_eq!(std::fs::read(&file).expect("read"), b"{}");
    }

    #[test]
    fn a_panic_is_an_error() {
        let answer: Result<(), String> = quietly(|| panic!("bad page"));
        assert_eq!(answer, Err("bad page".to_owned()));
        assert_eq!(quietly(|| 7), Ok(7));
    }
}
