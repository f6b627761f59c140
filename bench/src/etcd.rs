//! The etcd peer: testkit's etcd (Debian's etcd 3.4, one node on free loopback ports with a
//! scratch data folder), started for a run, with its client and its process's costs.

use std::time::Duration;

/// A running etcd; killed (and its data folder removed) on drop.
pub struct Etcd {
    inner: reactor_testkit::Etcd,
    /// `127.0.0.1:PORT` of the client API.
    pub endpoint: String,
}

impl Etcd {
    /// Starts `etcd` (from `$PATH`) and waits until it answers.
    pub async fn start() -> anyhow::Result<Self> {
        let inner = tokio::task::spawn_blocking(reactor_testkit::Etcd::start).await?;
        Ok(Etcd {
            endpoint: inner.endpoint(),
            inner,
        })
    }

    /// A client of this etcd (one HTTP/2 connection, cheap to clone).
    pub async fn client(&self) -> anyhow::Result<etcd_client::Client> {
        Ok(etcd_client::Client::connect([self.endpoint.as_str()], None).await?)
    }

    /// CPU time (user + system) the etcd process has used so far.
    pub fn cpu_time(&self) -> Option<Duration> {
        crate::machine::cpu_time_of(self.inner.pid()?)
    }

    /// Resident memory of the etcd process, in bytes.
    pub fn rss(&self) -> Option<u64> {
        crate::machine::rss_of(self.inner.pid()?)
    }
}
