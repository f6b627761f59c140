//! A real etcd: Debian's `etcd` binary on free loopback ports with a temporary data folder,
//! killed when dropped. Shared by the store tests, the tests that drive servers on etcd and
//! the benchmarks.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running etcd.
pub struct Etcd {
    child: Option<Child>,
    dir: PathBuf,
    /// The temporary folder `dir` is in, when the etcd's data is not kept.
    _temp: Option<tempfile::TempDir>,
    client_port: u16,
    peer_port: u16,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Etcd {
    /// Starts etcd and waits until it reports healthy; panics with its log otherwise.
    pub fn start() -> Etcd {
        let temp = tempfile::tempdir().expect("etcd tempdir");
        Self::start_at(temp.path().to_owned(), Some(temp))
    }

    /// Starts etcd on the data in `dir` (created if missing), which outlives it: a later
    /// etcd on the same `dir` has the same keys.
    pub fn start_in(dir: PathBuf) -> Etcd {
        std::fs::create_dir_all(&dir).expect("etcd folder");
        Self::start_at(dir, None)
    }

    fn start_at(dir: PathBuf, temp: Option<tempfile::TempDir>) -> Etcd {
        let mut etcd = Etcd {
            child: None,
            dir,
            _temp: temp,
            client_port: free_port(),
            peer_port: free_port(),
        };
        etcd.launch();
        etcd
    }

    /// `host:port` of the client endpoint.
    pub fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.client_port)
    }

    /// The `--store` URL of this etcd, with our objects under `prefix` (e.g. `/reactor`).
    pub fn url(&self, prefix: &str) -> String {
        format!("etcd://{}{prefix}", self.endpoint())
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("etcd.log")
    }

    fn launch(&mut self) {
        let client = format!("http://127.0.0.1:{}", self.client_port);
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("etcd log file");
        let child = Command::new("etcd")
            .arg("--name=test")
            .arg(format!("--data-dir={}", self.dir.join("data").display()))
            .arg(format!("--listen-client-urls={client}"))
            .arg(format!("--advertise-client-urls={client}"))
            .arg(format!("--listen-peer-urls={peer}"))
            .arg(format!("--initial-advertise-peer-urls={peer}"))
            .arg(format!("--initial-cluster=test={peer}"))
            .arg("--logger=zap")
            .arg("--log-level=warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("etcd starts (is etcd-server installed? run scripts/setup.sh)");
        self.child = Some(child);
        self.wait_healthy();
    }

    fn wait_healthy(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if self.healthy() {
                return;
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!("etcd exited with {status}: {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("etcd not healthy within 30s: {}", self.log());
    }

    fn healthy(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.client_port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        if stream
            .write_all(b"GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.contains("\"health\":\"true\"")
    }

    /// The process id (for CPU time and memory read by the benchmarks), if it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// What etcd logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// `kill -9` and start again on the same ports and data: every open stream breaks.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    /// `kill -9`; the data stays for a [`Etcd::restart`].
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.kill();
    }
}
