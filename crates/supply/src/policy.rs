//! The trust policy: with a `trust` section in the config, a component — from the folder or
//! a registry — loads only if the detached signature beside its file, `NAME.wasm.minisig`,
//! is by one of the trusted keys and covers its bytes.

use crate::artifact::MAX_SIGNATURE_BYTES;
use crate::signature::TrustedKeys;
use reactor_runtime::{Admission, Evidence, TrustSettings};
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a component file's name takes to name its signature file.
const SIGNATURE_SUFFIX: &str = ".minisig";

/// The signature file of a component file: `NAME.wasm.minisig` beside it.
pub fn signature_path(wasm: &Path) -> PathBuf {
    let mut name = wasm.as_os_str().to_owned();
    name.push(SIGNATURE_SUFFIX);
    PathBuf::from(name)
}

/// Checks minisign signatures against the config's trusted keys.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrustPolicy;

impl Admission for TrustPolicy {
    fn admit(
        &self,
        _name: &str,
        path: &Path,
        bytes: &[u8],
        trust: &TrustSettings,
    ) -> Result<Vec<Evidence>, String> {
        if trust.keys.is_empty() {
            return Err("the config's trust section names no keys, so nothing can load".into());
        }
        let keys = TrustedKeys::read(&trust.keys).map_err(|e| e.to_string())?;
        let signature_file = signature_path(path);
        let shown = signature_file.display().to_string();
        let signature = match std::fs::File::open(&signature_file) {
            Ok(file) => {
                let mut text = String::new();
                file.take(MAX_SIGNATURE_BYTES)
                    .read_to_string(&mut text)
                    .map_err(|_| format!("the signature {shown} is not a minisign signature"))?;
                text
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "unsigned: no signature {shown} beside it (reactor-host component sign FILE --key KEY makes one)"
                ));
            }
            Err(e) => return Err(format!("read the signature {shown}: {e}")),
        };
        keys.verify(bytes, &signature, &shown)
            .map_err(|e| e.to_string())?;
        Ok(vec![Evidence {
            suffix: SIGNATURE_SUFFIX,
            bytes: signature.into_bytes(),
        }])
    }
}
