//! The cluster's CA, made at first start, and the certificates it issues to servers and agents.

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{what} is not a PEM certificate or key: {reason}")]
    Malformed { what: String, reason: String },
    #[error("cannot make a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("{0:?} is not a host name or an IP address")]
    Name(String),
    #[error("{0} has {1} but not {2}: give both or neither")]
    Half(&'static str, PathBuf, &'static str),
}

/// How long the CA is valid; certificates it issues live a year and are issued again at
/// every start.
const CA_LIFETIME: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
const LEAF_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);

/// The CA: its certificate (what clients trust) and its key (what signs).
pub struct Ca {
    cert_pem: String,
    key: KeyPair,
}

impl std::fmt::Debug for Ca {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ca").finish_non_exhaustive()
    }
}

/// A certificate and its key, in PEM.
#[derive(Clone)]
pub struct Issued {
    pub cert_pem: String,
    pub key_pem: String,
}

impl std::fmt::Debug for Issued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issued").finish_non_exhaustive()
    }
}

/// What an issued certificate is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    Server,
    Client,
}

fn validity(params: &mut CertificateParams, lifetime: Duration) {
    let now = time::OffsetDateTime::now_utc();
    // An hour back, for clocks a little behind ours.
    params.not_before = now - time::Duration::hours(1);
    params.not_after = now + lifetime;
}

fn name(common_name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, "reactor-host");
    dn.push(DnType::CommonName, common_name);
    dn
}

impl Ca {
    /// A new CA named `common_name`.
    pub fn generate(common_name: &str) -> Result<Ca, PkiError> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::default();
        params.distinguished_name = name(common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        validity(&mut params, CA_LIFETIME);
        let cert = params.self_signed(&key)?;
        Ok(Ca {
            cert_pem: cert.pem(),
            key,
        })
    }

    /// The CA in `cert_pem` with its key in `key_pem`.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Ca, PkiError> {
        let key = KeyPair::from_pem(key_pem).map_err(|e| PkiError::Malformed {
            what: "the CA key".into(),
            reason: e.to_string(),
        })?;
        // Checks that the certificate parses as one rcgen can sign with.
        Issuer::from_ca_cert_pem(cert_pem, &key).map_err(|e| PkiError::Malformed {
            what: "the CA certificate".into(),
            reason: e.to_string(),
        })?;
        Ok(Ca {
            cert_pem: cert_pem.to_owned(),
            key,
        })
    }

    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    pub fn key_pem(&self) -> String {
        self.key.serialize_pem()
    }

    /// `<data>/ca.crt` and `<data>/ca.key`, made (0600) if neither exists.
    pub fn load_or_create(data: &Path) -> Result<Ca, PkiError> {
        let (cert, key) = (data.join("ca.crt"), data.join("ca.key"));
        match (cert.exists(), key.exists()) {
            (true, true) => Ca::from_pem(&read(&cert)?, &read(&key)?),
            (false, false) => {
                // Named by when it was made (as k3s names its CAs): two clusters' CAs never
                // share a name, so a certificate of one is an unknown issuer to the other.
                let made = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos());
                let ca = Ca::generate(&format!("reactor-host CA @{made}"))?;
                ca.write(data)?;
                Ok(ca)
            }
            (true, false) => Err(PkiError::Half("the data folder", cert, "ca.key")),
            (false, true) => Err(PkiError::Half("the data folder", key, "ca.crt")),
        }
    }

    /// Writes `<data>/ca.crt` and `<data>/ca.key` (0600), replacing what is there.
    pub fn write(&self, data: &Path) -> Result<(), PkiError> {
        write_private(&data.join("ca.key"), &self.key_pem())?;
        write_private(&data.join("ca.crt"), &self.cert_pem)
    }

    /// A certificate for `common_name`, valid for the host names and addresses `sans`.
    pub fn issue(
        &self,
        common_name: &str,
        sans: &[String],
        usage: Usage,
    ) -> Result<Issued, PkiError> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::default();
        params.distinguished_name = name(common_name);
        params.subject_alt_names = sans.iter().map(|s| san(s)).collect::<Result<_, _>>()?;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![match usage {
            Usage::Server => ExtendedKeyUsagePurpose::ServerAuth,
            Usage::Client => ExtendedKeyUsagePurpose::ClientAuth,
        }];
        params.use_authority_key_identifier_extension = true;
        validity(&mut params, LEAF_LIFETIME);
        let issuer = Issuer::from_ca_cert_pem(&self.cert_pem, &self.key).map_err(|e| {
            PkiError::Malformed {
                what: "the CA certificate".into(),
                reason: e.to_string(),
            }
        })?;
        let cert = params.signed_by(&key, &issuer)?;
        Ok(Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// A host name or address as a certificate names it: an IP address, else a DNS name (`*.` for
/// a wildcard); anything else is refused.
pub fn san(name: &str) -> Result<SanType, PkiError> {
    if let Ok(ip) = name.parse::<std::net::IpAddr>() {
        return Ok(SanType::IpAddress(ip));
    }
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let host = name.strip_prefix("*.").unwrap_or(name);
    if name.len() > 253 || !host.split('.').all(label) {
        return Err(PkiError::Name(name.to_owned()));
    }
    Ok(SanType::DnsName(name.to_owned().try_into()?))
}

/// The SHA-256 of the first certificate in `pem` (its DER), as lowercase hex: what a joining
/// agent pins the CA by.
pub fn fingerprint(pem: &str) -> Result<String, PkiError> {
    let der = CertificateDer::from_pem_slice(pem.as_bytes()).map_err(|e| PkiError::Malformed {
        what: "the CA certificate".into(),
        reason: e.to_string(),
    })?;
    Ok(hex(&Sha256::digest(der.as_ref())))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn read(path: &Path) -> Result<String, PkiError> {
    std::fs::read_to_string(path).map_err(|source| PkiError::Read {
        path: path.to_owned(),
        source,
    })
}

/// Writes `text` to `path` atomically, mode 0600.
pub fn write_private(path: &Path, text: &str) -> Result<(), PkiError> {
    reactor_core::private::write_durably(path, text.as_bytes()).map_err(|source| PkiError::Write {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_made_once_is_found_again_and_signs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca = Ca::load_or_create(dir.path()).expect("create");
        let again = Ca::load_or_create(dir.path()).expect("load");
        assert_eq!(ca.cert_pem(), again.cert_pem());
        let issued = again
            .issue(
                "server",
                &["localhost".into(), "127.0.0.1".into()],
                Usage::Server,
            )
            .expect("issue");
        assert!(issued.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert_eq!(fingerprint(ca.cert_pem()).expect("fp").len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("ca.key"))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn half_a_ca_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        Ca::load_or_create(dir.path()).expect("create");
        std::fs::remove_file(dir.path().join("ca.key")).expect("rm");
        let error = Ca::load_or_create(dir.path()).expect_err("half");
        assert!(error.to_string().contains("ca.key"), "{error}");
    }
}
