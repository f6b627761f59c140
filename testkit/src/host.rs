//! `reactor-host serve` on a free loopback port, and its client commands, for tests.

use crate::binary::reactor_host_bin;
use crate::etcd;
use crate::eventually::eventually;
use crate::lines::spawn_line_reader;
use crate::output::{stderr, stdout};
use crate::watcher::Watcher;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// A `reactor-host serve` process on a free loopback port.
pub struct Host {
    child: Child,
    pub url: String,
    pub data: PathBuf,
    /// The etcd it stores in, when the suite runs on the etcd backend.
    _etcd: Option<Arc<etcd::Etcd>>,
}

/// The backend matrix: with `REACTOR_TEST_STORE=etcd` every server a test starts without
/// its own `--store` stores in an etcd of its own, kept (by data folder) across restarts,
/// over TLS with a client certificate (`--etcd-ca`, `--etcd-cert`, `--etcd-key`);
/// `REACTOR_TEST_STORE=etcd-plain` runs the same over plain http.
/// A test of the embedded store's own change log (`--log-retention`) stays on it.
fn store_for(data: &Path, extra: &[&str]) -> Option<Arc<etcd::Etcd>> {
    static RUNNING: Mutex<BTreeMap<PathBuf, Weak<etcd::Etcd>>> = Mutex::new(BTreeMap::new());
    let tls = match std::env::var("REACTOR_TEST_STORE").as_deref() {
        Ok("etcd") => true,
        Ok("etcd-plain") => false,
        _ => return None,
    };
    if extra.contains(&"--store") || extra.contains(&"--log-retention") {
        return None;
    }
    let mut running = RUNNING.lock();
    if let Some(etcd) = running.get(data).and_then(Weak::upgrade) {
        return Some(etcd);
    }
    let dir = data.with_extension("etcd");
    let etcd = Arc::new(if tls {
        etcd::Etcd::start_tls_in(dir)
    } else {
        etcd::Etcd::start_in(dir)
    });
    running.insert(data.to_owned(), Arc::downgrade(&etcd));
    Some(etcd)
}

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot open the server log {path}")]
    Log {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start {bin}")]
    Spawn {
        bin: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("serve did not print its address within 30s; its log:\n{log}")]
    NoAddress { log: String },
    #[error("serve printed {line:?} instead of its address")]
    FirstLine { line: String },
}

impl Host {
    /// Starts `serve` on `data` (components in `data/components`) with `extra` arguments;
    /// on the etcd backend of the matrix (`REACTOR_TEST_STORE=etcd`) unless `extra` names a
    /// store. Fails the test if it does not start.
    pub fn start(data: &Path, extra: &[&str]) -> Host {
        let etcd = store_for(data, extra);
        let store: Vec<String> = etcd
            .iter()
            .flat_map(|e| {
                let mut args = vec!["--store".to_owned(), e.url("/reactor")];
                args.extend(e.serve_flags());
                args
            })
            .collect();
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(store.iter().map(String::as_str));
        let mut host = Host::launch(data, &data.join("components"), &args, &[])
            .unwrap_or_else(|e| panic!("{e}"));
        host._etcd = etcd;
        host
    }

