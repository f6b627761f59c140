//! Stage 1, the files on disk: component files named, read safely, and watched.
//!
//! The files of a components folder: which names are components, which are ignored and
//! why, and reading one safely (regular files only, bounded, never blocking on a FIFO).
//! [`watch`] follows the folders and the config file and hands each change to the loader.

pub mod watch;

use std::path::Path;

/// The component name of a file: its name without `.wasm`; `None` for files the runtime
/// ignores (other extensions, hidden or temporary files, names that are not
/// `[A-Za-z0-9_-]+`).
pub(crate) fn component_name(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    let stem = file.strip_suffix(".wasm")?;
    valid_name(stem).then(|| stem.to_owned())
}

/// Whether `name` can be a component name (and so a file name).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The largest component file read (componentize-py and componentize-js make 12-18 MB).
pub const MAX_COMPONENT_BYTES: u64 = 64 << 20;

/// Why a file in a components folder that looks meant as a component (its name ends in
/// `.wasm` in any case, and it is not hidden) is not loaded; `None` for a loadable name and
/// for files that are not meant as components at all.
pub(crate) fn ignored_reason(path: &Path) -> Option<String> {
    let file = path.file_name()?;
    let Some(file) = file.to_str() else {
        let lossy = file.to_string_lossy();
        return lossy
            .to_ascii_lowercase()
            .ends_with(".wasm")
            .then(|| "its file name is not UTF-8".to_owned());
    };
    if file.starts_with('.') || !file.to_ascii_lowercase().ends_with(".wasm") {
        return None;
    }
    let Some(stem) = file.strip_suffix(".wasm") else {
        return Some("the extension must be `.wasm`, in lower case".to_owned());
    };
    (!valid_name(stem)).then(|| {
        format!(
            "{stem:?} is not a component name: use ASCII letters, digits, `-` and `_` (at most 128, not first `-`)"
        )
    })
}

/// Reads a component file: only a regular file (or a symlink to one) of at most `limit`
/// bytes, opened without blocking, so a FIFO or a device in the folder is refused, not waited
/// on or read forever.
pub(crate) fn read_component(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let check = |meta: &std::fs::Metadata| -> Result<(), String> {
        if !meta.is_file() {
            return Err(format!("not a regular file ({})", file_type(meta)));
        }
        if meta.len() > limit {
            return Err(format!(
                "too big: {} bytes, the limit is {limit}",
                meta.len()
            ));
        }
        Ok(())
    };
    check(&std::fs::metadata(path).map_err(|e| e.to_string())?)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(|e| e.to_string())?;
    // The file may have been replaced between the check and the open.
    let meta = file.metadata().map_err(|e| e.to_string())?;
    check(&meta)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("too big: over the limit of {limit} bytes"));
    }
    Ok(bytes)
}

fn file_type(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

/// Whether `bytes` start like a core wasm module (version 1) rather than a component.
pub(crate) fn is_core_module(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && bytes[..4] == *b"\0asm" && bytes[4..8] == [1, 0, 0, 0]
}

#[cfg(test)]
mod folder_tests {
    use super::*;

    #[test]
    fn names_meant_as_components_say_why_they_are_not_loaded() {
        for name in [
            "my comp.wasm",
            "ünïcode.wasm",
            "a.b.wasm",
            "x.WASM",
            "-x.wasm",
        ] {
            let reason = ignored_reason(Path::new(name));
            assert!(reason.is_some(), "{name} is reported");
        }
        for name in ["ok.wasm", "README.md", ".x.wasm.12.tmp", "x.wasm~"] {
            assert_eq!(ignored_reason(Path::new(name)), None, "{name}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("x.wasm");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let err = read_component(&fifo, 1 << 20).expect_err("a FIFO");
        assert!(err.contains("FIFO"), "{err}");
        let zero = dir.path().join("z.wasm");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
        let err = read_component(&zero, 1 << 20).expect_err("a device");
        assert!(err.contains("device"), "{err}");
        let big = dir.path().join("big.wasm");
        std::fs::write(&big, vec![0u8; 2048]).expect("write");
        let err = read_component(&big, 1024).expect_err("too big");
        assert!(err.contains("too big"), "{err}");
        assert_eq!(read_component(&big, 2048).expect("fits").len(), 2048);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_wasm_names_are_components() {
        assert_eq!(
            component_name(Path::new("/c/policy-rust.wasm")).as_deref(),
            Some("policy-rust")
        );
        assert_eq!(
            component_name(Path::new("/c/a_b.wasm")).as_deref(),
            Some("a_b")
        );
        assert_eq!(component_name(Path::new("/c/.policy.wasm")), None);
        assert_eq!(component_name(Path::new("/c/policy.wasm.tmp")), None);
        assert_eq!(component_name(Path::new("/c/po licy.wasm")), None);
        assert_eq!(component_name(Path::new("/c/.wasm")), None);
    }

    #[test]
    fn core_modules_are_told_from_components() {
        assert!(is_core_module(b"\0asm\x01\0\0\0"));
        assert!(!is_core_module(b"\0asm\x0d\0\x01\0"));
        assert!(!is_core_module(b"\0as"));
    }
}
