//! A client of the HTTP API, used by the CLI, the agent, tests and benchmarks.

use futures::{Stream, StreamExt};
use reactor_core::agent_view::AgentView;
use reactor_core::applied::Applied;
use reactor_core::feed::{FeedEvent, Snapshot};
use reactor_core::listing::Listing;
use reactor_core::object::{ApplyRequest, Object, Revision};
use reactor_core::report::AgentReport;
use reactor_core::watch_event::WatchEvent;
use reactor_core::wire::{
    AppliedBody, ApplyBody, ErrorBody, ErrorCode, FeedBody, HeartbeatBody, RecordedBody,
    RegisterBody, ReportBody, StatusBody,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach the server at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("{message}")]
    Server {
        status: u16,
        code: Option<ErrorCode>,
        message: String,
    },
    #[error("unexpected answer from the server: {0}")]
    Decode(String),
    #[error("the watch stream broke: {0}")]
    Stream(String),
    #[error("the CA certificate {what} is not PEM: {reason}")]
    Ca { what: String, reason: String },
}

impl ClientError {
    /// Whether the server's certificate was refused (signed by a CA not trusted, or not for
    /// its name): retrying does not help.
    pub fn untrusted(&self) -> bool {
        matches!(self, Self::Unreachable { reason, .. } if reason.contains("invalid peer certificate"))
    }

    /// The error code the server answered with, if it answered.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Server { code, .. } => *code,
            _ => None,
        }
    }
}

