//! The `continue` token of a paged list, in Kubernetes' own shape (base64 of
//! `{"v":"meta.k8s.io/v1","rv":N,"start":"NAME"}`): the revision of the first page's snapshot
//! and the last name given, opaque to clients.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reactor_core::object::Revision;

const VERSION: &str = "meta.k8s.io/v1";

/// Where the next page of a list starts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Continuation {
    #[serde(rename = "v")]
    version: String,
    /// The revision the first page was read at; every later page is read at it.
    #[serde(rename = "rv")]
    pub revision: Revision,
    /// The last name of the page before.
    #[serde(rename = "start")]
    pub after: String,
}

/// A `continue` token this server did not make.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("continue key is not valid: {0}")]
pub struct ContinuationError(&'static str);

impl Continuation {
    pub fn new(revision: Revision, after: &str) -> Self {
        Self {
            version: VERSION.to_owned(),
            revision,
            after: after.to_owned(),
        }
    }

    /// The token a list answers in `metadata.continue`.
    pub fn encode(&self) -> String {
        // A struct of a string and a number always serializes.
        let json = serde_json::to_vec(self).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(json)
    }

    /// The token a client sent back in `continue`.
    pub fn decode(token: &str) -> Result<Self, ContinuationError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(token.trim_end_matches('='))
            .map_err(|_| ContinuationError("not base64"))?;
        let continuation: Continuation =
            serde_json::from_slice(&bytes).map_err(|_| ContinuationError("not a continue key"))?;
        if continuation.version != VERSION {
            return Err(ContinuationError("of an unknown version"));
        }
        if continuation.revision == 0 {
            return Err(ContinuationError("its revision is zero"));
        }
        Ok(continuation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_round_trips_and_garbage_is_refused_with_a_reason() {
        let token = Continuation::new(42, "web-7").encode();
        let back = Continuation::decode(&token).expect("decodes");
        assert_eq!((back.revision, back.after.as_str()), (42, "web-7"));
        for (bad, why) in [
            ("web7", "not a continue key"),
            ("%%%", "not base64"),
            (
                &URL_SAFE_NO_PAD.encode(r#"{"v":"x","rv":1,"start":"a"}"#),
                "unknown version",
            ),
            (
                &URL_SAFE_NO_PAD.encode(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#),
                "zero",
            ),
        ] {
            let error = Continuation::decode(bad).expect_err(bad).to_string();
            assert!(error.contains(why), "{bad}: {error}");
        }
    }
}
