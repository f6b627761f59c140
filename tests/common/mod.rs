//! Test harness: runs the real `reactor-host` binary as a server and as a client.

#![allow(dead_code)]

pub mod agent;
pub mod components;
pub mod etcd;
pub mod policy;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// The binary under test. `REACTOR_HOST_BIN` at compile time overrides it (a copy of the
/// binary, when several worktrees share one target folder and overwrite its binary).
pub const BIN: &str = match option_env!("REACTOR_HOST_BIN") {
    Some(bin) => bin,
    None => env!("CARGO_BIN_EXE_reactor-host"),
};

/// A `reactor-host serve` process on a free loopback port.
pub struct Host {
    child: Child,
    pub url: String,
    pub data: PathBuf,
    /// The etcd it stores in, when the suite runs on the etcd backend.
    _etcd: Option<Arc<etcd::Etcd>>,
}

/// The backend matrix: with `REACTOR_TEST_STORE=etcd` every server a test starts without
/// its own `--store` stores in an etcd of its own, kept (by data folder) across restarts.
/// A test of the embedded store's own change log (`--log-retention`) stays on it.
fn store_for(data: &Path, extra: &[&str]) -> Option<Arc<etcd::Etcd>> {
    static RUNNING: Mutex<BTreeMap<PathBuf, Weak<etcd::Etcd>>> = Mutex::new(BTreeMap::new());
    if std::env::var("REACTOR_TEST_STORE").as_deref() != Ok("etcd")
        || extra.contains(&"--store")
        || extra.contains(&"--log-retention")
    {
        return None;
    }
    let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(etcd) = running.get(data).and_then(Weak::upgrade) {
        return Some(etcd);
    }
    let etcd = Arc::new(etcd::Etcd::start_in(data.with_extension("etcd")));
    running.insert(data.to_owned(), Arc::downgrade(&etcd));
    Some(etcd)
}

impl Host {
    pub fn start(data: &Path, extra: &[&str]) -> Host {
        let etcd = store_for(data, extra);
        let store: Vec<String> = etcd
            .iter()
            .flat_map(|e| ["--store".to_owned(), e.url("/reactor")])
            .collect();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(data.with_extension("serve.log"))
            .expect("server log file");
        let mut child = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--data"])
            .arg(data)
            .args(["--components"])
            .arg(data.join("components"))
            .args(extra)
            .args(&store)
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("serve starts");
        let stdout = child.stdout.take().expect("stdout piped");
        let mut lines = spawn_line_reader(stdout);
        let Some(first) = lines.next_within(Duration::from_secs(30)) else {
            let log = std::fs::read_to_string(data.with_extension("serve.log")).unwrap_or_default();
            panic!("serve did not print its address within 30s; its log:\n{log}");
        };
        let url = first
            .strip_prefix("reactor-host listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .to_owned();
        Host {
            child,
            url,
            data: data.to_owned(),
            _etcd: etcd,
        }
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
        let mut command = client_command(&self.url, &self.data, args);
        command.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().expect("client starts");
        if let Some(text) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin piped")
                .write_all(text.as_bytes())
                .expect("stdin written");
        }
        child.wait_with_output().expect("client finishes")
    }

    /// Starts `reactor-host watch …` and returns its output lines as they come.
    pub fn watch(&self, args: &[&str]) -> Watcher {
        let mut child = client_command(&self.url, &self.data, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("watch starts");
        let lines = spawn_line_reader(child.stdout.take().expect("stdout piped"));
        Watcher { child, lines }
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

    /// An API client with this server's token.
    pub fn client(&self) -> reactor_host::api::Client {
        reactor_host::api::Client::new(&self.url, Some(self.token()))
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
        // A stopped process must be continued to die promptly.
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client_command(url: &str, data: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .args(["--server", url, "--data"])
        .arg(data)
        .env_remove("REACTOR_TOKEN")
        .env_remove("REACTOR_SERVER");
    command
}

/// A running `watch` command.
pub struct Watcher {
    child: Child,
    lines: LineReader,
}

impl Watcher {
    pub fn next_json(&mut self) -> serde_json::Value {
        let line = self
            .lines
            .next_within(Duration::from_secs(10))
            .expect("a watch line within 10s");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("watch line {line:?} is not JSON: {e}"))
    }

    /// Asserts nothing more arrives for a short while (to catch duplicates).
    pub fn assert_quiet(&mut self, wait: Duration) {
        if let Some(line) = self.lines.next_within(wait) {
            panic!("unexpected watch line {line}");
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct LineReader(mpsc::Receiver<String>);

impl LineReader {
    pub fn next_within(&mut self, wait: Duration) -> Option<String> {
        self.0.recv_timeout(wait).ok()
    }
}

fn spawn_line_reader(stream: impl std::io::Read + Send + 'static) -> LineReader {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    LineReader(rx)
}

/// Polls `check` until it answers `Some`, failing after `seconds` seconds.
pub fn eventually<T>(what: &str, seconds: u64, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out after {seconds}s waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The value of a Prometheus sample whose line starts with `series` (name and labels).
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find(|line| line.starts_with(series) && line[series.len()..].starts_with(' '))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// The revision `apply` printed for `what` (`KIND/NAME`), from its line
/// `KIND/NAME created|updated|unchanged (revision N)`. Tests compare revisions with each
/// other, never with fixed numbers: etcd starts higher and gives one apply one revision.
pub fn applied_revision(output: &str, what: &str) -> u64 {
    output
        .lines()
        .filter(|line| line.starts_with(&format!("{what} ")))
        .find_map(|line| {
            line.rsplit_once("(revision ")?
                .1
                .strip_suffix(')')?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no revision of {what} in apply's output: {output}"))
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts the command failed with exactly one line on stderr containing every `needle`.
pub fn assert_fails_with(output: &Output, needles: &[&str]) {
    let err = stderr(output);
    assert!(
        !output.status.success(),
        "expected failure, got success; stdout: {}",
        stdout(output)
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line on stderr, got: {err}"
    );
    for needle in needles {
        assert!(
            err.contains(needle),
            "stderr {err:?} should mention {needle:?}"
        );
    }
}

/// The three objects of the user flow (two Policies, a Gateway).
pub const THREE: &str = "\
kind: Policy
name: web-allow
labels: {app: web}
spec: {rules: [{name: http, action: allow}]}
---
kind: Policy
name: db-deny
labels: {app: db}
spec: {rules: [{name: all, action: deny}]}
---
kind: Gateway
name: edge
spec: {port: 443}
";

/// `get ARGS -o json`, parsed; fails the test if the command fails.
pub fn get_json(host: &Host, args: &[&str]) -> serde_json::Value {
    let mut full = vec!["get"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-o", "json"]);
    let out = host.cli(&full);
    assert!(out.status.success(), "get failed: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("get -o json prints JSON")
}
