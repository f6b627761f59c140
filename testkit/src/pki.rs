//! Certificates for a test etcd over TLS: a CA, etcd's server certificate, client certificates.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use std::path::{Path, PathBuf};

/// A certificate and its private key, as PEM files.
#[derive(Debug, Clone)]
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A CA of its own in a folder, and what it signed: etcd's server certificate (for
/// `127.0.0.1` and `localhost`) and one client certificate.
#[derive(Debug, Clone)]
pub struct Pki {
    /// The CA's certificate: etcd's `--trusted-ca-file`, serve's `--etcd-ca`.
    pub ca: PathBuf,
    pub server: CertFiles,
    pub client: CertFiles,
}

/// A CA: its certificate and the key it signs with.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().expect("a CA key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let pem = params.self_signed(&key).expect("the CA signs itself").pem();
    Ca {
        issuer: Issuer::new(params, key),
        pem,
    }
}

/// A leaf certificate named `name` (and `sans`) signed by `ca`, for `usage`, written to
/// `dir/<file>.pem` and `dir/<file>-key.pem`.
fn leaf(
    ca: &Ca,
    dir: &Path,
    file: &str,
    name: &str,
    sans: &[&str],
    usage: &[ExtendedKeyUsagePurpose],
) -> CertFiles {
    let key = KeyPair::generate().expect("a key");
    let sans: Vec<String> = sans.iter().map(|s| (*s).to_owned()).collect();
    let mut params = CertificateParams::new(sans).expect("certificate params");
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = usage.to_vec();
    let cert = params.signed_by(&key, &ca.issuer).expect("the CA signs");
    let files = CertFiles {
        cert: dir.join(format!("{file}.pem")),
        key: dir.join(format!("{file}-key.pem")),
    };
    std::fs::write(&files.cert, cert.pem()).expect("certificate written");
    std::fs::write(&files.key, key.serialize_pem()).expect("key written");
    files
}

impl Pki {
    /// A new CA in `dir` (created if missing) and the certificates it signs; files there
    /// already are replaced.
    pub fn generate(dir: &Path) -> Pki {
        std::fs::create_dir_all(dir).expect("certificates folder");
        let ca = ca("reactor test CA");
        let path = dir.join("ca.pem");
        std::fs::write(&path, &ca.pem).expect("CA written");
        // etcd 3.4 checks a client certificate's usage when it serves (and the server one's
        // when it dials itself): each has both.
        let both = [
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        Pki {
            ca: path,
            server: leaf(
                &ca,
                dir,
                "server",
                "etcd",
                &["127.0.0.1", "localhost"],
                &both,
            ),
            client: leaf(&ca, dir, "client", "reactor-client", &[], &both),
        }
    }

    /// A client certificate signed by another CA (written, with that CA as `other-ca.pem`, to
    /// `dir`): one etcd must refuse.
    pub fn foreign_client(dir: &Path) -> CertFiles {
        std::fs::create_dir_all(dir).expect("certificates folder");
        let other = ca("another CA");
        std::fs::write(dir.join("other-ca.pem"), &other.pem).expect("CA written");
        leaf(
            &other,
            dir,
            "foreign-client",
            "reactor-client",
            &[],
            &[ExtendedKeyUsagePurpose::ClientAuth],
        )
    }

    /// serve's flags for this CA and client certificate: `--etcd-ca`, `--etcd-cert`,
    /// `--etcd-key`.
    pub fn serve_flags(&self) -> Vec<String> {
        let path = |p: &Path| p.display().to_string();
        vec![
            "--etcd-ca".into(),
            path(&self.ca),
            "--etcd-cert".into(),
            path(&self.client.cert),
            "--etcd-key".into(),
            path(&self.client.key),
        ]
    }
}

/// The host names and addresses a PEM certificate is valid for, sorted.
pub fn cert_names(pem: &str) -> Vec<String> {
    use x509_parser::extensions::GeneralName;
    let (_, pem) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).expect("a PEM certificate");
    let cert = pem.parse_x509().expect("an X.509 certificate");
    let mut names: Vec<String> = cert
        .subject_alternative_name()
        .expect("one subjectAltName extension")
        .map(|ext| ext.value.general_names.clone())
        .unwrap_or_default()
        .iter()
        .map(|name| match name {
            GeneralName::DNSName(dns) => (*dns).to_owned(),
            GeneralName::IPAddress(bytes) => match bytes.len() {
                4 => std::net::IpAddr::from(<[u8; 4]>::try_from(*bytes).expect("4 bytes"))
                    .to_string(),
                16 => std::net::IpAddr::from(<[u8; 16]>::try_from(*bytes).expect("16 bytes"))
                    .to_string(),
                _ => format!("{bytes:?}"),
            },
            other => format!("{other}"),
        })
        .collect();
    names.sort();
    names
}
