//! A redb file opened private to its owner (0600, never readable by others, not even for a
//! moment), a damaged one answered as an error instead of redb's panic.

#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens the redb database in `path`, creating the file 0600 if missing (never readable by
/// others, not even for a moment) and making an existing one 0600. A file redb cannot make
/// sense of is an error, never a panic (redb panics on some damaged pages).
pub fn open_redb(path: &Path, cache_bytes: usize) -> Result<redb::Database, String> {
    let mut builder = redb::Builder::new();
    builder.set_cache_size(cache_bytes);
    open_redb_with(path, &builder)
}

/// [`open_redb`] with the settings of `builder` (its cache size, its repair callback).
pub fn open_redb_with(path: &Path, builder: &redb::Builder) -> Result<redb::Database, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    options.mode(0o600);
    let file = options.open(path).map_err(|e| e.to_string())?;
    reactor_core::private::restrict_file(path).map_err(|e| e.to_string())?;
    let opened = reactor_core::private::quietly(|| {
        let backend = redb::backends::FileBackend::new(file)?;
        builder.create_with_backend(backend)
    });
    match opened {
        Ok(Ok(db)) => Ok(db),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(format!("the file is damaged ({panic})")),
    }
}
