//! The errors of the etcd backend, and how they read as store errors.

use reactor_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    #[error("invalid etcd store url {url:?}: {reason}")]
    Url { url: String, reason: String },
    #[error("cannot reach etcd at {endpoints}: {source}")]
    Connect {
        endpoints: String,
        source: etcd_client::Error,
    },
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
