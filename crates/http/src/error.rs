//! Errors as HTTP answers: a status code and an [`ErrorBody`].

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use reactor_core::wire::{ErrorBody, ErrorCode};
use reactor_store::StoreError;

/// An answer that refuses a request: its status and the API's error body.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let status = match code {
            ErrorCode::Invalid => StatusCode::BAD_REQUEST,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::Conflict => StatusCode::CONFLICT,
            ErrorCode::Compacted => StatusCode::GONE,
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::Forbidden => StatusCode::FORBIDDEN,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self {
            status,
            body: ErrorBody {
                error: message.into(),
                code,
            },
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Invalid, message)
    }

    /// The same error, said of document `index` (counted from 1) of a multi-document apply.
    pub fn in_document(mut self, index: usize) -> Self {
        self.body.error = format!("document {index}: {}", self.body.error);
        self
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
}

/// The code a store error is answered with.
pub fn code_of(error: &StoreError) -> ErrorCode {
    match error.root() {
        StoreError::NotFound { .. } => ErrorCode::NotFound,
        StoreError::Conflict { .. } | StoreError::ConflictMissing { .. } => ErrorCode::Conflict,
        StoreError::NotOwned { .. } => ErrorCode::Forbidden,
        StoreError::Compacted { .. } | StoreError::SnapshotGone { .. } => ErrorCode::Compacted,
        StoreError::Invalid(_)
        | StoreError::TooLarge { .. }
        | StoreError::TxnTooLarge(_)
        | StoreError::Future { .. } => ErrorCode::Invalid,
        StoreError::Document { .. }
        | StoreError::Backend(_)
        | StoreError::Corrupt { .. }
        | StoreError::Damaged { .. }
        | StoreError::Closed => ErrorCode::Internal,
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        Self::new(code_of(&error), error.to_string())
    }
}

impl From<reactor_nimbus::NimbusError> for ApiError {
    fn from(error: reactor_nimbus::NimbusError) -> Self {
        use reactor_nimbus::NimbusError;
        match error {
            NimbusError::Store(e) => e.into(),
            NimbusError::Invalid(m) => ApiError::invalid(m),
            NimbusError::Denied(m) => ApiError::new(ErrorCode::Conflict, m),
        }
    }
}

impl From<reactor_core::object::NameError> for ApiError {
    fn from(error: reactor_core::object::NameError) -> Self {
        Self::invalid(error.to_string())
    }
}

impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::JsonRejection) -> Self {
        Self::invalid(format!("invalid request body: {}", rejection.body_text()))
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::QueryRejection) -> Self {
        Self::invalid(format!("invalid query: {}", rejection.body_text()))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}
