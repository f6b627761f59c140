//! minisign signatures over a component's bytes: checking one against trusted public keys
//! (`minisign-verify`), and making keys and signatures (`minisign`) for `component keygen`
//! and `component sign`. A signature made here verifies with `minisign -Vm`, and one made
//! by `minisign -Sm` verifies here.

use crate::pull::hex;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The environment variable holding the password of a secret key (keygen encrypts with it;
/// sign decrypts with it). Without it keygen writes an unencrypted key (mode 0600).
pub const PASSWORD_ENV: &str = "REACTOR_SIGNING_PASSWORD";

/// Why a signature does not admit a component, or a key or signature cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    /// A public key file could not be read or is not a minisign public key.
    #[error("trusted key {path}: {message}")]
    Key {
        /// The key file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The signature is not a minisign signature (truncated, edited, empty).
    #[error("the signature {0} is not a minisign signature (truncated or damaged?)")]
    Malformed(String),
    /// No trusted key made the signature.
    #[error("the signature {0} is by a key that is not among the trusted keys")]
    UnknownKey(String),
    /// A trusted key made the signature, over other bytes.
    #[error(
        "the signature {signature} by trusted key {key} is over other bytes, not this version (sha256 {sha256})"
    )]
    OtherBytes {
        /// Where the signature came from.
        signature: String,
        /// The key that made it.
        key: PathBuf,
        /// The sha256 of the bytes it does not cover.
        sha256: String,
    },
    /// A key or signature could not be made or written.
    #[error("{0}")]
    Make(String),
}

/// Trusted public keys, read from their files.
#[derive(Debug, Clone)]
pub struct TrustedKeys {
    keys: Vec<(PathBuf, String)>,
}

impl TrustedKeys {
    /// Reads each file of `paths` (minisign `.pub` files, or the bare base64 key line).
    pub fn read(paths: &[PathBuf]) -> Result<Self, SignatureError> {
        let mut keys = Vec::new();
        for path in paths {
            let text = std::fs::read_to_string(path).map_err(|e| SignatureError::Key {
                path: path.clone(),
                message: e.to_string(),
            })?;
            let line = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with("untrusted comment:"))
                .unwrap_or_default()
                .to_owned();
            minisign_verify::PublicKey::from_base64(&line).map_err(|e| SignatureError::Key {
                path: path.clone(),
                message: format!("not a minisign public key: {e}"),
            })?;
            keys.push((path.clone(), line));
        }
        Ok(TrustedKeys { keys })
    }

    /// `Ok` if `signature` (the text of a `.minisig`, from `whence`) is by one of the keys
    /// and covers `bytes`.
    pub fn verify(
        &self,
        bytes: &[u8],
        signature: &str,
        whence: &str,
    ) -> Result<(), SignatureError> {
        let decoded = minisign_verify::Signature::decode(signature)
            .map_err(|_| SignatureError::Malformed(whence.to_owned()))?;
        for (path, line) in &self.keys {
            let Ok(key) = minisign_verify::PublicKey::from_base64(line) else {
                continue;
            };
            match key.verify(bytes, &decoded, false) {
                Ok(()) => return Ok(()),
                Err(minisign_verify::Error::UnexpectedKeyId) => continue,
                Err(minisign_verify::Error::InvalidSignature) => {
                    return Err(SignatureError::OtherBytes {
                        signature: whence.to_owned(),
                        key: path.clone(),
                        sha256: hex(&Sha256::digest(bytes)),
                    });
                }
                Err(_) => return Err(SignatureError::Malformed(whence.to_owned())),
            }
        }
        Err(SignatureError::UnknownKey(whence.to_owned()))
    }
}

fn password() -> Option<String> {
    std::env::var(PASSWORD_ENV).ok().filter(|p| !p.is_empty())
}

