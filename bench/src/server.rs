//! The real `reactor-host serve` as a child process (testkit's launcher, with logging kept
//! to errors so that it costs nothing measurable), ready once every component serves.

use reactor_host::api::Client;
use reactor_host::runtime::ComponentInfo;
use reactor_testkit::Host;
use std::path::Path;
use std::time::{Duration, Instant};

pub use reactor_testkit::reactor_host_bin as binary;

/// How clients reach a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `serve --insecure-http`: the rows that compare against etcd's plain-HTTP client port.
    Plain,
    /// The default: HTTPS with the CA `serve` makes.
    Tls,
}

/// A running server; killed on drop.
pub struct Server {
    host: Host,
    token: String,
    ca_pem: Option<String>,
    http: reqwest::Client,
}

impl Server {
    /// Starts `serve` on `data` and `components` on plain HTTP; returns once it prints its
    /// address.
    pub fn start(data: &Path, components: &Path) -> anyhow::Result<Self> {
        Self::start_with(data, components, &[])
    }

    /// As [`Server::start`], with more `serve` arguments (e.g. `--store etcd://…`).
    pub fn start_with(data: &Path, components: &Path, extra: &[&str]) -> anyhow::Result<Self> {
        Self::start_on(Transport::Plain, data, components, extra)
    }

    /// As [`Server::start_with`], on `transport`.
    pub fn start_on(
        transport: Transport,
        data: &Path,
        components: &Path,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        let mut args = match transport {
            Transport::Plain => vec!["--insecure-http"],
            Transport::Tls => vec![],
        };
        args.extend_from_slice(extra);
        let host = Host::launch(data, components, &args, &[("RUST_LOG", "error")])?;
        let token = std::fs::read_to_string(data.join("token"))?
            .trim()
            .to_owned();
        let ca_pem = host.ca_pem();
        let mut http = reqwest::Client::builder();
        if let Some(pem) = &ca_pem {
            http = http.add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes())?);
        }
        Ok(Server {
            host,
            token,
            ca_pem,
            http: http.build()?,
        })
    }

    /// A client of this server presenting `token` (on TLS, trusting its CA): each has its
    /// own connections.
    pub fn client_as(&self, token: Option<String>) -> anyhow::Result<Client> {
        Ok(Client::with_ca(self.base(), token, self.ca_pem.as_deref())?)
    }

    /// A client presenting the admin's token.
    pub fn client(&self) -> anyhow::Result<Client> {
        self.client_as(Some(self.token.clone()))
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

    /// Stops the server as an operator would (SIGTERM) and waits until it exited: a restart,
    /// not a crash. Answers how it exited.
    pub fn stop(mut self) -> std::process::ExitStatus {
        self.host.stop_with("-TERM")
    }

    /// The Prometheus text of its `/metrics`.
    pub async fn metrics(&self) -> anyhow::Result<String> {
        Ok(self.client()?.get_text("/metrics").await?)
    }

    /// The launched process (its data folder, the kubeconfig and CLI commands against it).
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// `http(s)://127.0.0.1:PORT`.
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