/// The innermost cause of a transport error, which is the part a user can act on.
pub(crate) fn reason(error: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Client {
    /// A client trusting no CA of its own: for `http://` servers, or `https://` ones whose
    /// certificate [`Client::with_ca`] would check.
    pub fn new(base: &str, token: Option<String>) -> Self {
        Self {
            http: reqwest::Client::new(),
            base: base.trim_end_matches('/').to_owned(),
            token,
        }
    }

    /// A client of `base` that trusts the CA certificate(s) in `ca_pem` (and only them).
    pub fn with_ca(
        base: &str,
        token: Option<String>,
        ca_pem: Option<&str>,
    ) -> Result<Self, ClientError> {
        let mut builder = reqwest::Client::builder();
        if let Some(pem) = ca_pem {
            let certificates =
                reqwest::Certificate::from_pem_bundle(pem.as_bytes()).map_err(|e| {
                    ClientError::Ca {
                        what: "given".into(),
                        reason: reason(&e),
                    }
                })?;
            if certificates.is_empty() {
                return Err(ClientError::Ca {
                    what: "given".into(),
                    reason: "no certificate in it".into(),
                });
            }
            for certificate in certificates {
                builder = builder.add_root_certificate(certificate);
            }
        }
        let http = builder.build().map_err(|e| ClientError::Ca {
            what: "given".into(),
            reason: reason(&e),
        })?;
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            token,
        })
    }

    /// The server's address.
    pub fn base(&self) -> &str {
        &self.base
    }

    pub(crate) fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let builder = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(token) => builder.bearer_auth(token),
            None => builder,
        }
    }

    async fn send(
        &self,
        builder: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ClientError> {
        let response = builder.send().await.map_err(|e| ClientError::Unreachable {
            url: self.base.clone(),
            reason: reason(&e),
        })?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        Err(match serde_json::from_str::<ErrorBody>(&text) {
            Ok(body) => ClientError::Server {
                status,
                code: Some(body.code),
                message: body.error,
            },
            Err(_) => ClientError::Server {
                status,
                code: None,
                message: format!("HTTP {status}: {}", text.trim()),
            },
        })
    }

    pub(crate) async fn json<T: DeserializeOwned>(
        &self,
        builder: reqwest::RequestBuilder,
    ) -> Result<T, ClientError> {
        let response = self.send(builder).await?;
        response
            .json()
            .await
            .map_err(|e| ClientError::Decode(reason(&e)))
    }

    /// Applies every object, all or nothing.
    pub async fn apply(&self, objects: Vec<ApplyRequest>) -> Result<Vec<Applied>, ClientError> {
        self.apply_with(objects, false).await
    }

    /// An apply, or with `dry_run` what it would do (validated and admitted, nothing stored).
    pub async fn apply_with(
        &self,
        objects: Vec<ApplyRequest>,
        dry_run: bool,
    ) -> Result<Vec<Applied>, ClientError> {
        Ok(self.apply_answer(objects, dry_run).await?.items)
    }

    /// [`Client::apply_with`] with the server's warnings (e.g. a kind without a Kind object).
    pub async fn apply_answer(
        &self,
        objects: Vec<ApplyRequest>,
        dry_run: bool,
    ) -> Result<AppliedBody, ClientError> {
        let body = ApplyBody { objects };
        let path = if dry_run {
            "/v1/dry-run/objects"
        } else {
            "/v1/objects"
        };
        let builder = self.request(reqwest::Method::POST, path);
        self.json(builder.json(&body)).await
    }

    pub async fn get(&self, kind: &str, name: &str) -> Result<Object, ClientError> {
        self.json(self.request(reqwest::Method::GET, &format!("/v1/objects/{kind}/{name}")))
            .await
    }

    pub async fn list(&self, kind: &str, selector: Option<&str>) -> Result<Listing, ClientError> {
        let mut builder = self.request(reqwest::Method::GET, &format!("/v1/objects/{kind}"));
        if let Some(selector) = selector {
            builder = builder.query(&[("selector", selector)]);
        }
        self.json(builder).await
    }

    /// Deletes; answers the object while finalizers still hold it, `None` once it is gone.
    pub async fn delete(
        &self,
        kind: &str,
        name: &str,
        revision: Option<Revision>,
    ) -> Result<Option<Object>, ClientError> {
        let mut builder = self.request(
            reqwest::Method::DELETE,
            &format!("/v1/objects/{kind}/{name}"),
        );
        if let Some(revision) = revision {
            builder = builder.query(&[("revision", revision)]);
        }
        self.json(builder).await
    }

    pub async fn set_status(
        &self,
        kind: &str,
        name: &str,
        status: Value,
        revision: Option<Revision>,
    ) -> Result<Object, ClientError> {
        let body = StatusBody { status, revision };
        self.json(
            self.request(
                reqwest::Method::PUT,
                &format!("/v1/objects/{kind}/{name}/status"),
            )
            .json(&body),
        )
        .await
    }

    /// Keeps only `finalizers` (a subset of the object's); answers the object, or `None`
    /// once a deleting object lost its last finalizer and is gone.
    pub async fn set_finalizers(
        &self,
        kind: &str,
        name: &str,
        finalizers: Vec<String>,
        revision: Option<Revision>,
    ) -> Result<Option<Object>, ClientError> {
        let body = reactor_core::wire::FinalizersBody {
            finalizers,
            revision,
        };
        self.json(
            self.request(
                reqwest::Method::PUT,
                &format!("/v1/objects/{kind}/{name}/finalizers"),
            )
            .json(&body),
        )
        .await
    }

    /// The components the server runs.
    pub async fn components(
        &self,
    ) -> Result<Vec<reactor_core::component::ComponentInfo>, ClientError> {
        self.json(self.request(reqwest::Method::GET, "/v1/components"))
            .await
    }

    /// One component the server runs.
    pub async fn component(
        &self,
        name: &str,
    ) -> Result<reactor_core::component::ComponentInfo, ClientError> {
        let path = format!("/v1/components/{name}");
        self.json(self.request(reqwest::Method::GET, &path)).await
    }

    /// Approves the version of component `name` waiting for its wider declaration; answers
    /// the component as it is then.
    pub async fn approve(
        &self,
        name: &str,
    ) -> Result<reactor_core::component::ComponentInfo, ClientError> {
        let path = format!("/v1/components/{name}/approve");
        self.json(self.request(reqwest::Method::POST, &path)).await
    }

    /// Clears the rollback of component `name`: the version rolled back may serve again.
    pub async fn clear_rollback(&self, name: &str) -> Result<bool, ClientError> {
        let path = format!("/v1/components/{name}/rollback");
        self.json(self.request(reqwest::Method::DELETE, &path))
            .await
    }

    /// GET of any JSON path with query parameters (the agent's API uses it too).
    pub async fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T, ClientError> {
        self.json(self.request(reqwest::Method::GET, path).query(query))
            .await
    }

    /// The events kept of objects of `kind` (all if `None`) named `name` (all if `None`).
    pub async fn events(
        &self,
        kind: Option<&str>,
        name: Option<&str>,
    ) -> Result<Vec<reactor_core::event::Event>, ClientError> {
        let mut query = Vec::new();
        if let Some(kind) = kind {
            query.push(("kind", kind.to_owned()));
        }
        if let Some(name) = name {
            query.push(("name", name.to_owned()));
        }
        let body: reactor_core::wire::EventsBody = self.get_json("/v1/events", &query).await?;
        Ok(body.items)
    }

    /// The log lines kept of `component` after line `after`, at most the `tail` newest.
    pub async fn logs(
        &self,
        component: &str,
        after: u64,
        tail: Option<usize>,
    ) -> Result<Vec<reactor_core::log_line::LogLine>, ClientError> {
        let mut query = vec![("after", after.to_string())];
        if let Some(tail) = tail {
            query.push(("tail", tail.to_string()));
        }
        let path = format!("/v1/components/{component}/logs");
        let body: reactor_core::wire::LogsBody = self.get_json(&path, &query).await?;
        Ok(body.lines)
    }

    /// POST of a JSON body to any path, answered with JSON.
    pub async fn post_json<B: serde::Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        self.json(self.request(reqwest::Method::POST, path).json(body))
            .await
    }

    /// Raw GET of a path, for `/metrics` and `/healthz`.
    pub async fn get_text(&self, path: &str) -> Result<String, ClientError> {
        let response = self.send(self.request(reqwest::Method::GET, path)).await?;
        response
            .text()
            .await
            .map_err(|e| ClientError::Decode(reason(&e)))
    }

    /// Follows changes after `from`, of one kind or of all.
    pub async fn watch(
        &self,
        kind: Option<&str>,
        from: Revision,
    ) -> Result<impl Stream<Item = Result<WatchEvent, ClientError>> + use<>, ClientError> {
        let path = match kind {
            Some(kind) => format!("/v1/watch/{kind}"),
            None => "/v1/watch".to_owned(),
        };
        let response = self
            .send(
                self.request(reqwest::Method::GET, &path)
                    .query(&[("from", from)]),
            )
            .await?;
        Ok(lines(response))
    }

    /// Registers this agent with its labels (again after a server restart is harmless).
    pub async fn register_agent(
        &self,
        id: &str,
        labels: BTreeMap<String, String>,
    ) -> Result<Object, ClientError> {
        self.json(
            self.request(reqwest::Method::PUT, &format!("/v1/agents/{id}"))
                .json(&RegisterBody { labels }),
        )
        .await
    }

    /// Tells the server this agent is alive for the next `ttl`.
    pub async fn heartbeat(&self, id: &str, ttl: Duration) -> Result<(), ClientError> {
        let body = HeartbeatBody {
            ttl_ms: ttl.as_millis() as u64,
        };
        let _: Value = self
            .json(
                self.request(reqwest::Method::POST, &format!("/v1/agents/{id}/heartbeat"))
                    .json(&body),
            )
            .await?;
        Ok(())
    }

    /// Every registered agent, connected or not, with what it has applied.
    pub async fn agents(&self) -> Result<Vec<AgentView>, ClientError> {
        self.json(self.request(reqwest::Method::GET, "/v1/agents"))
            .await
    }

    /// Removes agent `id`: its registration and its reports.
    pub async fn remove_agent(&self, id: &str) -> Result<(), ClientError> {
        let path = format!("/v1/agents/{id}");
        let _: Value = self
            .json(self.request(reqwest::Method::DELETE, &path))
            .await?;
        Ok(())
    }

    /// The items meant for `agent` now.
    pub async fn agent_items(&self, agent: &str) -> Result<Snapshot, ClientError> {
        self.json(
            self.request(reqwest::Method::GET, "/v1/nimbus/items")
                .query(&[("agent", agent)]),
        )
        .await
    }

    /// The changes of `agent`'s items after `from`; `known` is what it holds (key → version).
    pub async fn agent_feed(
        &self,
        agent: &str,
        from: Revision,
        known: HashMap<String, u64>,
    ) -> Result<impl Stream<Item = Result<FeedEvent, ClientError>> + use<>, ClientError> {
        let body = FeedBody {
            agent: agent.to_owned(),
            from,
            known,
        };
        let response = self
            .send(
                self.request(reqwest::Method::POST, "/v1/nimbus/watch")
                    .json(&body),
            )
            .await?;
        Ok(lines(response))
    }

    /// Sends `agent`'s reports (`complete`: on every item it holds, so that its reports on
    /// any other item are dropped); answers how many were recorded.
    pub async fn report(
        &self,
        agent: &str,
        reports: Vec<AgentReport>,
        complete: bool,
    ) -> Result<usize, ClientError> {
        let body = ReportBody {
            agent: agent.to_owned(),
            reports,
            complete,
        };
        let answer: RecordedBody = self
            .json(
                self.request(reqwest::Method::POST, "/v1/nimbus/status")
                    .json(&body),
            )
            .await?;
        Ok(answer.recorded)
    }
}

