//! The real `reactor-host serve` as a child process (the binary built beside this one, or
//! `$REACTOR_HOST_BIN`): started on a free port, ready once every component serves, killed
//! on drop.

use anyhow::{Context, bail};
use reactor_host::runtime::ComponentInfo;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    child: Child,
    base: String,
    token: String,
    http: reqwest::Client,
}

/// The `reactor-host` binary to run.
pub fn binary() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("REACTOR_HOST_BIN") {
        return Ok(path.into());
    }
    let beside = std::env::current_exe()?.with_file_name("reactor-host");
    if beside.exists() {
        Ok(beside)
    } else {
        bail!(
            "no reactor-host binary beside {} (build it with `cargo build --release -p reactor-host` or set REACTOR_HOST_BIN)",
            beside.display()
        )
    }
}

impl Server {
    /// Starts `serve` on `data` and `components`; returns once it prints its address.
    pub fn start(data: &Path, components: &Path) -> anyhow::Result<Self> {
        Self::start_with(data, components, &[])
    }

    /// As [`Server::start`], with more `serve` arguments (e.g. `--store etcd://…`).
    pub fn start_with(data: &Path, components: &Path, extra: &[&str]) -> anyhow::Result<Self> {
        let mut child = Command::new(binary()?)
            .arg("serve")
            .arg("--data")
            .arg(data)
            .arg("--components")
            .arg(components)
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .env("RUST_LOG", "error")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start reactor-host")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let Some(base) = line.trim().strip_prefix("reactor-host listening on ") else {
            let _ = child.kill();
            bail!("reactor-host did not start: {line:?}");
        };
        let token = std::fs::read_to_string(data.join("token"))?
            .trim()
            .to_owned();
        Ok(Server {
            base: base.to_owned(),
            child,
            token,
            http: reqwest::Client::new(),
        })
    }

    async fn components(&self) -> anyhow::Result<Vec<ComponentInfo>> {
        Ok(self
            .http
            .get(format!("{}/v1/components", self.base))
            .bearer_auth(&self.token)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?)
    }

    /// Waits until `count` components are serving.
    pub async fn wait_components(&self, count: usize) -> anyhow::Result<Vec<ComponentInfo>> {
        let started = Instant::now();
        loop {
            if let Ok(components) = self.components().await
                && components.iter().filter(|c| c.serving).count() >= count
            {
                return Ok(components);
            }
            if started.elapsed() > Duration::from_secs(120) {
                bail!("components not serving within 120 s");
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn cpu_time(&self) -> Option<Duration> {
        crate::machine::cpu_time_of(self.child.id())
    }

    pub fn rss(&self) -> Option<u64> {
        crate::machine::rss_of(self.child.id())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
