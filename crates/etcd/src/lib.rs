//! The etcd store: objects as JSON under one key prefix, revision = etcd's `mod_revision`.
//!
//! Every write reads the objects it touches, decides with the same rules as every backend
//! (`store::plan`) and commits in one transaction that compares the `mod_revision` of each key
//! it read, so a multi-document apply is all or nothing and a lost race is decided again.
//!
//! One difference from the embedded store, visible to users: etcd gives every key written by
//! one transaction the same revision, so the objects of one multi-document apply share one
//! revision, where the embedded store gives each change its own. Revisions still increase and
//! are never reused, and a watch from revision R sends exactly the events with a revision
//! greater than R; a watcher resuming should resume from a revision whose events it has all
//! seen (a bookmark, or the revision before the last one it saw) — see `watch`.
//! Revisions also move for keys that are not objects (ownership, the token), and etcd's first
//! revision is 1, not 0.

mod auth;
mod campaign;
mod error;
mod keys;
pub mod lease;
mod token;
mod url;
mod watch;
mod write;

pub use auth::EtcdAuth;
pub use campaign::Replica;
pub use error::EtcdError;
pub use keys::Keys;
pub use token::{share_ca, share_token};
pub use url::EtcdUrl;
pub use write::Guard;

use async_trait::async_trait;
use error::{cause, is_compacted, revision};
use etcd_client::{Client, ConnectOptions, GetOptions, WatchOptions};
use reactor_core::object::{ApplyRequest, Object, Revision, Selector};
use reactor_store::{
    Applied, Chunks, Listing, Page, PageQuery, Store, StoreError, WatchStream, Write, Written,
    plan_apply, plan_writes, targets,
};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use watch::WatchSettings;
use write::{Limits, Recent, write};

/// Tuning of the etcd store.
#[derive(Debug, Clone)]
pub struct EtcdStoreOptions {
    /// How often an idle watch is sent a bookmark.
    pub bookmark_interval: Duration,
    /// The pause before a broken watch stream is opened again.
    pub watch_retry: Duration,
    /// How long connecting may take before the store refuses to start.
    pub connect_timeout: Duration,
    /// The largest object (spec, status and all, as JSON) a write may store.
    pub max_object_bytes: usize,
    /// The most operations one etcd transaction may hold: etcd's `--max-txn-ops` (default
    /// 128). A transaction of more objects is refused with an error naming the limit.
    pub max_txn_ops: usize,
    /// The largest etcd request: etcd's `--max-request-bytes` (default 1.5 MiB).
    pub max_request_bytes: usize,
    /// TLS and etcd's user, for every connection (default: plain http, no user).
    pub auth: EtcdAuth,
}

impl Default for EtcdStoreOptions {
    fn default() -> Self {
        Self {
            bookmark_interval: Duration::from_secs(10),
            watch_retry: Duration::from_millis(200),
            connect_timeout: Duration::from_secs(5),
            max_object_bytes: reactor_store::DEFAULT_MAX_OBJECT_BYTES,
            max_txn_ops: 128,
            max_request_bytes: 1536 << 10,
            auth: EtcdAuth::default(),
        }
    }
}

/// A [`Store`] in an etcd cluster.
#[derive(Clone)]
pub struct EtcdStore {
    client: Client,
    keys: Keys,
    options: EtcdStoreOptions,
    /// The guard added to every write, on the handle a fenced replica writes through; a
    /// current `None` (no live lease) refuses every write.
    fence: Option<tokio::sync::watch::Receiver<Option<Guard>>>,
    /// What this process wrote last, shared by every handle: writes plan from it.
    recent: Arc<Recent>,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("prefix", &self.keys.prefix())
            .finish()
    }
}

impl EtcdStore {
    /// Connects to the cluster named by `url` (over TLS, as etcd's user, as `options.auth`
    /// says) and checks that it answers within `options.connect_timeout`.
    pub async fn connect(url: &EtcdUrl, options: EtcdStoreOptions) -> Result<Self, EtcdError> {
        let connect = ConnectOptions::new()
            .with_connect_timeout(options.connect_timeout)
            // Dead connections are noticed by keep-alives, so a watch on one breaks and resumes.
            .with_keep_alive(Duration::from_secs(5), Duration::from_secs(5))
            .with_keep_alive_while_idle(true);
        let connect = options.auth.apply(connect)?;
        let endpoints = options.auth.endpoints(&url.endpoints);
        let failed = |cause: String| EtcdError::Connect {
            endpoints: endpoints.join(","),
            cause,
        };
        let timeout = options.connect_timeout;
        let late = || {
            failed(format!(
                "no answer within {}",
                humantime::format_duration(timeout)
            ))
        };
        // With a user, connecting authenticates: a refused TLS handshake must not hang it.
        let client = tokio::time::timeout(timeout, Client::connect(&endpoints, Some(connect)))
            .await
            .map_err(|_| late())?
            .map_err(|e| failed(cause(&e)))?;
        let store = Self {
            client,
            keys: Keys::new(&url.prefix),
            options,
            fence: None,
            recent: Arc::default(),
        };
        tokio::time::timeout(timeout, store.current_revision())
            .await
            .map_err(|_| late())?
            .map_err(|e| failed(cause(&e)))?;
        Ok(store)
    }

