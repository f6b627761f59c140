//! The JSON body of every route: one JSON object of the route's type, within the body limit,
//! or a one-line refusal saying what is wrong.

use super::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

/// A request body read as `T`. Unlike `axum::Json`, a body that is not a JSON object (`[]`,
/// `null`, a number) is refused even where `T`'s fields all have defaults, and a body over the
/// limit is answered 413 naming the limit. No body at all (`curl -X POST`) is the empty
/// object where every field of `T` has a default, and refused where one is required.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(request, state).await.map_err(refused)?;
        parse(&bytes).map(JsonBody)
    }
}

/// Reads `bytes` as one JSON object of type `T`.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let invalid = |problem: String| ApiError::invalid(format!("invalid request body: {problem}"));
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        None => {
            return serde_json::from_slice(b"{}")
                .map_err(|_| invalid("it is empty; expected a JSON object".into()));
        }
        Some(_) => {
            let found = match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(value) => describe(&value),
                Err(_) => "something that is not JSON",
            };
            return Err(invalid(format!("expected a JSON object, found {found}")));
        }
    }
    serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))
}

fn describe(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// A body that could not be read, as the one-line refusal every route answers.
pub fn refused(rejection: BytesRejection) -> ApiError {
    let mut error = ApiError::invalid(format!("invalid request body: {}", rejection.body_text()));
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        error.status = StatusCode::PAYLOAD_TOO_LARGE;
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use reactor_core::wire::RegisterBody;

    #[test]
    fn only_an_object_is_a_body() {
        for (body, found) in [
            ("[]", "an array"),
            ("null", "null"),
            ("7", "a number"),
            ("\"x\"", "a string"),
            ("[", "not JSON"),
        ] {
            let err = parse::<RegisterBody>(body.as_bytes()).expect_err(body);
            assert!(err.body.error.contains(found), "{body}: {}", err.body.error);
            assert_eq!(err.status, StatusCode::BAD_REQUEST);
        }
        assert!(parse::<RegisterBody>(b" {}").is_ok());
        // No body: the empty object where every field has a default, refused where one is
        // required (a heartbeat's ttl).
        for empty in ["", " \n"] {
            let body = parse::<RegisterBody>(empty.as_bytes()).expect("defaults");
            assert!(body.labels.is_empty());
            let err = parse::<reactor_core::wire::HeartbeatBody>(empty.as_bytes())
                .expect_err("a required field");
            assert!(err.body.error.contains("empty"), "{}", err.body.error);
        }
        let err = parse::<RegisterBody>(br#"{"labls": {}}"#).expect_err("unknown field");
        assert!(
            err.body.error.contains("unknown field `labls`"),
            "{}",
            err.body.error
        );
    }
}