/// Makes a key pair: `<stem>.pub` and `<stem>.key` (0600; encrypted with
/// [`PASSWORD_ENV`] if set). Refuses to overwrite either.
pub fn keygen(stem: &Path) -> Result<(PathBuf, PathBuf), SignatureError> {
    let public = stem.with_extension("pub");
    let secret = stem.with_extension("key");
    for path in [&public, &secret] {
        if path.exists() {
            return Err(SignatureError::Make(format!(
                "{} exists already: not overwritten",
                path.display()
            )));
        }
    }
    let make = |e: minisign::PError| SignatureError::Make(format!("make a key pair: {e}"));
    let pair = match password() {
        Some(password) => minisign::KeyPair::generate_encrypted_keypair(Some(password)),
        None => minisign::KeyPair::generate_unencrypted_keypair(),
    }
    .map_err(make)?;
    let public_text = pair.pk.to_box().map_err(make)?.into_string();
    let secret_text = pair
        .sk
        .to_box(Some("reactor-host component signing key"))
        .map_err(make)?
        .into_string();
    let write = |path: &Path, text: &str, private: bool| -> Result<(), SignatureError> {
        let io = |e: std::io::Error| SignatureError::Make(format!("write {}: {e}", path.display()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if private {
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        }
        let _ = private;
        let mut file = options.open(path).map_err(io)?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(io)
    };
    write(&secret, &secret_text, true)?;
    write(&public, &public_text, false)?;
    Ok((public, secret))
}

/// Signs `bytes` with the secret key in `key` (decrypted with [`PASSWORD_ENV`] if it is
/// encrypted); answers the `.minisig` text, whose trusted comment names the sha256.
pub fn sign(bytes: &[u8], key: &Path, file_name: &str) -> Result<String, SignatureError> {
    let text = std::fs::read_to_string(key)
        .map_err(|e| SignatureError::Make(format!("read the secret key {}: {e}", key.display())))?;
    let sk_box = minisign::SecretKeyBox::from_string(&text).map_err(|e| {
        SignatureError::Make(format!(
            "{} is not a minisign secret key: {e}",
            key.display()
        ))
    })?;
    let secret = match password() {
        Some(password) => sk_box.into_secret_key(Some(password)),
        None => sk_box.into_unencrypted_secret_key(),
    }
    .map_err(|e| {
        SignatureError::Make(format!(
            "cannot use the secret key {} (encrypted? set {PASSWORD_ENV}): {e}",
            key.display()
        ))
    })?;
    let trusted = format!("file:{file_name}\tsha256:{}", hex(&Sha256::digest(bytes)));
    let signature = minisign::sign(None, &secret, bytes, Some(&trusted), None)
        .map_err(|e| SignatureError::Make(format!("sign: {e}")))?;
    Ok(signature.into_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_admits_only_its_bytes_and_only_under_its_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (public, secret) = keygen(&dir.path().join("release")).expect("keygen");
        let (other_public, _) = keygen(&dir.path().join("other")).expect("keygen");
        let signature = sign(b"version one", &secret, "c.wasm").expect("sign");
        let trusted = TrustedKeys::read(&[public]).expect("keys");
        trusted
            .verify(b"version one", &signature, "c.wasm.minisig")
            .expect("admitted");
        let err = trusted
            .verify(b"version two", &signature, "s")
            .expect_err("other bytes");
        assert!(matches!(err, SignatureError::OtherBytes { .. }), "{err}");
        let half = &signature[..signature.len() / 2];
        let err = trusted
            .verify(b"version one", half, "s")
            .expect_err("truncated");
        assert!(matches!(err, SignatureError::Malformed(_)), "{err}");
        let stranger = TrustedKeys::read(&[other_public]).expect("keys");
        let err = stranger
            .verify(b"version one", &signature, "s")
            .expect_err("unknown key");
        assert!(matches!(err, SignatureError::UnknownKey(_)), "{err}");
        assert!(
            keygen(&dir.path().join("release")).is_err(),
            "never overwrites"
        );
    }
}