/// A response of newline-delimited JSON as a stream that ends after its first error.
fn lines<T: DeserializeOwned + Send + 'static>(
    response: reqwest::Response,
) -> impl Stream<Item = Result<T, ClientError>> + Send + use<T> {
    let state = LineState {
        bytes: Box::pin(response.bytes_stream()),
        buffer: Vec::new(),
        read: 0,
        failed: false,
    };
    futures::stream::unfold(state, |mut state| async move {
        if state.failed {
            return None;
        }
        let item = state.next_line().await?;
        state.failed = item.is_err();
        Some((item, state))
    })
}

type ByteStream = std::pin::Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// A watch response being cut into lines; the stream ends after its first error.
struct LineState {
    bytes: ByteStream,
    buffer: Vec<u8>,
    /// How much of `buffer` has been cut into lines already: a chunk of many lines is not
    /// shifted once per line.
    read: usize,
    failed: bool,
}

impl LineState {
    async fn next_line<T: DeserializeOwned>(&mut self) -> Option<Result<T, ClientError>> {
        loop {
            let unread = &self.buffer[self.read..];
            if let Some(end) = unread.iter().position(|b| *b == b'\n') {
                let line = parse_line(&unread[..end]);
                self.read += end + 1;
                return Some(line);
            }
            self.buffer.drain(..self.read);
            self.read = 0;
            match self.bytes.next().await {
                Some(Ok(chunk)) => self.buffer.extend_from_slice(&chunk),
                Some(Err(e)) => return Some(Err(ClientError::Stream(reason(&e)))),
                None if self.buffer.is_empty() => return None,
                None => return Some(Err(ClientError::Stream("the stream ended mid-line".into()))),
            }
        }
    }
}

fn parse_line<T: DeserializeOwned>(line: &[u8]) -> Result<T, ClientError> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| ClientError::Decode(e.to_string()))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        let body: ErrorBody =
            serde_json::from_value(value).map_err(|e| ClientError::Decode(e.to_string()))?;
        return Err(ClientError::Server {
            status: 200,
            code: Some(body.code),
            message: body.error,
        });
    }
    serde_json::from_value(value).map_err(|e| ClientError::Decode(e.to_string()))
}
