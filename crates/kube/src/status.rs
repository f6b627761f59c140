//! Errors as Kubernetes answers them: a `metav1.Status` with a reason and an HTTP code.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusCause, StatusDetails};
use reactor_store::StoreError;

/// What went wrong, as a reason kubectl knows (`Error from server (NotFound): ...`). The
/// message is the whole sentence kubectl prints after the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    AlreadyExists(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Expired(String),
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    NotAcceptable(String),
    #[error("{0}")]
    RequestEntityTooLarge(String),
    #[error("{0}")]
    InternalError(String),
}

/// The object an error is about, for the Status' `details` and its message.
#[derive(Debug, Clone, Copy)]
pub struct About<'a> {
    /// `plural.group`, e.g. `policies.reactor.dev`.
    pub resource: &'a str,
    pub name: &'a str,
}

impl KubeError {
    /// The reason Kubernetes names the error by, and its HTTP code.
    pub fn reason_and_code(&self) -> (&'static str, u16) {
        match self {
            Self::NotFound(_) => ("NotFound", 404),
            Self::AlreadyExists(_) => ("AlreadyExists", 409),
            Self::Conflict(_) => ("Conflict", 409),
            Self::Invalid(_) => ("Invalid", 422),
            Self::BadRequest(_) => ("BadRequest", 400),
            Self::Unauthorized(_) => ("Unauthorized", 401),
            Self::Forbidden(_) => ("Forbidden", 403),
            Self::Expired(_) => ("Expired", 410),
            Self::MethodNotAllowed(_) => ("MethodNotAllowed", 405),
            Self::UnsupportedMediaType(_) => ("UnsupportedMediaType", 415),
            Self::NotAcceptable(_) => ("NotAcceptable", 406),
            Self::RequestEntityTooLarge(_) => ("RequestEntityTooLarge", 413),
            Self::InternalError(_) => ("InternalError", 500),
        }
    }

    /// The error of an HTTP code and message from elsewhere (the server's own refusals).
    pub fn from_code(code: u16, message: String) -> Self {
        match code {
            401 => Self::Unauthorized(message),
            403 => Self::Forbidden(message),
            404 => Self::NotFound(message),
            405 => Self::MethodNotAllowed(message),
            406 => Self::NotAcceptable(message),
            409 => Self::Conflict(message),
            410 => Self::Expired(message),
            413 => Self::RequestEntityTooLarge(message),
            415 => Self::UnsupportedMediaType(message),
            422 => Self::Invalid(message),
            400..=499 => Self::BadRequest(message),
            _ => Self::InternalError(message),
        }
    }

    /// A store error about one object, worded as Kubernetes words it.
    pub fn from_store(error: &StoreError, about: About<'_>) -> Self {
        let About { resource, name } = about;
        match error.root() {
            StoreError::NotFound { .. } => {
                Self::NotFound(format!("{resource} \"{name}\" not found"))
            }
            StoreError::Conflict { expected: 0, .. } => {
                Self::AlreadyExists(format!("{resource} \"{name}\" already exists"))
            }
            StoreError::Conflict { .. } | StoreError::ConflictMissing { .. } => {
                Self::Conflict(format!(
                    "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
                ))
            }
            StoreError::Compacted { .. } | StoreError::SnapshotGone { .. } => {
                Self::Expired(error.to_string())
            }
            StoreError::NotOwned { .. } => Self::Forbidden(error.to_string()),
            StoreError::Invalid(_) | StoreError::TooLarge { .. } | StoreError::TxnTooLarge(_) => {
                Self::Invalid(format!(
                    "{resource} \"{name}\" is invalid: {}",
                    error.root()
                ))
            }
            StoreError::Future { .. } => Self::BadRequest(error.to_string()),
            _ => Self::InternalError(error.to_string()),
        }
    }

