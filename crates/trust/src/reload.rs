//! A server certificate read from files and read again when they change, without a restart.

use super::pki::PkiError;
use arc_swap::ArcSwap;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

/// Where a certificate chain and its key are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl CertFiles {
    fn stamp(&self) -> Option<(SystemTime, SystemTime)> {
        let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        Some((modified(&self.cert)?, modified(&self.key)?))
    }

    /// The chain and key, checked to be a pair rustls can serve.
    pub fn load(&self) -> Result<CertifiedKey, PkiError> {
        let malformed = |what: &PathBuf, reason: String| PkiError::Malformed {
            what: what.display().to_string(),
            reason,
        };
        let chain = CertificateDer::pem_file_iter(&self.cert)
            .map_err(|e| malformed(&self.cert, e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| malformed(&self.cert, e.to_string()))?;
        if chain.is_empty() {
            return Err(malformed(&self.cert, "no certificate in it".into()));
        }
        let key = PrivateKeyDer::from_pem_file(&self.key)
            .map_err(|e| malformed(&self.key, e.to_string()))?;
        let key = rustls::crypto::ring::sign::any_supported_type(&key)
            .map_err(|e| malformed(&self.key, e.to_string()))?;
        let certified = CertifiedKey::new(chain, key);
        certified.keys_match().map_err(|e| {
            malformed(
                &self.key,
                format!("it is not the key of {}: {e}", self.cert.display()),
            )
        })?;
        Ok(certified)
    }
}

/// The certificate a TLS listener serves: the one in its files when last read.
#[derive(Debug)]
pub struct ReloadingCert {
    files: CertFiles,
    current: ArcSwap<CertifiedKey>,
    /// The files' modification times when last read.
    stamp: parking_lot::Mutex<Option<(SystemTime, SystemTime)>>,
}

impl ReloadingCert {
    /// Reads `files` now (an error if they do not make a certificate) and, while the answer
    /// lives, every `every` again if their modification time changed.
    pub fn watch(files: CertFiles, every: Duration) -> Result<Arc<ReloadingCert>, PkiError> {
        let stamp = parking_lot::Mutex::new(files.stamp());
        let current = ArcSwap::from_pointee(files.load()?);
        let cert = Arc::new(ReloadingCert {
            files,
            current,
            stamp,
        });
        let weak = Arc::downgrade(&cert);
        tokio::spawn(poll(weak, every));
        Ok(cert)
    }

    /// The certificate served now.
    pub fn current(&self) -> Arc<CertifiedKey> {
        self.current.load_full()
    }

    /// Reads the files again if they changed; a pair that does not load leaves the old one
    /// served (and says why).
    pub fn refresh(&self) {
        let now = self.files.stamp();
        if std::mem::replace(&mut *self.stamp.lock(), now) == now {
            return;
        }
        match self.files.load() {
            Ok(certified) => {
                self.current.store(Arc::new(certified));
                tracing::info!(cert = %self.files.cert.display(), "serving the certificate read again from its file");
            }
            Err(e) => tracing::warn!("keeping the certificate served: {e}"),
        }
    }
}

async fn poll(cert: Weak<ReloadingCert>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        match cert.upgrade() {
            Some(cert) => cert.refresh(),
            None => return,
        }
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.load_full())
    }
}

/// A rustls server configuration serving `cert`, speaking HTTP/2 and HTTP/1.1, with ring.
pub fn server_config(cert: Arc<ReloadingCert>) -> Result<rustls::ServerConfig, rustls::Error> {
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_cert_resolver(cert);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pki::{Ca, Usage, write_private};

    fn issue(files: &CertFiles, ca: &Ca, name: &str) {
        let issued = ca
            .issue(name, &["localhost".into()], Usage::Server)
            .expect("issue");
        write_private(&files.key, &issued.key_pem).expect("key");
        write_private(&files.cert, &issued.cert_pem).expect("cert");
    }

    #[tokio::test]
    async fn files_replaced_are_served_and_a_broken_pair_keeps_the_last() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca = Ca::generate("test CA").expect("ca");
        let files = CertFiles {
            cert: dir.path().join("server.crt"),
            key: dir.path().join("server.key"),
        };
        issue(&files, &ca, "first");
        // Polled every hour: the test reads again by hand.
        let cert = ReloadingCert::watch(files.clone(), Duration::from_secs(3600)).expect("loads");
        let first = cert.current().cert[0].clone();
        cert.refresh();
        assert_eq!(
            cert.current().cert[0],
            first,
            "unchanged files are not read again"
        );
        issue(&files, &ca, "second");
        cert.refresh();
        let second = cert.current().cert[0].clone();
        assert_ne!(second, first, "the replaced certificate is served");
        std::fs::write(&files.key, "not a key").expect("break");
        cert.refresh();
        assert_eq!(
            cert.current().cert[0],
            second,
            "a broken pair leaves the last one served"
        );
    }
}
