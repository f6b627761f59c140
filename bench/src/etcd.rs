//! The etcd peer: Debian's etcd 3.4, one node on free loopback ports with a scratch data
//! folder, started for a run and killed when dropped.

use anyhow::{Context, bail};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running etcd; killed (and its data folder removed) on drop.
pub struct Etcd {
    child: Child,
    dir: tempfile::TempDir,
    /// `127.0.0.1:PORT` of the client API.
    pub endpoint: String,
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

impl Etcd {
    /// Starts `etcd` (from `$PATH`) and waits until it answers.
    pub async fn start() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let (client, peer) = (free_port()?, free_port()?);
        let client_url = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let log = std::fs::File::create(dir.path().join("etcd.log"))?;
        let child = Command::new("etcd")
            .arg("--name=bench")
            .arg(format!("--data-dir={}", dir.path().join("data").display()))
            .arg(format!("--listen-client-urls={client_url}"))
            .arg(format!("--advertise-client-urls={client_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=bench={peer_url}"))
            .arg("--logger=zap")
            .arg("--log-level=error")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("cannot start etcd (run scripts/setup.sh to install etcd-server)")?;
        let mut etcd = Etcd {
            child,
            dir,
            endpoint: format!("127.0.0.1:{client}"),
        };
        etcd.wait_ready().await?;
        Ok(etcd)
    }

    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait()? {
                let log =
                    std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default();
                bail!("etcd exited at start ({status}): {log}");
            }
            if let Ok(mut client) = self.client().await
                && client.status().await.is_ok()
            {
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(30) {
                bail!("etcd did not answer within 30 s");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A client of this etcd (one HTTP/2 connection, cheap to clone).
    pub async fn client(&self) -> anyhow::Result<etcd_client::Client> {
        Ok(etcd_client::Client::connect([self.endpoint.as_str()], None).await?)
    }

    /// CPU time (user + system) the etcd process has used so far.
    pub fn cpu_time(&self) -> Option<Duration> {
        crate::machine::cpu_time_of(self.child.id())
    }

    /// Resident memory of the etcd process, in bytes.
    pub fn rss(&self) -> Option<u64> {
        crate::machine::rss_of(self.child.id())
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
