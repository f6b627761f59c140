//! A real OCI registry: Debian's `docker-registry` (the CNCF distribution registry) on a free
//! loopback port with a generated config and a temporary storage folder, killed when
//! dropped. Plain HTTP by default; with basic auth (an htpasswd file made by `htpasswd`) and
//! with TLS (a certificate for 127.0.0.1 from [`Pki`]).

use crate::pki::Pki;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The registry binary of Debian's `docker-registry` package (scripts/setup.sh).
const BIN: &str = "/usr/bin/docker-registry";

/// How a [`Registry`] is started.
#[derive(Debug, Clone, Copy, Default)]
pub struct RegistryOptions {
    /// Basic auth with user [`Registry::USER`] and password [`Registry::PASSWORD`].
    pub auth: bool,
    /// HTTPS with a certificate from a CA of its own ([`Registry::ca`]).
    pub tls: bool,
}

/// A running registry.
pub struct Registry {
    child: Option<Child>,
    dir: PathBuf,
    _temp: tempfile::TempDir,
    port: u16,
    options: RegistryOptions,
    pki: Option<Pki>,
}

impl Registry {
    /// The user of a registry with auth.
    pub const USER: &'static str = "pusher";
    /// Its password.
    pub const PASSWORD: &'static str = "s3cret-registry-pw";

    /// Starts a registry and waits until it listens; panics with its log otherwise.
    pub fn start(options: RegistryOptions) -> Registry {
        let temp = tempfile::tempdir().expect("registry tempdir");
        let dir = temp.path().to_owned();
        let pki = options.tls.then(|| Pki::generate(&dir.join("pki")));
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let mut registry = Registry {
            child: None,
            dir,
            _temp: temp,
            port,
            options,
            pki,
        };
        registry.write_config();
        registry.resume();
        registry
    }

    fn write_config(&self) {
        let mut config = format!(
            "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{}\n  secret: reactor-test-secret\n",
            self.dir.join("storage").display(),
            self.port
        );
        if let Some(pki) = &self.pki {
            config.push_str(&format!(
                "  tls:\n    certificate: {}\n    key: {}\n",
                pki.server.cert.display(),
                pki.server.key.display()
            ));
        }
        if self.options.auth {
            let htpasswd = self.dir.join("htpasswd");
            let mut child = Command::new("htpasswd")
                .args(["-niB", Self::USER])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("htpasswd (apache2-utils, scripts/setup.sh)");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(format!("{}\n", Self::PASSWORD).as_bytes())
                .expect("password to htpasswd");
            let out = child.wait_with_output().expect("htpasswd output");
            assert!(
                out.status.success(),
                "htpasswd: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::write(&htpasswd, &out.stdout).expect("htpasswd file");
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: reactor-test\n    path: {}\n",
                htpasswd.display()
            ));
        }
        std::fs::write(self.dir.join("config.yml"), config).expect("registry config");
    }

    /// Starts the registry again on its port and storage (after [`Registry::stop`]).
    pub fn resume(&mut self) {
        let log = std::fs::File::create(self.dir.join("registry.log")).expect("registry log");
        let child = Command::new(BIN)
            .arg("serve")
            .arg(self.dir.join("config.yml"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("start {BIN} (scripts/setup.sh installs it): {e}"));
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!("the registry exited ({status}): {}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "the registry did not listen within 30s: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the registry (its storage stays, for [`Registry::resume`]).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// `127.0.0.1:PORT`, as references name it.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `oci://127.0.0.1:PORT/REPO`.
    pub fn reference(&self, repo_and_version: &str) -> String {
        format!("oci://{}/{repo_and_version}", self.host())
    }

    /// The CA that signed the registry's certificate, over TLS.
    pub fn ca(&self) -> Option<&Path> {
        self.pki.as_ref().map(|p| p.ca.as_path())
    }

    /// A file holding `USER:PASSWORD` in `dir`.
    pub fn credentials_file(&self, dir: &Path) -> PathBuf {
        let path = dir.join("registry-credentials");
        std::fs::write(&path, format!("{}:{}\n", Self::USER, Self::PASSWORD)).expect("credentials");
        path
    }

    /// The config file's entry for this registry (`supply.registries.HOST`), as YAML flow.
    pub fn settings_yaml(&self, credentials: Option<&Path>) -> String {
        let mut fields = Vec::new();
        if self.pki.is_none() {
            fields.push("plain_http: true".to_owned());
        }
        if let Some(ca) = self.ca() {
            fields.push(format!("ca: {}", ca.display()));
        }
        if let Some(credentials) = credentials {
            fields.push(format!("credentials: {}", credentials.display()));
        }
        format!("\"{}\": {{{}}}", self.host(), fields.join(", "))
    }

    /// The flags of `component push` for this registry (plain HTTP or its CA).
    pub fn push_flags(&self) -> Vec<String> {
        match self.ca() {
            Some(ca) => vec!["--ca".into(), ca.display().to_string()],
            None => vec!["--plain-http".into()],
        }
    }

    /// What it logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("registry.log")).unwrap_or_default()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}
