//! How to reach a registry: HTTPS (with an extra CA) or plain HTTP, basic-auth credentials
//! from a file or the environment, and a bound on every call's time. Credentials are never
//! printed: not in errors, not in `Debug`.

use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use reactor_runtime::RegistrySettings;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The environment variable holding `USER:PASSWORD` for registries without a credentials
/// file of their own.
pub const CREDENTIALS_ENV: &str = "REACTOR_REGISTRY_CREDENTIALS";

/// Why a registry cannot be reached as configured.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// The credentials file could not be read.
    #[error("read the registry credentials file {path}: {source}")]
    ReadCredentials {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The credentials are not `USER:PASSWORD`.
    #[error("the registry credentials in {0} are not one line USER:PASSWORD")]
    BadCredentials(String),
    /// The CA file could not be read.
    #[error("read the registry CA file {path}: {source}")]
    ReadCa {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// No HTTP client could be made for the registry (a CA that does not parse; no CA
    /// configured and none in the system's store).
    #[error("cannot reach registry {registry}: {message}")]
    Client {
        /// The registry.
        registry: String,
        /// The client's error and its causes, on one line.
        message: String,
    },
}

/// Why no registry client can be made on a system without a CA store.
const NO_SYSTEM_CAS: &str = "the registry client needs the system's CA certificates even \
    for a registry with a CA of its own: install Debian's ca-certificates (or set SSL_CERT_FILE \
    to a bundle)";

/// How to reach one registry.
#[derive(Clone)]
pub struct Access {
    registry: String,
    plain_http: bool,
    ca_pem: Option<Vec<u8>>,
    auth: RegistryAuth,
    /// The longest one call may take.
    pub timeout: Duration,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("registry", &self.registry)
            .field("plain_http", &self.plain_http)
            .field("ca", &self.ca_pem.is_some())
            .field(
                "credentials",
                &!matches!(self.auth, RegistryAuth::Anonymous),
            )
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Access {
    /// `registry` as `settings` say to reach it; credentials from its file, else from
    /// [`CREDENTIALS_ENV`], else none.
    pub fn new(
        registry: &str,
        settings: &RegistrySettings,
        timeout: Duration,
    ) -> Result<Self, AccessError> {
        let auth = match &settings.credentials {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| {
                    AccessError::ReadCredentials {
                        path: path.clone(),
                        source,
                    }
                })?;
                basic(&text, &path.display().to_string())?
            }
            None => match std::env::var(CREDENTIALS_ENV) {
                Ok(text) if !text.is_empty() => basic(&text, CREDENTIALS_ENV)?,
                _ => RegistryAuth::Anonymous,
            },
        };
        let ca_pem = settings.ca.as_deref().map(read_ca).transpose()?;
        Ok(Access {
            registry: registry.to_owned(),
            plain_http: settings.plain_http,
            ca_pem,
            auth,
            timeout,
        })
    }

    pub(crate) fn auth(&self) -> &RegistryAuth {
        &self.auth
    }

    /// A client for this registry, each call bounded by `timeout`. A registry with a CA of
    /// its own is checked against that CA only: the system's store is neither needed (a
    /// container may have none) nor trusted for it.
    pub(crate) fn client(&self) -> Result<oci_client::Client, AccessError> {
        // reqwest is built without a crypto provider of its own: ring, as everywhere here.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config = ClientConfig {
            protocol: if self.plain_http {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            tls_certs_only: self
                .ca_pem
                .iter()
                .map(|pem| Certificate {
                    encoding: CertificateEncoding::Pem,
                    data: pem.clone(),
                })
                .collect(),
            // Each call as a whole is bounded by `timeout` (see `pull::bounded`).
            connect_timeout: Some(self.timeout),
            platform_resolver: None,
            ..ClientConfig::default()
        };
        let failed = |message: String| AccessError::Client {
            registry: self.registry.clone(),
            message,
        };
        // oci-client 0.18 makes a default reqwest client beside the one configured, even in
        // `try_from`, and that panics when the system has no CA certificates (a minimal
        // container), whatever CA the registry's entry names. Such a client made first
        // answers an error instead; the panic is caught too, so the supply task never dies.
        // Once it succeeded, the system's store is not read again for the check (oci-client
        // reads it for each client); a failure is tried again, as CAs may be installed since.
        static SYSTEM_CLIENT_MADE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
        if SYSTEM_CLIENT_MADE.get().is_none() {
            if let Err(e) = reqwest013::Client::builder().build() {
                let why = reactor_core::one_line::one_line(&e);
                return Err(failed(format!("{why}; {NO_SYSTEM_CAS}")));
            }
            let _ = SYSTEM_CLIENT_MADE.set(());
        }
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            oci_client::Client::try_from(config)
        }));
        match made {
            Ok(Ok(client)) => Ok(client),
            Ok(Err(e)) => Err(failed(reactor_core::one_line::one_line(&e))),
            Err(_) => Err(failed(NO_SYSTEM_CAS.to_owned())),
        }
    }
}

fn read_ca(path: &Path) -> Result<Vec<u8>, AccessError> {
    std::fs::read(path).map_err(|source| AccessError::ReadCa {
        path: path.to_owned(),
        source,
    })
}

/// `USER:PASSWORD` (one line, a trailing newline allowed) as basic auth; `whence` names
/// where it came from in an error, which never shows the text itself.
fn basic(text: &str, whence: &str) -> Result<RegistryAuth, AccessError> {
    let line = text.strip_suffix('\n').unwrap_or(text);
    let line = line.strip_suffix('\r').unwrap_or(line);
    match line.split_once(':') {
        Some((user, password)) if !user.is_empty() && !line.contains('\n') => {
            Ok(RegistryAuth::Basic(user.to_owned(), password.to_owned()))
        }
        _ => Err(AccessError::BadCredentials(whence.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_one_line_and_never_shown() {
        assert!(
            matches!(basic("u:p\n", "f"), Ok(RegistryAuth::Basic(u, p)) if u == "u" && p == "p")
        );
        let err = basic("secret-without-colon", "creds.txt").expect_err("no colon");
        assert_eq!(
            err.to_string(),
            "the registry credentials in creds.txt are not one line USER:PASSWORD"
        );
        assert!(basic("u:p\nmore\n", "f").is_err());
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("creds");
        std::fs::write(&file, "me:hunter2\n").expect("write");
        let settings = RegistrySettings {
            credentials: Some(file),
            ..RegistrySettings::default()
        };
        let access = Access::new("r:5000", &settings, Duration::from_secs(1)).expect("access");
        assert!(!format!("{access:?}").contains("hunter2"));
    }
}