    /// The etcd client, for what lives beside the objects (leases, ownership, the token).
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// A handle whose writes land only while the current guard key still exists as it was.
    pub fn fenced(&self, fence: tokio::sync::watch::Receiver<Option<Guard>>) -> Self {
        Self {
            fence: Some(fence),
            ..self.clone()
        }
    }

    /// The guards of the next write; refused at once while a fenced handle has no lease.
    fn guards(&self) -> Result<Vec<Guard>, StoreError> {
        let Some(fence) = &self.fence else {
            return Ok(Vec::new());
        };
        let current = fence.borrow().clone();
        current.map(|g| vec![g]).ok_or_else(|| {
            EtcdError::NotOwner {
                key: self.keys.replicas(),
            }
            .into()
        })
    }

    async fn current_revision(&self) -> Result<i64, etcd_client::Error> {
        let options = GetOptions::new().with_count_only();
        let response = self
            .client
            .clone()
            .get(self.keys.token(), Some(options))
            .await?;
        Ok(response.header().map_or(0, |h| h.revision()))
    }

    fn object_key(&self, kind: &str, name: &str) -> String {
        self.keys.object(kind, name)
    }

    /// The limits every write is checked against before it is sent.
    fn limits(&self) -> Limits {
        Limits {
            max_object_bytes: self.options.max_object_bytes,
            max_txn_ops: self.options.max_txn_ops,
            max_request_bytes: self.options.max_request_bytes,
        }
    }

    /// The revision etcd has compacted up to, learnt from the watch it refuses.
    async fn compacted_at(&self, from: Revision) -> Revision {
        let learn = async {
            let start = i64::try_from(from.checked_add(1)?).ok()?;
            let options = WatchOptions::new().with_start_revision(start);
            let mut stream = self
                .client
                .clone()
                .watch(self.keys.token(), Some(options))
                .await
                .ok()?;
            while let Ok(Some(response)) = stream.message().await {
                if response.compact_revision() != 0 {
                    return revision(response.compact_revision()).ok();
                }
            }
            None
        };
        tokio::time::timeout(Duration::from_secs(5), learn)
            .await
            .ok()
            .flatten()
            .unwrap_or(from.saturating_add(1))
    }
}

#[async_trait]
impl Store for EtcdStore {
    async fn get(&self, kind: &str, name: &str) -> Result<Option<Object>, StoreError> {
        let response = self
            .client
            .clone()
            .get(self.object_key(kind, name), None)
            .await
            .map_err(EtcdError::from)?;
        match response.kvs().first() {
            Some(kv) => Ok(Some(keys::decode(kv)?)),
            None => Ok(None),
        }
    }

    async fn list(&self, kind: &str, selector: &Selector) -> Result<Listing, StoreError> {
        let options = GetOptions::new().with_prefix();
        let response = self
            .client
            .clone()
            .get(self.keys.objects(Some(kind)), Some(options))
            .await
            .map_err(EtcdError::from)?;
        let header = response.header().ok_or(EtcdError::NoHeader)?;
        let listed_at = revision(header.revision())?;
        let mut items = Vec::with_capacity(response.kvs().len());
        for kv in response.kvs() {
            let object = keys::decode(kv)?;
            if selector.matches(&object.labels) {
                items.push(object);
            }
        }
        Ok(Listing {
            items,
            revision: listed_at,
        })
    }

