//! The JSON bodies of the HTTP API, shared by the server and the client.

use crate::applied::Applied;
use crate::object::{ApplyRequest, Revision};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `POST /v1/objects`: apply several objects, all or nothing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ApplyBody {
    /// Object documents; `status` and `meta` are accepted and ignored but for `meta.revision`.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::object::InputDocument>))]
    pub objects: Vec<ApplyRequest>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppliedBody {
    pub items: Vec<Applied>,
    /// Things the client should tell its user, one line each (e.g. a kind without a Kind
    /// object); the apply went ahead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// `PUT /v1/objects/{kind}/{name}/status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct StatusBody {
    pub status: Value,
    /// When set, the status is written only if the object is at this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<u64>))]
    pub revision: Option<Revision>,
}

/// `PUT /v1/objects/{kind}/{name}/finalizers`: the finalizers to keep, a subset of the
/// current ones (a client can remove a finalizer, never add one).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FinalizersBody {
    pub finalizers: Vec<String>,
    /// When set, the finalizers are written only if the object is at this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<u64>))]
    pub revision: Option<Revision>,
}

/// What every failed request answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub error: String,
    pub code: ErrorCode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    Invalid,
    NotFound,
    Conflict,
    Compacted,
    Unauthorized,
    /// The caller may not write this (the host's own kinds; another owner's object).
    Forbidden,
    Internal,
}

/// The last line of a watch stream that the server had to end.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WatchErrorLine {
    #[serde(rename = "type")]
    pub line_type: String,
    pub error: String,
    pub code: ErrorCode,
}

/// `PUT /v1/agents/{id}`: an agent registers (or re-registers) with its labels.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RegisterBody {
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, String>,
}

/// `POST /v1/agents/{id}/heartbeat`: the agent is alive, and counts as connected for `ttl_ms`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HeartbeatBody {
    /// From 1 ms to a day.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 86_400_000))]
    pub ttl_ms: u64,
}

/// `POST /v1/nimbus/watch`: follow an agent's items after `from`; `known` is what the agent
/// holds (key → version), so that items no longer meant for it are sent as deletes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FeedBody {
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length = 63)
    )]
    pub agent: String,
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub from: Revision,
    #[serde(default)]
    pub known: std::collections::HashMap<String, u64>,
}

/// `POST /v1/nimbus/status`: an agent's reports on its items.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportBody {
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length = 63)
    )]
    pub agent: String,
    /// `{key, agent, state, message?, revision}` each.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub reports: Vec<crate::report::AgentReport>,
    /// These are all the items the agent holds (it sends them so when it connects): its
    /// reports on any other item are dropped, whichever way they were missed (a `removed`
    /// lost with a crash, an item withdrawn while a report on it was being recorded).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub complete: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecordedBody {
    /// Reports written (those on items withdrawn meanwhile are dropped).
    pub recorded: usize,
}

/// `GET /v1/events`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventsBody {
    /// Oldest last seen first.
    pub items: Vec<crate::event::Event>,
}

/// `GET /v1/components/{name}/logs`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogsBody {
    /// Oldest first.
    pub lines: Vec<crate::log_line::LogLine>,
}

/// `GET /v1/whoami`: who the request's credential is.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WhoAmIBody {
    /// `user:NAME` or `agent:ID`.
    pub identity: String,
    /// A user's role (`admin`, `edit`, `view`); absent for an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// `POST /v1/users`: a new user with a role.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UserBody {
    pub name: String,
    /// `admin`, `edit` or `view`.
    pub role: String,
}

/// A user as `GET /v1/users` lists it (never its secret).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserView {
    pub name: String,
    pub role: String,
    /// The credential's id: the part of the token before the dot, after `rhu_`.
    pub id: String,
}

/// `POST /v1/users`' answer: the token is shown this once and never stored.
#[derive(Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserCreatedBody {
    pub name: String,
    pub role: String,
    pub id: String,
    pub token: String,
}

/// `POST /v1/tokens`: a join token for one agent id and the labels it will carry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JoinTokenBody {
    pub agent: String,
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, String>,
    /// How long the token may be used, in seconds (default 3600).
    #[serde(default)]
    pub ttl_seconds: Option<u64>,
    /// Host names and addresses the agent's own API is reached at, which its certificate
    /// names beside the agent's id and the loopback addresses. The admin names them: an agent
    /// cannot choose names for itself (say, the server's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_names: Vec<String>,
}

/// `POST /v1/tokens`' answer.
#[derive(Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct JoinTokenCreatedBody {
    pub agent: String,
    /// `rhj_<id>.<secret>::sha256:<CA fingerprint>`: used once, by `agent --join`.
    pub token: String,
    /// RFC 3339.
    pub expires: String,
}

/// `POST /v1/join`: an agent exchanges its join token for its own credential.
#[derive(Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JoinBody {
    /// The join token without its `::sha256:…` pin.
    pub token: String,
}

/// `POST /v1/join`'s answer: the agent's credential, bound to its id and labels, and a
/// certificate from the cluster's CA for its own API.
#[derive(Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct JoinedBody {
    pub agent: String,
    pub labels: std::collections::BTreeMap<String, String>,
    pub token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_cert_pem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_pem: Option<String>,
}

/// Bodies that carry a secret show only whom it is for.
macro_rules! debug_without_secret {
    ($type:ty, $field:ident) => {
        impl std::fmt::Debug for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($type))
                    .field(stringify!($field), &self.$field)
                    .finish_non_exhaustive()
            }
        }
    };
}
debug_without_secret!(UserCreatedBody, name);
debug_without_secret!(JoinTokenCreatedBody, agent);
impl std::fmt::Debug for JoinBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinBody").finish_non_exhaustive()
    }
}
debug_without_secret!(JoinedBody, agent);