    /// A loopback address free now, for a server restarted where its agents find it.
    pub fn free_address() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let addr = listener.local_addr().expect("its address");
        addr.to_string()
    }

    /// Starts `serve --data DATA --components COMPONENTS EXTRA…` with `env` added to its
    /// environment, on the store `extra` names (embedded by default); answers once it
    /// printed its address. Its log is `DATA.serve.log`.
    pub fn launch(
        data: &Path,
        components: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Host, LaunchError> {
        let log_path = data.with_extension("serve.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|source| LaunchError::Log {
                path: log_path.clone(),
                source,
            })?;
        let bin = reactor_host_bin();
        // A free loopback port unless `extra` names the address (a server restarted on the
        // address its agents know).
        let listen: &[&str] = if extra.contains(&"--listen") {
            &[]
        } else {
            &["--listen", "127.0.0.1:0"]
        };
        let mut child = Command::new(bin)
            .arg("serve")
            .args(listen)
            .arg("--data")
            .arg(data)
            .args(["--components"])
            .arg(components)
            .args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|source| LaunchError::Spawn {
                bin: bin.to_owned(),
                source,
            })?;
        let mut lines = spawn_line_reader(child.stdout.take().expect("stdout is piped"));
        let mut host = Host {
            child,
            url: String::new(),
            data: data.to_owned(),
            _etcd: None,
        };
        let Some(first) = lines.next_within(Duration::from_secs(30)) else {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            return Err(LaunchError::NoAddress { log });
        };
        let Some(url) = first.strip_prefix("reactor-host listening on ") else {
            return Err(LaunchError::FirstLine { line: first });
        };
        host.url = url.to_owned();
        Ok(host)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (e.g. `-STOP`, `-CONT`) to the server process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal}");
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data.with_extension("serve.log")).unwrap_or_default()
    }

    /// Sends `signal` (e.g. `-TERM`, `-INT`) and waits for the server to exit; fails the test
    /// if it still runs after a minute (a bound, not a measure). Answers how it exited.
    pub fn stop_with(&mut self, signal: &str) -> std::process::ExitStatus {
        self.signal(signal);
        exited_within(&mut self.child, &format!("serve after kill {signal}"), 60)
    }

    /// `kill -9`: no chance to flush or clean up.
    pub fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }

    /// Runs a client command against this server with the token from its data folder.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.cli_with_stdin(args, None)
    }

    pub fn cli_with_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        output_with_stdin(client_command(&self.url, &self.data, args), stdin)
    }

    /// Starts `reactor-host watch …` and returns its output lines as they come.
    pub fn watch(&self, args: &[&str]) -> Watcher {
        let mut child = client_command(&self.url, &self.data, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("watch starts");
        let lines = spawn_line_reader(child.stdout.take().expect("stdout piped"));
        Watcher::new(child, lines)
    }

    /// The unmodified kubectl (`$KUBECTL`, else `kubectl` on the PATH) pointed at this server
    /// by the kubeconfig `serve` wrote, with a discovery cache of its own.
    pub fn kubectl_command(&self, args: &[&str]) -> Command {
        let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_owned());
        let mut command = Command::new(kubectl);
        command
            .arg("--kubeconfig")
            .arg(self.data.join("kubeconfig"))
            .arg("--cache-dir")
            .arg(self.data.join("kubectl-cache"))
            .args(args);
        command
    }

    /// Runs kubectl against this server (see `kubectl_command`).
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_with_stdin(args, None)
    }

    /// Runs kubectl against this server with `stdin` (e.g. for `apply -f -`).
    pub fn kubectl_with_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        output_with_stdin(self.kubectl_command(args), stdin)
    }

    /// Starts a kubectl that keeps printing (`get -w`), and returns its lines as they come.
    pub fn kubectl_watch(&self, args: &[&str]) -> Watcher {
        let mut child = self
            .kubectl_command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubectl starts");
        let lines = spawn_line_reader(child.stdout.take().expect("stdout piped"));
        Watcher::new(child, lines)
    }

    /// Waits until component `name` is loaded and ready.
    pub fn wait_ready(&self, name: &str) {
        eventually(&format!("{name} is ready"), 60, || {
            stdout(&self.cli(&["components"]))
                .lines()
                .any(|l| l.starts_with(&format!("{name} ")) && l.contains("ready"))
                .then_some(())
        });
    }

    /// The components folder this server watches.
    pub fn components_dir(&self) -> PathBuf {
        self.data.join("components")
    }

    /// Puts `bytes` in the components folder as component `name`, renamed in as a deploy
    /// would; answers their sha256 (the version `components` shows).
    pub fn deploy_component(&self, name: &str, bytes: &[u8]) -> String {
        let dir = self.components_dir();
        std::fs::create_dir_all(&dir).expect("components folder");
        let tmp = dir.join(format!(".{name}.wasm.tmp"));
        std::fs::write(&tmp, bytes).expect("write the component");
        std::fs::rename(&tmp, dir.join(format!("{name}.wasm"))).expect("rename it in");
        sha256_hex(bytes)
    }

    /// Component `name`'s row of `components -o json` (`null` while it is not listed).
    pub fn component(&self, name: &str) -> serde_json::Value {
        let out = self.cli(&["components", "-o", "json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let all: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        all.as_array()
            .and_then(|a| a.iter().find(|c| c["name"] == name).cloned())
            .unwrap_or_default()
    }

    /// An API client with this server's admin token, trusting its CA.
    pub fn client(&self) -> reactor_host::api::Client {
        self.client_with(Some(self.token()))
    }

    /// An API client presenting `token` (or none), trusting this server's CA.
    pub fn client_with(&self, token: Option<String>) -> reactor_host::api::Client {
        reactor_host::api::Client::with_ca(&self.url, token, self.ca_pem().as_deref())
            .expect("a client of the server")
    }

    /// Waits for `child` to exit; fails the test if it still runs after `seconds` seconds.
    pub fn exited_within(child: &mut Child, what: &str, seconds: u64) -> std::process::ExitStatus {
        eventually(&format!("{what} to exit"), seconds, || {
            child.try_wait().expect("the process's status")
        })
    }

    /// A raw HTTP client trusting this server's CA (which also issued its agents' API
    /// certificates).
    pub fn http(&self) -> reqwest::Client {
        http_client(self.ca_pem().as_deref())
    }

    /// The server's CA certificate (`<data>/ca.crt`), unless it serves plain HTTP.
    pub fn ca_pem(&self) -> Option<String> {
        if self.url.starts_with("http://") {
            return None;
        }
        Some(std::fs::read_to_string(self.data.join("ca.crt")).expect("the server's ca.crt"))
    }

    /// A join token for agent `id` with `labels` (`KEY=VALUE`), made by `token create`.
    pub fn join_token(&self, id: &str, labels: &[&str]) -> String {
        let mut args = vec!["token", "create", "--agent", id];
        for label in labels {
            args.extend(["--label", label]);
        }
        self.printed_token(&args)
    }

    /// A new user with `role`, and its token (`user create`).
    pub fn user(&self, name: &str, role: &str) -> String {
        self.printed_token(&["user", "create", name, "--role", role])
    }

    /// Runs a command that prints a token on its last line, and answers the token.
    fn printed_token(&self, args: &[&str]) -> String {
        let out = self.cli(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
            .lines()
            .last()
            .expect("the token on the last line")
            .trim()
            .to_owned()
    }

    /// `get -o json` of one object, or `None` if it does not exist.
    pub fn object(&self, kind: &str, name: &str) -> Option<serde_json::Value> {
        let out = self.cli(&["get", kind, name, "-o", "json"]);
        out.status
            .success()
            .then(|| serde_json::from_slice(&out.stdout).expect("get -o json prints JSON"))
    }

    /// The Prometheus text of `/metrics`.
    pub fn metrics(&self) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime
            .block_on(self.client().get_text("/metrics"))
            .expect("metrics")
    }

    pub fn token(&self) -> String {
        std::fs::read_to_string(self.data.join("token"))
            .expect("token file")
            .trim()
            .to_owned()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return; // exited already (stopped with a signal)
        }
        // A stopped process must be continued to die promptly.
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client_command(url: &str, data: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(reactor_host_bin());
    command
        .args(args)
        .args(["--server", url, "--data"])
        .arg(data)
        .env_remove("REACTOR_TOKEN")
        .env_remove("REACTOR_SERVER")
        .env_remove("REACTOR_KUBECONFIG")
        .env_remove("REACTOR_CA");
    command
}

/// Waits for `child` to exit; fails the test if it still runs after `seconds` seconds.
pub fn exited_within(child: &mut Child, what: &str, seconds: u64) -> std::process::ExitStatus {
    eventually(&format!("{what} to exit"), seconds, || {
        child.try_wait().expect("the process's status")
    })
}

/// A raw HTTP client trusting `ca_pem` (none: only plain HTTP works).
pub fn http_client(ca_pem: Option<&str>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder();
    if let Some(pem) = ca_pem {
        builder = builder.add_root_certificate(
            reqwest::Certificate::from_pem(pem.as_bytes()).expect("a PEM CA certificate"),
        );
    }
    builder.build().expect("an HTTP client")
}

/// `get ARGS -o json`, parsed; fails the test if the command fails.
pub fn get_json(host: &Host, args: &[&str]) -> serde_json::Value {
    let mut full = vec!["get"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-o", "json"]);
    let out = host.cli(&full);
    assert!(
        out.status.success(),
        "get failed: {}; the server's log:\n{}",
        stderr(&out),
        host.log()
    );
    serde_json::from_str(&stdout(&out)).expect("get -o json prints JSON")
}

/// Runs `command` to its end with `stdin` written to it (none: no input), its output kept.
pub fn output_with_stdin(mut command: Command, stdin: Option<&str>) -> Output {
    command.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{:?} starts: {e}", command.get_program()));
    if let Some(text) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin piped")
            .write_all(text.as_bytes())
            .expect("stdin written");
    }
    child.wait_with_output().expect("the command finishes")
}

/// The sha256 of `bytes` in hex, as the server names a component's version.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    (sha2::Sha256::digest(bytes).iter())
        .map(|b| format!("{b:02x}"))
        .collect()
}
