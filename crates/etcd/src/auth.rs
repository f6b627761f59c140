//! How the client and etcd trust each other: TLS (a CA, a client certificate) and etcd's users.

use super::error::EtcdError;
use etcd_client::{Certificate, ConnectOptions, Identity, TlsOptions};
use std::path::{Path, PathBuf};

/// The TLS and the user of every connection to etcd (the store, its watches, the replica's
/// lease and campaigns, the shared token: they all share one client). The default is plain
/// http without a user. Its `Debug` never shows the password.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct EtcdAuth {
    /// The CA (PEM) that signed etcd's server certificate: with one, the endpoints are
    /// `https://` and etcd's certificate is checked against it (and only it).
    pub ca: Option<PathBuf>,
    /// The client certificate (PEM) presented to an etcd started with `--client-cert-auth`,
    /// and its private key (PEM). Both or neither; they need `ca`.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// etcd's user and password (etcd's `auth enable`): the client authenticates at connect.
    pub user: Option<String>,
    pub password: Option<String>,
}

impl std::fmt::Debug for EtcdAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdAuth")
            .field("ca", &self.ca)
            .field("cert", &self.cert)
            .field("key", &self.key)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl EtcdAuth {
    /// Whether the connection is TLS (`https://`).
    pub fn is_tls(&self) -> bool {
        self.ca.is_some()
    }

    /// `endpoints` (`http://host:port`, as [`crate::EtcdUrl`] has them) with the scheme this
    /// connection uses.
    pub fn endpoints(&self, endpoints: &[String]) -> Vec<String> {
        endpoints
            .iter()
            .map(|e| match (self.is_tls(), e.strip_prefix("http://")) {
                (true, Some(host)) => format!("https://{host}"),
                _ => e.clone(),
            })
            .collect()
    }

    /// `options` with this TLS and user; reads the certificate files. Refuses a certificate
    /// without its key (or the reverse), a certificate without a CA and a user without a
    /// password, each in one line.
    pub fn apply(&self, options: ConnectOptions) -> Result<ConnectOptions, EtcdError> {
        let mut options = options;
        match (&self.cert, &self.key) {
            (Some(_), None) => {
                return Err(EtcdError::Config(
                    "a client certificate needs its private key".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(EtcdError::Config(
                    "a client private key needs its certificate".into(),
                ));
            }
            _ => {}
        }
        if let Some(ca) = &self.ca {
            let mut tls = TlsOptions::new().ca_certificate(Certificate::from_pem(read("CA", ca)?));
            if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
                let identity =
                    Identity::from_pem(read("client certificate", cert)?, read("client key", key)?);
                tls = tls.identity(identity);
            }
            options = options.with_tls(tls);
        } else if self.cert.is_some() {
            return Err(EtcdError::Config(
                "a client certificate needs the CA of etcd's certificate (TLS)".into(),
            ));
        }
        match (&self.user, &self.password) {
            (Some(user), Some(password)) => options = options.with_user(user, password),
            (Some(user), None) => {
                return Err(EtcdError::Config(format!(
                    "etcd user {user} has no password"
                )));
            }
            _ => {}
        }
        Ok(options)
    }
}

/// etcd keeps the tokens of its users in memory: once it restarts (or the token expired, or
/// auth changed) every request with the old one is refused. When `error` is such a refusal,
/// authenticates again; every clone of the client shares the new token. Without a user
/// there is no token and etcd never answers so.
pub(crate) async fn renew_token(client: &etcd_client::Client, error: &etcd_client::Error) {
    let text = error.to_string();
    let refused = [
        "invalid auth token",
        "auth token is expired",
        "revision of auth store is old",
    ]
    .iter()
    .any(|why| text.contains(why));
    if !refused {
        return;
    }
    match client.refresh_token().await {
        Ok(()) => tracing::info!("etcd refused the auth token: authenticated again"),
        Err(e) => {
            tracing::warn!(error = %super::error::cause(&e), "etcd refused the auth token and authenticating again failed")
        }
    }
}

/// The bytes of a PEM file, or one line naming it.
fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, EtcdError> {
    let bytes = std::fs::read(path).map_err(|source| EtcdError::File {
        what,
        path: path.to_owned(),
        source,
    })?;
    if !String::from_utf8_lossy(&bytes).contains("-----BEGIN ") {
        return Err(EtcdError::File {
            what,
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not a PEM file"),
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_password() {
        let auth = EtcdAuth {
            user: Some("root".into()),
            password: Some("s3cret-pw".into()),
            ..EtcdAuth::default()
        };
        let shown = format!("{auth:?} {auth:#?}");
        assert!(!shown.contains("s3cret-pw"), "{shown}");
        assert!(
            shown.contains("root") && shown.contains("<redacted>"),
            "{shown}"
        );
    }

    #[test]
    fn tls_makes_the_endpoints_https() {
        let plain = EtcdAuth::default();
        let endpoints = vec!["http://h:1".to_owned(), "http://g:2".to_owned()];
        assert_eq!(plain.endpoints(&endpoints), endpoints);
        let tls = EtcdAuth {
            ca: Some("ca.pem".into()),
            ..EtcdAuth::default()
        };
        assert_eq!(
            tls.endpoints(&endpoints),
            vec!["https://h:1", "https://g:2"]
        );
    }

    fn refused(auth: EtcdAuth) -> String {
        let error = auth
            .apply(ConnectOptions::new())
            .expect_err("refused")
            .to_string();
        assert!(!error.contains('\n'), "one line: {error}");
        error
    }

    #[test]
    fn unreadable_or_incomplete_settings_are_one_line_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing-ca.pem");
        let error = refused(EtcdAuth {
            ca: Some(missing.clone()),
            ..EtcdAuth::default()
        });
        assert!(
            error.starts_with("cannot read the etcd CA file")
                && error.contains(&missing.display().to_string()),
            "{error}"
        );
        let garbage = dir.path().join("garbage.pem");
        std::fs::write(&garbage, "not a certificate").expect("written");
        let error = refused(EtcdAuth {
            ca: Some(garbage.clone()),
            ..EtcdAuth::default()
        });
        assert!(
            error.contains(&garbage.display().to_string()) && error.contains("not a PEM file"),
            "{error}"
        );
        let error = refused(EtcdAuth {
            ca: Some(garbage.clone()),
            cert: Some(garbage.clone()),
            ..EtcdAuth::default()
        });
        assert_eq!(error, "a client certificate needs its private key");
        let error = refused(EtcdAuth {
            key: Some(garbage.clone()),
            ..EtcdAuth::default()
        });
        assert_eq!(error, "a client private key needs its certificate");
        let error = refused(EtcdAuth {
            cert: Some(garbage.clone()),
            key: Some(garbage),
            ..EtcdAuth::default()
        });
        assert!(error.contains("needs the CA"), "{error}");
        let error = refused(EtcdAuth {
            user: Some("root".into()),
            ..EtcdAuth::default()
        });
        assert_eq!(error, "etcd user root has no password");
    }
}