    /// A page read by ranges of etcd's keys from the page's first name, each at the revision
    /// of the first (a later page: its first page's, until etcd compacts it).
    async fn list_page(
        &self,
        kind: &str,
        selector: &Selector,
        query: PageQuery<'_>,
    ) -> Result<Page, StoreError> {
        let prefix = self.keys.objects(Some(kind));
        // The kind's keys end with its prefix's last byte (`/`) raised by one.
        let end = format!("{}0", &prefix[..prefix.len() - 1]);
        // Names hold no NUL: the first key after a name's is that key and a NUL.
        let mut start = match query.after {
            Some(after) => format!("{}\0", self.object_key(kind, after)),
            None => prefix,
        };
        // Enough for the page and one more (whether objects remain), in ranges of a bounded
        // size when a selector may skip many.
        let batch = query
            .limit
            .map(|limit| limit.saturating_add(1).clamp(64, 4096));
        let mut at = query.at;
        let mut items: Vec<Object> = Vec::new();
        let full = |items: &Vec<Object>| query.limit.is_some_and(|limit| items.len() > limit);
        loop {
            let mut options = GetOptions::new().with_range(end.clone());
            if let Some(batch) = batch {
                options = options.with_limit(i64::try_from(batch).unwrap_or(i64::MAX));
            }
            if let Some(at) = at {
                options = options.with_revision(i64::try_from(at).unwrap_or(i64::MAX));
            }
            let response = match self.client.clone().get(start.clone(), Some(options)).await {
                Ok(response) => response,
                Err(e) if is_compacted(&e) => {
                    return Err(StoreError::SnapshotGone {
                        revision: at.unwrap_or(0),
                    });
                }
                Err(e) => return Err(EtcdError::from(e).into()),
            };
            if at.is_none() {
                let header = response.header().ok_or(EtcdError::NoHeader)?;
                at = Some(revision(header.revision())?);
            }
            for kv in response.kvs() {
                let object = keys::decode(kv)?;
                if selector.matches(&object.labels) {
                    items.push(object);
                    if full(&items) {
                        break;
                    }
                }
            }
            match response.kvs().last() {
                Some(last) if response.more() && !full(&items) => {
                    start = format!("{}\0", String::from_utf8_lossy(last.key()));
                }
                _ => break,
            }
        }
        let more = full(&items);
        if let Some(limit) = query.limit {
            items.truncate(limit);
        }
        Ok(Page {
            items,
            revision: at.unwrap_or(0),
            more,
        })
    }

    /// Every page read as [`Store::list_page`] reads it, at the first one's revision: a list
    /// of any size is read a page at a time (until etcd compacts that revision).
    fn list_chunks(self: Arc<Self>, kind: &str, selector: &Selector, chunk: usize) -> Chunks {
        reactor_store::chunks::through_pages(self, kind, selector, chunk)
    }

    async fn apply(&self, requests: Vec<ApplyRequest>) -> Result<Vec<Applied>, StoreError> {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let mut seen = HashSet::new();
        for (i, request) in requests.iter().enumerate() {
            if !seen.insert(request.key()) {
                return Err(StoreError::in_document(
                    i + 1,
                    StoreError::Invalid(format!("{} appears twice in one apply", request.key())),
                ));
            }
        }
        let targets: Vec<String> = requests
            .iter()
            .map(|r| self.object_key(&r.kind, &r.name))
            .collect();
        let written = write(
            &self.client,
            &self.recent,
            &self.limits(),
            &targets,
            &self.guards()?,
            &|current| {
                requests
                    .iter()
                    .zip(current)
                    .enumerate()
                    .map(|(i, (request, current))| {
                        plan_apply(current.as_ref(), request.clone())
                            .map_err(|e| StoreError::in_document(i + 1, e))
                    })
                    .collect()
            },
        )
        .await?;
        written.into_iter().map(Applied::try_from).collect()
    }

    async fn commit(&self, writes: Vec<Write>) -> Result<Vec<Written>, StoreError> {
        if writes.is_empty() {
            return Ok(Vec::new());
        }
        let keys = targets(&writes);
        let etcd_keys: Vec<String> = keys
            .iter()
            .map(|key| self.object_key(key.kind(), key.name()))
            .collect();
        write(
            &self.client,
            &self.recent,
            &self.limits(),
            &etcd_keys,
            &self.guards()?,
            &|current| plan_writes(writes.clone(), &keys, current),
        )
        .await
    }

    async fn watch(&self, kind: Option<&str>, from: Revision) -> Result<WatchStream, StoreError> {
        let current = revision(self.current_revision().await.map_err(EtcdError::from)?)?;
        if from > current {
            return Err(StoreError::Future {
                requested: from,
                latest: current,
            });
        }
        if from < current {
            // Refuse a compacted start now rather than on the stream, as the embedded store does.
            let at = i64::try_from(from.saturating_add(1))
                .map_err(|_| StoreError::Invalid(format!("revision {from} is too large")))?;
            let options = GetOptions::new().with_count_only().with_revision(at);
            if let Err(e) = self
                .client
                .clone()
                .get(self.keys.token(), Some(options))
                .await
            {
                if is_compacted(&e) {
                    return Err(StoreError::Compacted {
                        requested: from,
                        oldest: self.compacted_at(from).await,
                    });
                }
                return Err(EtcdError::from(e).into());
            }
        }
        let settings = WatchSettings {
            bookmark_interval: self.options.bookmark_interval,
            retry: self.options.watch_retry,
        };
        Ok(watch::start(
            self.client.clone(),
            self.keys.clone(),
            kind.map(str::to_owned),
            from,
            settings,
        ))
    }

    async fn revision(&self) -> Result<Revision, StoreError> {
        Ok(revision(
            self.current_revision().await.map_err(EtcdError::from)?,
        )?)
    }
}
