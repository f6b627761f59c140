//! The audit log: every change and every refusal as a JSON line (time, identity, verb, path,
//! kind, name, status), in `<data>/audit.log`, rotated by size; `GET /v1/audit` reads it.

use super::openapi::Refused;
use super::{ApiError, AppState};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use reactor_trust::Identity;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use utoipa::IntoParams;

/// The log is rotated (to `audit.log.1`, replacing the one before) past this size.
pub const DEFAULT_MAX_BYTES: u64 = 16 << 20;

/// One audited request, as Kubernetes' audit "Metadata" level records it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub time: String,
    /// `user:NAME`, `agent:ID`, or `anonymous` when the request did not authenticate.
    pub identity: String,
    pub verb: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub status: u16,
    /// `ok`, `refused` (401/403) or `failed`.
    pub result: String,
}

impl Entry {
    pub fn new(method: &Method, path: &str, kind: Option<&str>, name: Option<&str>) -> Self {
        Entry {
            time: String::new(),
            identity: String::new(),
            verb: method.to_string(),
            path: path.to_owned(),
            kind: kind.map(str::to_owned),
            name: name.map(str::to_owned),
            status: 0,
            result: String::new(),
        }
    }

    pub fn finish(mut self, identity: Option<&Identity>, status: StatusCode) -> Self {
        self.time = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        self.identity = identity.map_or_else(|| "anonymous".into(), |i| i.to_string());
        self.status = status.as_u16();
        self.result = match status {
            s if s.is_success() => "ok",
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => "refused",
            _ => "failed",
        }
        .into();
        self
    }
}

/// Whether a successful call of `method` `route` is recorded: changes are; reads, dry runs
/// and agents' heartbeats, feeds and reports (many a second) are not.
pub fn audited(method: &Method, route: &str) -> bool {
    method != Method::GET
        && !matches!(
            route,
            "/v1/dry-run/objects"
                | "/v1/agents/{id}/heartbeat"
                | "/v1/nimbus/watch"
                | "/v1/nimbus/status"
        )
}

/// The audit log file, or nowhere.
pub struct AuditLog {
    file: Option<parking_lot::Mutex<Writer>>,
}

struct Writer {
    path: PathBuf,
    file: std::fs::File,
    written: u64,
    max_bytes: u64,
}

fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

impl AuditLog {
    /// Audits nothing (servers in tests that do not ask for it).
    pub fn disabled() -> Self {
        Self { file: None }
    }

    /// Appends to `path` (0600), rotating it past `max_bytes`.
    pub fn open(path: &Path, max_bytes: u64) -> std::io::Result<Self> {
        let file = open_append(path)?;
        let written = file.metadata()?.len();
        Ok(Self {
            file: Some(parking_lot::Mutex::new(Writer {
                path: path.to_owned(),
                file,
                written,
                max_bytes,
            })),
        })
    }

    pub fn record(&self, entry: Entry) {
        let Some(writer) = &self.file else { return };
        let Ok(mut line) = serde_json::to_vec(&entry) else {
            return;
        };
        line.push(b'\n');
        let mut writer = writer.lock();
        if writer.written + line.len() as u64 > writer.max_bytes
            && let Err(e) = writer.rotate()
        {
            tracing::warn!("cannot rotate the audit log: {e}");
        }
        match writer.file.write_all(&line) {
            Ok(()) => writer.written += line.len() as u64,
            Err(e) => tracing::warn!("cannot write the audit log: {e}"),
        }
    }

    /// The last `limit` entries, oldest first (from the rotated file too).
    fn tail(&self, limit: usize) -> std::io::Result<Vec<serde_json::Value>> {
        let Some(writer) = &self.file else {
            return Ok(Vec::new());
        };
        let path = writer.lock().path.clone();
        let mut lines = Vec::new();
        for file in [rotated(&path), path] {
            match std::fs::read_to_string(&file) {
                Ok(text) => lines.extend(
                    text.lines()
                        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()),
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        let skip = lines.len().saturating_sub(limit);
        Ok(lines.split_off(skip))
    }
}

fn rotated(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".1");
    PathBuf::from(name)
}

impl Writer {
    fn rotate(&mut self) -> std::io::Result<()> {
        std::fs::rename(&self.path, rotated(&self.path))?;
        self.file = open_append(&self.path)?;
        self.written = 0;
        Ok(())
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// The newest entries at most (default 1000).
    limit: Option<usize>,
}

/// The newest audit entries, oldest first.
#[utoipa::path(
    operation_id = "audit",
    get,
    path = "/v1/audit",
    tag = "server",
    params(AuditQuery),
    responses((status = 200, description = "Audit entries, oldest first", body = Vec<Entry>), Refused)
)]
pub async fn list(
    State(state): State<AppState>,
    query: Result<Query<AuditQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let limit = query.limit.unwrap_or(1000).min(100_000);
    let audit = state.audit.clone();
    let entries = tokio::task::spawn_blocking(move || audit.tail(limit))
        .await
        .map_err(|e| ApiError::new(reactor_core::wire::ErrorCode::Internal, e.to_string()))?
        .map_err(|e| {
            ApiError::new(
                reactor_core::wire::ErrorCode::Internal,
                format!("cannot read the audit log: {e}"),
            )
        })?;
    Ok(axum::Json(entries).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_by_size_and_reads_across_the_rotation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.log");
        let log = AuditLog::open(&path, 400).expect("open");
        for i in 0..10 {
            let entry = Entry::new(
                &Method::PUT,
                &format!("/v1/objects/Policy/p{i}"),
                Some("Policy"),
                None,
            );
            log.record(entry.finish(None, StatusCode::FORBIDDEN));
        }
        assert!(std::fs::metadata(&path).expect("meta").len() <= 400);
        assert!(rotated(&path).exists());
        let tail = log.tail(2).expect("tail");
        assert_eq!(tail.len(), 2);
        assert_eq!(tail[1]["path"], "/v1/objects/Policy/p9");
        assert_eq!(tail[1]["result"], "refused");
        assert_eq!(tail[1]["identity"], "anonymous");
    }
}
