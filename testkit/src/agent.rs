//! `reactor-host agent` processes for tests: start, kill -9, restart, SIGSTOP / SIGCONT, and
//! the files they applied under their southbound folder.

use crate::binary::reactor_host_bin;
use crate::components::install;
use crate::eventually::eventually;
use crate::host::{Host, exited_within};
use crate::output::stderr;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// An agent process with its own data and southbound folders.
pub struct Agent {
    child: Option<Child>,
    pub id: String,
    pub data: PathBuf,
    pub southbound: PathBuf,
    /// The server's data folder: `scheduler` finds the admin's token and the CA there.
    pub host_data: PathBuf,
    args: Vec<String>,
    /// The agent's credential, given by environment (never on the command line): a join
    /// token (used at the first start only), or the server's token on plain HTTP.
    env: Vec<(String, String)>,
    /// Processes started so far, so that the API address is read from the newest one's log.
    spawns: usize,
}

impl Agent {
    /// Starts agent `id` with `labels` (`k=v`) against `host`, heartbeats every 200 ms.
    pub fn start(host: &Host, dir: &Path, id: &str, labels: &[&str]) -> Agent {
        Self::start_with(host, dir, id, labels, &[])
    }

    /// Starts an agent applying through the KV scheduler: the descriptor components
    /// `descriptors` (built examples or guests) in its own descriptors folder, its API on a
    /// free loopback port (see [`Agent::api_url`]), and `extra` arguments.
    pub fn with_descriptors(
        host: &Host,
        dir: &Path,
        id: &str,
        labels: &[&str],
        descriptors: &[&str],
        extra: &[&str],
    ) -> Agent {
        let folder = dir.join(format!("{id}-descriptors"));
        for name in descriptors {
            install(name, &folder);
        }
        let folder = folder.to_string_lossy().into_owned();
        let mut args = vec!["--descriptors", folder.as_str(), "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        Self::start_with(host, dir, id, labels, &args)
    }

    /// Starts agent `id` with extra command-line arguments. On TLS it joins with a join token
    /// made for it (carrying `labels`); on plain HTTP it presents the server's token.
    pub fn start_with(host: &Host, dir: &Path, id: &str, labels: &[&str], extra: &[&str]) -> Agent {
        let mut args: Vec<String> = vec![
            "agent".into(),
            "--id".into(),
            id.into(),
            "--server".into(),
            host.url.clone(),
            "--heartbeat".into(),
            "200ms".into(),
        ];
        let env = if host.url.starts_with("https://") {
            vec![("REACTOR_JOIN_TOKEN".to_owned(), host.join_token(id, labels))]
        } else {
            for label in labels {
                args.push("--label".into());
                args.push((*label).into());
            }
            if extra.contains(&"--listen") {
                args.push("--insecure-http".into());
            }
            vec![("REACTOR_TOKEN".to_owned(), host.token())]
        };
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        let data = dir.join(format!("{id}-data"));
        let southbound = dir.join(format!("{id}-southbound"));
        let mut agent = Agent {
            child: None,
            id: id.to_owned(),
            data,
            southbound,
            host_data: host.data.clone(),
            args,
            env,
            spawns: 0,
        };
        agent.spawn();
        agent
    }

    fn spawn(&mut self) {
        self.spawns += 1;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data.with_extension("log"))
            .expect("agent log file");
        let child = Command::new(reactor_host_bin())
            .args(&self.args)
            .arg("--data")
            .arg(&self.data)
            .arg("--southbound")
            .arg(&self.southbound)
            .env_remove("REACTOR_TOKEN")
            .env_remove("REACTOR_JOIN_TOKEN")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("agent starts");
        self.child = Some(child);
    }

