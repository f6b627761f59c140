//! The API token: made once at first start as `<data>/token` (mode 0600), found again by clients.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot read the API token from {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot create the API token at {path}: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the API token file {0} is empty")]
    Empty(PathBuf),
}

pub fn token_path(data: &Path) -> PathBuf {
    data.join("token")
}

/// Reads `<data>/token`, creating it with a fresh random token if it does not exist.
pub fn load_or_create(data: &Path) -> Result<String, TokenError> {
    let path = token_path(data);
    match read(&path) {
        Ok(token) => return Ok(token),
        Err(TokenError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let token: String = (0..32)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect();
    let create = |source| TokenError::Create {
        path: path.clone(),
        source,
    };
    reactor_core::private::create_dir(data).map_err(create)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path).map_err(create)?;
    file.write_all(token.as_bytes()).map_err(create)?;
    file.sync_all().map_err(create)?;
    Ok(token)
}

/// Replaces `<data>/token` with `token` (mode 0600), e.g. with the one shared by all replicas.
pub fn replace(data: &Path, token: &str) -> Result<(), TokenError> {
    let path = token_path(data);
    let create = |source| TokenError::Create {
        path: path.clone(),
        source,
    };
    let fresh = data.join("token.new");
    let _ = std::fs::remove_file(&fresh);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&fresh).map_err(create)?;
    file.write_all(token.as_bytes()).map_err(create)?;
    file.sync_all().map_err(create)?;
    // A rename, so a client never reads a half-written token.
    std::fs::rename(&fresh, &path).map_err(create)
}

/// Reads a token file, trimming the line end.
pub fn read(path: &Path) -> Result<String, TokenError> {
    let text = std::fs::read_to_string(path).map_err(|source| TokenError::Read {
        path: path.to_owned(),
        source,
    })?;
    let token = text.trim().to_owned();
    if token.is_empty() {
        return Err(TokenError::Empty(path.to_owned()));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_once_private_and_stable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = load_or_create(dir.path()).expect("create");
        assert_eq!(first.len(), 64);
        assert_eq!(load_or_create(dir.path()).expect("reload"), first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(token_path(dir.path()))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
