//! `PATCH` bodies: JSON merge patches (RFC 7386) and JSON patches (RFC 6902) on the object
//! as the Kubernetes API shows it.

use serde_json::Value;

/// The patch formats the API reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`: what kubectl sends for `patch --type merge`, `label`,
    /// `annotate` and a client-side `apply` of a kind it has no schema of.
    Merge,
    /// `application/json-patch+json`.
    Json,
}

/// Why a patch cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error(
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json"
    )]
    Unsupported(String),
    #[error(
        "server-side apply (application/apply-patch+yaml) is not supported yet: use kubectl apply without --server-side"
    )]
    ServerSideApply,
    #[error("the body is not JSON: {0}")]
    NotJson(String),
    #[error("the JSON patch is invalid: {0}")]
    BadJsonPatch(String),
    #[error("the JSON patch cannot be applied: {0}")]
    Failed(String),
}

impl PatchType {
    /// The format a `Content-Type` names.
    pub fn of(content_type: &str) -> Result<Self, PatchError> {
        let media = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match media.as_str() {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/apply-patch+yaml" => Err(PatchError::ServerSideApply),
            _ => Err(PatchError::Unsupported(media)),
        }
    }
}

/// `target` with `body` (a patch of `patch_type`) applied.
pub fn apply(patch_type: PatchType, target: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let patch: Value =
        serde_json::from_slice(body).map_err(|e| PatchError::NotJson(e.to_string()))?;
    let mut patched = target.clone();
    match patch_type {
        PatchType::Merge => json_patch::merge(&mut patched, &patch),
        PatchType::Json => {
            let operations: json_patch::Patch = serde_json::from_value(patch)
                .map_err(|e| PatchError::BadJsonPatch(e.to_string()))?;
            json_patch::patch(&mut patched, &operations)
                .map_err(|e| PatchError::Failed(e.to_string()))?;
        }
    }
    Ok(patched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_and_json_patches() {
        let target = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"n": 1}});
        let merged = apply(
            PatchType::Merge,
            &target,
            br#"{"metadata": {"labels": {"a": null, "c": "3"}}, "spec": {"n": 2}}"#,
        )
        .expect("merged");
        assert_eq!(merged["metadata"]["labels"], json!({"b": "2", "c": "3"}));
        assert_eq!(merged["spec"]["n"], 2);
        let patched = apply(
            PatchType::Json,
            &target,
            br#"[{"op": "replace", "path": "/spec/n", "value": 5}, {"op": "add", "path": "/spec/m", "value": true}]"#,
        )
        .expect("patched");
        assert_eq!(patched["spec"], json!({"n": 5, "m": true}));
        let failed = apply(
            PatchType::Json,
            &target,
            br#"[{"op": "test", "path": "/spec/n", "value": 9}]"#,
        );
        assert!(matches!(failed, Err(PatchError::Failed(_))), "{failed:?}");
        assert!(matches!(
            apply(PatchType::Json, &target, br#"{"op": "x"}"#),
            Err(PatchError::BadJsonPatch(_))
        ));
        assert!(matches!(
            apply(PatchType::Merge, &target, b"not json"),
            Err(PatchError::NotJson(_))
        ));
    }

    #[test]
    fn content_types() {
        assert_eq!(
            PatchType::of("application/merge-patch+json; charset=utf-8"),
            Ok(PatchType::Merge)
        );
        assert_eq!(
            PatchType::of("application/json-patch+json"),
            Ok(PatchType::Json)
        );
        assert_eq!(
            PatchType::of("application/apply-patch+yaml"),
            Err(PatchError::ServerSideApply)
        );
        assert!(matches!(
            PatchType::of("application/strategic-merge-patch+json"),
            Err(PatchError::Unsupported(_))
        ));
    }
}