    /// The `metav1.Status` kubectl reads, `details` naming the object when known.
    pub fn status(&self, about: Option<About<'_>>) -> Status {
        let (reason, code) = self.reason_and_code();
        let details = about.map(|About { resource, name }| {
            let (kind, group) = resource.split_once('.').unwrap_or((resource, ""));
            StatusDetails {
                name: (!name.is_empty()).then(|| name.to_owned()),
                group: (!group.is_empty()).then(|| group.to_owned()),
                kind: Some(kind.to_owned()),
                ..StatusDetails::default()
            }
        });
        let mut details = details;
        if let (Self::Invalid(message), Some(details)) = (self, details.as_mut()) {
            details.causes = Some(vec![cause(message)]);
        }
        Status {
            code: Some(i32::from(code)),
            details,
            message: Some(self.to_string()),
            reason: Some(reason.to_owned()),
            status: Some("Failure".to_owned()),
            ..Status::default()
        }
    }
}

/// What kubectl prints of an `Invalid` error (`The widgets "a" is invalid: FIELD: MESSAGE`):
/// the field the message starts with (`spec.size: ...`), if it does.
fn cause(message: &str) -> StatusCause {
    let detail = message
        .split_once(" is invalid: ")
        .map_or(message, |(_, detail)| detail);
    let (field, detail) = match detail.split_once(": ") {
        Some((field, rest)) if !field.is_empty() && !field.contains(' ') => (field, rest),
        _ => ("", detail),
    };
    StatusCause {
        field: Some(field.to_owned()).filter(|f| !f.is_empty()),
        message: Some(detail.to_owned()),
        reason: Some("FieldValueInvalid".to_owned()),
    }
}

/// The `metav1.Status` of a success (a deletecollection's answer).
pub fn success() -> Status {
    Status {
        status: Some("Success".to_owned()),
        ..Status::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABOUT: About<'static> = About {
        resource: "policies.reactor.dev",
        name: "a",
    };

    #[test]
    fn store_errors_become_kubernetes_reasons() {
        let cases = [
            (
                StoreError::NotFound {
                    kind: "Policy".into(),
                    name: "a".into(),
                },
                "NotFound",
                404,
                "policies.reactor.dev \"a\" not found",
            ),
            (
                StoreError::Conflict {
                    key: "Policy/a".into(),
                    expected: 0,
                    actual: 4,
                },
                "AlreadyExists",
                409,
                "policies.reactor.dev \"a\" already exists",
            ),
            (
                StoreError::Conflict {
                    key: "Policy/a".into(),
                    expected: 3,
                    actual: 4,
                },
                "Conflict",
                409,
                "Operation cannot be fulfilled on policies.reactor.dev \"a\": the object has been modified; please apply your changes to the latest version and try again",
            ),
            (
                StoreError::Compacted {
                    requested: 1,
                    oldest: 9,
                },
                "Expired",
                410,
                "revision 1 has been compacted",
            ),
            (
                StoreError::Invalid("spec.x: bad".into()),
                "Invalid",
                422,
                "policies.reactor.dev \"a\" is invalid: spec.x: bad",
            ),
        ];
        for (store, reason, code, message) in cases {
            let error = KubeError::from_store(&store, ABOUT);
            assert_eq!(error.reason_and_code(), (reason, code), "{store}");
            assert!(error.to_string().starts_with(message), "{error}");
        }
    }

    #[test]
    fn an_invalid_object_names_the_field() {
        let invalid = KubeError::Invalid(
            "policies.reactor.dev \"a\" is invalid: spec.size: \"big\" is not an integer".into(),
        );
        let json = serde_json::to_value(invalid.status(Some(ABOUT))).expect("json");
        assert_eq!(json["details"]["causes"][0]["field"], "spec.size");
        assert_eq!(
            json["details"]["causes"][0]["message"],
            "\"big\" is not an integer"
        );
    }

    #[test]
    fn a_status_names_its_object() {
        let status = KubeError::NotFound("x".into()).status(Some(ABOUT));
        let json = serde_json::to_value(&status).expect("json");
        assert_eq!(json["kind"], "Status");
        assert_eq!(json["apiVersion"], "v1");
        assert_eq!(json["reason"], "NotFound");
        assert_eq!(json["code"], 404);
        assert_eq!(json["details"]["kind"], "policies");
        assert_eq!(json["details"]["group"], "reactor.dev");
        assert_eq!(json["details"]["name"], "a");
        assert_eq!(
            KubeError::from_code(415, "x".into()).reason_and_code().1,
            415
        );
    }
}
