//! A client of the agent's own API (`/scheduler/...`), for the CLI and tests.

use super::http::{NotifyRequest, ResyncRequest, TxnAnswer, TxnRequest};
use reactor_client::{Client, ClientError};
use reactor_kvscheduler::{Dump, DumpFilter, GraphNode, TimelineEntry, TxnRecord, ValueStatus};
use reactor_runtime::ComponentInfo;
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct SchedulerClient {
    client: Client,
}

impl SchedulerClient {
    /// `agent`: the address the agent's `--listen` gave, e.g. `http://127.0.0.1:7801`.
    pub fn new(agent: &str, token: Option<String>) -> Self {
        Self {
            client: Client::new(agent, token),
        }
    }

    /// Over `client`, made for the agent's address with the CA to check it against.
    pub fn with_client(client: Client) -> Self {
        Self { client }
    }

    pub async fn dump(&self) -> Result<Dump, ClientError> {
        self.client.get_json("/scheduler/dump", &[]).await
    }

    /// The views, descriptor and key prefix `filter` asks for.
    pub async fn dump_filtered(&self, filter: &DumpFilter) -> Result<Dump, ClientError> {
        let mut query: Vec<(&str, String)> = Vec::new();
        if let Some(view) = filter.view {
            let view = serde_json::to_value(view).unwrap_or_default();
            query.push(("view", view.as_str().unwrap_or_default().to_owned()));
        }
        if let Some(descriptor) = &filter.descriptor {
            query.push(("descriptor", descriptor.clone()));
        }
        if let Some(prefix) = &filter.key_prefix {
            query.push(("key-prefix", prefix.clone()));
        }
        self.client.get_json("/scheduler/dump", &query).await
    }

    /// One value's status, or every value's.
    pub async fn status(&self, key: Option<&str>) -> Result<Vec<ValueStatus>, ClientError> {
        let query: Vec<(&str, String)> = key.map(|k| ("key", k.to_owned())).into_iter().collect();
        self.client.get_json("/scheduler/status", &query).await
    }

    pub async fn history(&self, seq: Option<u64>) -> Result<Vec<TxnRecord>, ClientError> {
        let query: Vec<(&str, String)> = seq.map(|s| ("seq", s.to_string())).into_iter().collect();
        self.client.get_json("/scheduler/txn-history", &query).await
    }

    /// Records of transactions started within `since..=until` (seconds since the epoch).
    pub async fn history_between(
        &self,
        since: Option<u64>,
        until: Option<u64>,
    ) -> Result<Vec<TxnRecord>, ClientError> {
        let mut query: Vec<(&str, String)> = Vec::new();
        query.extend(since.map(|s| ("since", s.to_string())));
        query.extend(until.map(|u| ("until", u.to_string())));
        self.client.get_json("/scheduler/txn-history", &query).await
    }

    pub async fn timeline(&self, key: &str) -> Result<Vec<TimelineEntry>, ClientError> {
        self.client
            .get_json("/scheduler/key-timeline", &[("key", key.to_owned())])
            .await
    }

    pub async fn graph(&self) -> Result<Vec<GraphNode>, ClientError> {
        self.client.get_json("/scheduler/graph", &[]).await
    }

    pub async fn descriptors(&self) -> Result<Vec<ComponentInfo>, ClientError> {
        self.client.get_json("/scheduler/descriptors", &[]).await
    }

    pub async fn resync(&self) -> Result<TxnAnswer, ClientError> {
        self.resync_with(&ResyncRequest::default()).await
    }

    /// A resync as `request` asks (a full one when it carries values).
    pub async fn resync_with(&self, request: &ResyncRequest) -> Result<TxnAnswer, ClientError> {
        self.client.post_json("/scheduler/resync", request).await
    }

    /// A southbound notification: `None` says the value went away.
    pub async fn notify(&self, key: &str, value: Option<Value>) -> Result<TxnAnswer, ClientError> {
        let body = NotifyRequest {
            key: key.to_owned(),
            value,
        };
        self.client.post_json("/scheduler/notify", &body).await
    }

    pub async fn txn(&self, request: &TxnRequest) -> Result<TxnAnswer, ClientError> {
        self.client.post_json("/scheduler/txn", request).await
    }
}
