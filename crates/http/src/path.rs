//! Path parameters: one that cannot be read (e.g. not UTF-8 once percent-decoded) is refused
//! in the API's error shape, like every other bad input.

use super::error::ApiError;
use axum::extract::FromRequestParts;
use axum::extract::rejection::PathRejection;

/// `axum::extract::Path`, refused as an [`ApiError`].
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        ApiError::invalid(format!("invalid path: {}", rejection.body_text()))
    }
}
