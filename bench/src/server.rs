//! The real `reactor-host serve` as a child process (testkit's launcher, with logging kept
//! to errors so that it costs nothing measurable), ready once every component serves.

use reactor_host::runtime::ComponentInfo;
use reactor_testkit::Host;
use std::path::Path;
use std::time::{Duration, Instant};

pub use reactor_testkit::reactor_host_bin as binary;

/// A running server; killed on drop.
pub struct Server {
    host: Host,
    token: String,
    http: reqwest::Client,
}

impl Server {
    /// Starts `serve` on `data` and `components`; returns once it prints its address.
    pub fn start(data: &Path, components: &Path) -> anyhow::Result<Self> {
        Self::start_with(data, components, &[])
    }

    /// As [`Server::start`], with more `serve` arguments (e.g. `--store etcd://…`).
    pub fn start_with(data: &Path, components: &Path, extra: &[&str]) -> anyhow::Result<Self> {
        // Plain HTTP: the rows compare against etcd's plain-HTTP client port.
        let mut args = vec!["--insecure-http"];
        args.extend_from_slice(extra);
        let host = Host::launch(data, components, &args, &[("RUST_LOG", "error")])?;
        let token = std::fs::read_to_string(data.join("token"))?
            .trim()
            .to_owned();
        Ok(Server {
            host,
            token,
            http: reqwest::Client::new(),
        })
    }

    async fn components(&self) -> anyhow::Result<Vec<ComponentInfo>> {
        Ok(self
            .http
            .get(format!("{}/v1/components", self.base()))
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
                anyhow::bail!("components not serving within 120 s");
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> &str {
        &self.host.url
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn cpu_time(&self) -> Option<Duration> {
        crate::machine::cpu_time_of(self.host.pid())
    }

    pub fn rss(&self) -> Option<u64> {
        crate::machine::rss_of(self.host.pid())
    }
}
