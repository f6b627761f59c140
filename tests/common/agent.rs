//! `reactor-host agent` processes for tests: start, kill -9, restart, SIGSTOP / SIGCONT, and
//! the files they applied under their southbound folder.

use super::{BIN, Host};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// An agent process with its own data and southbound folders.
pub struct Agent {
    child: Option<Child>,
    pub id: String,
    pub data: PathBuf,
    pub southbound: PathBuf,
    args: Vec<String>,
}

impl Agent {
    /// Starts agent `id` with `labels` (`k=v`) against `host`, heartbeats every 200 ms.
    pub fn start(host: &Host, dir: &Path, id: &str, labels: &[&str]) -> Agent {
        let mut args: Vec<String> = vec![
            "agent".into(),
            "--id".into(),
            id.into(),
            "--server".into(),
            host.url.clone(),
            "--token".into(),
            host.token(),
            "--heartbeat".into(),
            "200ms".into(),
        ];
        for label in labels {
            args.push("--label".into());
            args.push((*label).into());
        }
        let data = dir.join(format!("{id}-data"));
        let southbound = dir.join(format!("{id}-southbound"));
        let mut agent = Agent {
            child: None,
            id: id.to_owned(),
            data,
            southbound,
            args,
        };
        agent.spawn();
        agent
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data.with_extension("log"))
            .expect("agent log file");
        let child = Command::new(BIN)
            .args(&self.args)
            .arg("--data")
            .arg(&self.data)
            .arg("--southbound")
            .arg(&self.southbound)
            .env_remove("REACTOR_TOKEN")
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
