//! `serve`'s TLS: the cluster's CA and a server certificate made in the data folder at first
//! start (or the operator's own certificate files), read again when the files change; and the
//! client file written beside the token.

use crate::api::client::kubeconfig::{self, ClientFile};
use anyhow::Context;
use clap::Args;
use reactor_trust::{Ca, CertFiles, ReloadingCert, Usage, write_private};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How often certificate files are checked for a change.
const RELOAD_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Default, Args)]
pub struct TlsArgs {
    /// Serve plain HTTP instead of HTTPS: tokens cross the network readable. For a loopback
    /// demo or a TLS-terminating proxy only; the server says so at start.
    #[arg(long)]
    pub insecure_http: bool,
    /// The server's certificate chain (PEM) instead of one made from DATA/ca.crt; read again
    /// when the file changes.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The CA that signed --tls-cert: written into the client file, pinned by join tokens.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_ca: Option<PathBuf>,
    /// Another host name or address the made certificate is valid for (repeat); localhost,
    /// the loopback addresses, the host's name and the --listen address always are.
    #[arg(long = "tls-san", value_name = "NAME")]
    pub tls_sans: Vec<String>,
}

/// What `serve` listens with.
pub struct Tls {
    pub config: Arc<rustls::ServerConfig>,
    /// The CA clients check the server against (PEM).
    pub anchor_pem: String,
    /// Kept alive: it reads the files again when they change.
    _cert: Arc<ReloadingCert>,
}

/// The names the made certificate is valid for.
fn names(args: &TlsArgs, listen: &str) -> Vec<String> {
    let mut names: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    // The machine's name, when a certificate can carry it.
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname")
        && reactor_trust::pki::san(host.trim()).is_ok()
    {
        names.push(host.trim().to_owned());
    }
    if let Some((host, _port)) = listen.rsplit_once(':') {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if !host.is_empty() && host != "0.0.0.0" && host != "::" {
            names.push(host.to_owned());
        }
    }
    names.extend(args.tls_sans.iter().cloned());
    names.retain(|n| !n.is_empty());
    names.sort();
    names.dedup();
    names
}

/// The certificate files to serve: the operator's, or `<data>/server.crt` issued now by `ca`.
pub fn prepare(args: &TlsArgs, data: &Path, listen: &str, ca: &Ca) -> anyhow::Result<Tls> {
    let (files, anchor_pem) = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let anchor = match &args.tls_ca {
                Some(path) => std::fs::read_to_string(path)
                    .with_context(|| format!("--tls-ca {}", path.display()))?,
                None => ca.cert_pem().to_owned(),
            };
            let files = CertFiles {
                cert: cert.clone(),
                key: key.clone(),
            };
            (files, anchor)
        }
        _ => {
            // Issued at every start: names added by flag are in it, and it never expires
            // while the server restarts now and then.
            let issued = ca.issue("reactor-host server", &names(args, listen), Usage::Server)?;
            let files = CertFiles {
                cert: data.join("server.crt"),
                key: data.join("server.key"),
            };
            write_private(&files.key, &issued.key_pem)?;
            write_private(&files.cert, &issued.cert_pem)?;
            (files, ca.cert_pem().to_owned())
        }
    };
    let cert = ReloadingCert::watch(files, RELOAD_EVERY)?;
    let config = reactor_trust::server_config(cert.clone())?;
    Ok(Tls {
        config: Arc::new(config),
        anchor_pem,
        _cert: cert,
    })
}

/// `<data>/kubeconfig`: where the server is, whom to trust, the admin's token.
pub fn write_client_file(
    data: &Path,
    url: &str,
    anchor_pem: Option<&str>,
    token: &str,
) -> anyhow::Result<PathBuf> {
    let path = data.join("kubeconfig");
    let file = ClientFile {
        server: url.to_owned(),
        ca_pem: anchor_pem.map(str::to_owned),
        token: Some(token.to_owned()),
    };
    kubeconfig::write(&path, &file, "admin")?;
    Ok(path)
}
