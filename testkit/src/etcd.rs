//! A real etcd: Debian's `etcd` binary on free loopback ports with a temporary data folder,
//! killed when dropped. Shared by the store tests, the tests that drive servers on etcd and
//! the benchmarks. Plain http, or TLS with client certificates ([`Etcd::start_tls`]): a CA of
//! its own in `DIR/pki`, and etcd's `--client-cert-auth`.

use crate::pki::Pki;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running etcd.
pub struct Etcd {
    child: Option<Child>,
    dir: PathBuf,
    /// The temporary folder `dir` is in, when the etcd's data is not kept.
    _temp: Option<tempfile::TempDir>,
    client_port: u16,
    peer_port: u16,
    /// The plain http port of `/health` (and `/metrics`): the client port may be TLS.
    metrics_port: u16,
    /// Over TLS, the certificates of etcd and of its client.
    pki: Option<Pki>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Etcd {
    /// Starts etcd and waits until it reports healthy; panics with its log otherwise.
    pub fn start() -> Etcd {
        let temp = tempfile::tempdir().expect("etcd tempdir");
        Self::start_at(temp.path().to_owned(), Some(temp), false)
    }

    /// Starts etcd over TLS with client certificates (`--client-cert-auth`), certificates
    /// from a new CA: see [`Etcd::pki`] and [`Etcd::serve_flags`].
    pub fn start_tls() -> Etcd {
        let temp = tempfile::tempdir().expect("etcd tempdir");
        Self::start_at(temp.path().to_owned(), Some(temp), true)
    }

    /// Starts etcd on the data in `dir` (created if missing), which outlives it: a later
    /// etcd on the same `dir` has the same keys.
    pub fn start_in(dir: PathBuf) -> Etcd {
        std::fs::create_dir_all(&dir).expect("etcd folder");
        Self::start_at(dir, None, false)
    }

    /// [`Etcd::start_in`] over TLS with client certificates, a new CA each time.
    pub fn start_tls_in(dir: PathBuf) -> Etcd {
        std::fs::create_dir_all(&dir).expect("etcd folder");
        Self::start_at(dir, None, true)
    }

    fn start_at(dir: PathBuf, temp: Option<tempfile::TempDir>, tls: bool) -> Etcd {
        Self::start_on(dir, temp, tls, free_port())
    }

    /// [`Etcd::start_at`] trying `client_port` first.
    fn start_on(
        dir: PathBuf,
        temp: Option<tempfile::TempDir>,
        tls: bool,
        client_port: u16,
    ) -> Etcd {
        let pki = tls.then(|| Pki::generate(&dir.join("pki")));
        let mut etcd = Etcd {
            child: None,
            dir,
            _temp: temp,
            client_port,
            peer_port: free_port(),
            metrics_port: free_port(),
            pki,
        };
        // A free port found is free only until somebody else binds it (another test's server
        // or etcd): when etcd finds one of its three taken, it starts again on new ones (on
        // new data, if it had none: the first attempt's recorded the old peer address).
        let fresh = !etcd.dir.join("data").exists();
        for _ in 0..5 {
            match etcd.try_launch() {
                Ok(()) => return etcd,
                Err(log) if log.contains("address already in use") => {
                    if fresh {
                        let _ = std::fs::remove_dir_all(etcd.dir.join("data"));
                    }
                    etcd.client_port = free_port();
                    etcd.peer_port = free_port();
                    etcd.metrics_port = free_port();
                }
                Err(log) => panic!("{log}"),
            }
        }
        panic!("etcd found its ports taken 5 times: {}", etcd.log());
    }

    /// `host:port` of the client endpoint.
    pub fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.client_port)
    }

    /// The client endpoint's URL: `https://` over TLS.
    pub fn client_url(&self) -> String {
        let scheme = if self.pki.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.endpoint())
    }

    /// The certificates, over TLS.
    pub fn pki(&self) -> Option<&Pki> {
        self.pki.as_ref()
    }

    /// What `serve` needs besides `--store` to connect: over TLS the CA and the client
    /// certificate (`--etcd-ca`, `--etcd-cert`, `--etcd-key`), nothing otherwise.
    pub fn serve_flags(&self) -> Vec<String> {
        self.pki.as_ref().map(Pki::serve_flags).unwrap_or_default()
    }

    /// The store's connection settings, as [`Etcd::serve_flags`] gives them to `serve`.
    pub fn auth(&self) -> reactor_host::store::EtcdAuth {
        match &self.pki {
            None => reactor_host::store::EtcdAuth::default(),
            Some(pki) => reactor_host::store::EtcdAuth {
                ca: Some(pki.ca.clone()),
                cert: Some(pki.client.cert.clone()),
                key: Some(pki.client.key.clone()),
                ..reactor_host::store::EtcdAuth::default()
            },
        }
    }

    /// Turns etcd's auth on with a `root` user (of the `root` role) whose password is
    /// `password`. Runs its own runtime on a thread of its own: callable from async tests.
    pub fn enable_auth(&self, password: &str) {
        let endpoint = self.client_url();
        let pki = self.pki.clone();
        let password = password.to_owned();
        let enable = move || -> Result<(), etcd_client::Error> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(etcd_client::Error::IoError)?;
            runtime.block_on(async {
                let mut options = etcd_client::ConnectOptions::new()
                    .with_connect_timeout(Duration::from_secs(5))
                    .with_timeout(Duration::from_secs(10));
                if let Some(pki) = &pki {
                    let read = |p: &PathBuf| std::fs::read(p).expect("certificate file");
                    options = options.with_tls(
                        etcd_client::TlsOptions::new()
                            .ca_certificate(etcd_client::Certificate::from_pem(read(&pki.ca)))
                            .identity(etcd_client::Identity::from_pem(
                                read(&pki.client.cert),
                                read(&pki.client.key),
                            )),
                    );
                }
                let mut client = etcd_client::Client::connect([endpoint], Some(options)).await?;
                client.role_add("root").await?;
                client.user_add("root", password, None).await?;
                client.user_grant_role("root", "root").await?;
                client.auth_enable().await?;
                Ok::<(), etcd_client::Error>(())
            })
        };
        std::thread::spawn(enable)
            .join()
            .expect("the auth thread")
            .unwrap_or_else(|e| panic!("etcd auth enable: {e}; its log: {}", self.log()));
    }

    /// The `--store` URL of this etcd, with our objects under `prefix` (e.g. `/reactor`).
    pub fn url(&self, prefix: &str) -> String {
        format!("etcd://{}{prefix}", self.endpoint())
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("etcd.log")
    }

    fn launch(&mut self) {
        if let Err(log) = self.try_launch() {
            panic!("{log}");
        }
    }

    /// Starts etcd on its ports and waits until it is healthy; else what went wrong, with
    /// its log.
    fn try_launch(&mut self) -> Result<(), String> {
        let client = self.client_url();
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let metrics = format!("http://127.0.0.1:{}", self.metrics_port);
        let tls: Vec<String> = match &self.pki {
            None => Vec::new(),
            Some(pki) => vec![
                format!("--cert-file={}", pki.server.cert.display()),
                format!("--key-file={}", pki.server.key.display()),
                format!("--trusted-ca-file={}", pki.ca.display()),
                "--client-cert-auth".to_owned(),
            ],
        };
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("etcd log file");
        let child = Command::new("etcd")
            .arg("--name=test")
            .arg(format!("--data-dir={}", self.dir.join("data").display()))
            .arg(format!("--listen-client-urls={client}"))
            .arg(format!("--advertise-client-urls={client}"))
            .arg(format!("--listen-peer-urls={peer}"))
            .arg(format!("--initial-advertise-peer-urls={peer}"))
            .arg(format!("--initial-cluster=test={peer}"))
            .arg(format!("--listen-metrics-urls={metrics}"))
            .args(&tls)
            .arg("--logger=zap")
            .arg("--log-level=warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("etcd starts (is etcd-server installed? run scripts/setup.sh)");
        self.child = Some(child);
        self.wait_healthy()
    }

    fn wait_healthy(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if self.healthy() {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(format!("etcd exited with {status}: {}", self.log()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        Err(format!("etcd not healthy within 30s: {}", self.log()))
    }

    fn healthy(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.metrics_port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        if stream
            .write_all(b"GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.contains("\"health\":\"true\"")
    }

    /// The process id (for CPU time and memory read by the benchmarks), if it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// What etcd logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// `kill -9` and start again on the same ports and data: every open stream breaks.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    /// `kill -9`; the data stays for a [`Etcd::restart`].
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port taken between its finding and etcd's start: etcd starts on others.
    #[test]
    fn a_port_taken_meanwhile_is_given_up_for_another() {
        let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = taken.local_addr().expect("address").port();
        let temp = tempfile::tempdir().expect("tempdir");
        let etcd = Etcd::start_on(temp.path().to_owned(), Some(temp), false, port);
        assert_ne!(etcd.client_port, port);
        assert!(etcd.healthy());
        assert!(
            etcd.log().contains("address already in use"),
            "{}",
            etcd.log()
        );
    }
}