    /// `kill -9`: the agent gets no chance to say goodbye.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL");
            child.wait().expect("reaped");
        }
    }

    /// Sends `signal` (e.g. `-TERM`, `-INT`) and waits for the agent to exit; fails the test
    /// if it still runs after a minute (a bound, not a measure). Answers how it exited;
    /// [`Agent::restart`] starts it again.
    pub fn stop_with(&mut self, signal: &str) -> std::process::ExitStatus {
        self.signal(signal);
        let mut child = self.child.take().expect("running");
        exited_within(
            &mut child,
            &format!("agent {} after kill {signal}", self.id),
            60,
        )
    }

    /// Starts the agent again on the same folders.
    pub fn restart(&mut self) {
        self.kill9();
        self.spawn();
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("running").id().to_string();
        let status = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal} {pid}");
    }

    /// SIGSTOP: the process freezes with its connection open.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    /// The items applied, as paths relative to the southbound folder, without `.json`.
    pub fn applied(&self) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        collect(&self.southbound, &self.southbound, &mut found);
        found
    }

    /// The address of the agent's API, from its log line `agent API listening` (that of
    /// the newest process: a restarted agent listens on a new port).
    pub fn api_url(&self) -> String {
        eventually("the agent's API address in its log", 60, || {
            let log = self.log();
            let lines: Vec<&str> = log
                .lines()
                .filter(|l| l.contains("agent API listening"))
                .collect();
            if lines.len() < self.spawns {
                return None;
            }
            lines.last().and_then(|l| {
                let scheme = if l.contains("(https)") {
                    "https"
                } else {
                    "http"
                };
                let addr = l.split("addr=").nth(1)?.split_whitespace().next()?;
                Some(format!("{scheme}://{addr}"))
            })
        })
    }

    /// `reactor-host scheduler --agent <its API> ARGS…`.
    pub fn scheduler(&self, args: &[&str]) -> std::process::Output {
        Command::new(reactor_host_bin())
            .arg("scheduler")
            .args(["--agent", &self.api_url(), "--data"])
            .arg(&self.host_data)
            .args(args)
            .env_remove("REACTOR_TOKEN")
            .env_remove("REACTOR_AGENT")
            .output()
            .expect("scheduler command runs")
    }

    /// The scheduler's status of `key` (`reactor-host scheduler status KEY --json`).
    pub fn status(&self, key: &str) -> serde_json::Value {
        let out = self.scheduler(&["status", key, "--json"]);
        assert!(out.status.success(), "scheduler status: {}", stderr(&out));
        let statuses: Vec<serde_json::Value> =
            serde_json::from_slice(&out.stdout).expect("status --json prints JSON");
        statuses.into_iter().next().expect("one status")
    }

    /// Waits until `key` is in `state` (e.g. `CONFIGURED`); answers its status.
    pub fn wait_state(&self, key: &str, state: &str) -> serde_json::Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let status = self.status(key);
            if status["state"] == state {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{key} is {status} on {}, not {state}; its log:\n{}",
                self.id,
                self.log()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// The files a descriptor wrote in its own folder `<southbound>/<descriptor>/`, as paths
    /// relative to it, without `.json` (hidden files, such as failure injections, left out).
    pub fn files_of(&self, descriptor: &str) -> BTreeSet<String> {
        let root = self.southbound.join(descriptor);
        let mut found = BTreeSet::new();
        collect(&root, &root, &mut found);
        found.retain(|f| !f.split('/').any(|part| part.starts_with('.')));
        found
    }

    /// What the agent logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data.with_extension("log")).unwrap_or_default()
    }

    /// The value the agent applied for `key`.
    pub fn value(&self, key: &str) -> Option<serde_json::Value> {
        let text = std::fs::read(self.southbound.join(format!("{key}.json"))).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

fn collect(root: &Path, dir: &Path, found: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, found);
        } else if let Some(relative) = path
            .strip_prefix(root)
            .ok()
            .and_then(|p| p.to_str())
            .and_then(|p| p.strip_suffix(".json"))
        {
            found.insert(relative.to_owned());
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            // A stopped process must be continued to die promptly.
            let _ = Command::new("kill")
                .args(["-CONT", &child.id().to_string()])
                .status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
