//! The errors of the etcd backend, and how they read as store errors.

use reactor_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    #[error("invalid etcd store url {url:?}: {reason}")]
    Url { url: String, reason: String },
    /// The cause is the whole chain of the client's error, in one line.
    #[error("cannot reach etcd at {endpoints}: {cause}")]
    Connect { endpoints: String, cause: String },
    #[error("cannot read the etcd {what} file {}: {source}", path.display())]
    File {
        what: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// Settings of the connection that do not go together.
    #[error("{0}")]
    Config(String),
    #[error("etcd request failed: {0}")]
    Request(#[from] etcd_client::Error),
    #[error("etcd answered without a response header")]
    NoHeader,
    #[error("etcd answered unexpectedly: {0}")]
    Unexpected(String),
    #[error("etcd answered a negative revision {0}")]
    BadRevision(i64),
    #[error("corrupt record at {key}: {reason}")]
    Corrupt { key: String, reason: String },
    #[error("gave up writing {key} after {attempts} attempts lost to concurrent writers")]
    Contention { key: String, attempts: usize },
    #[error("etcd cancelled the watch: {0}")]
    WatchCancelled(String),
    #[error("this replica does not own {key} (its lease was lost or the work moved)")]
    NotOwner { key: String },
}

impl From<EtcdError> for StoreError {
    fn from(e: EtcdError) -> Self {
        StoreError::Backend(e.to_string())
    }
}

pub use reactor_core::one_line::one_line;

/// Why a request of the client failed, in one line: the message of etcd's answer or the
/// chain of causes of a transport error (a refused connection, a certificate not trusted).
pub fn cause(error: &etcd_client::Error) -> String {
    match error {
        etcd_client::Error::TransportError(e) => one_line(e),
        etcd_client::Error::GRpcStatus(status) => {
            let mut line = match status.message() {
                "" => format!("{:?}", status.code()),
                message => message.to_owned(),
            };
            if let Some(source) = std::error::Error::source(status) {
                let more = one_line(source);
                if !line.contains(&more) {
                    line = format!("{line}: {more}");
                }
            }
            line.replace('\n', " ")
        }
        other => other.to_string().replace('\n', " "),
    }
}

/// Whether etcd refused a read because the revision asked for has been compacted. The gRPC
/// status is matched by its message: etcd-client does not re-export tonic's status codes.
pub fn is_compacted(e: &etcd_client::Error) -> bool {
    matches!(e, etcd_client::Error::GRpcStatus(_))
        && e.to_string()
            .contains("required revision has been compacted")
}

/// A revision from etcd as ours; etcd never sends negative ones, but it is network data.
pub fn revision(raw: i64) -> Result<u64, EtcdError> {
    u64::try_from(raw).map_err(|_| EtcdError::BadRevision(raw))
}
