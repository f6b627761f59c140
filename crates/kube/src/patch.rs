//! `PATCH` bodies: JSON merge patches (RFC 7386) and JSON patches (RFC 6902) on the object
//! as the Kubernetes API shows it; server-side apply is `managed`'s.

use serde_json::Value;

/// The patch formats the API reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`: what kubectl sends for `patch --type merge`, `label`,
    /// `annotate` and a client-side `apply` of a kind it has no schema of.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/apply-patch+yaml`: a server-side apply (see `managed`), not a patch of
    /// the object alone.
    Apply,
}

/// Why a patch cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error(
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json"
    )]
    Unsupported(String),
    #[error("a server-side apply is not a patch: it is merged with the managed fields")]
    ServerSideApply,
    #[error("the body is not JSON: {0}")]
    NotJson(String),
    #[error("the applied configuration is not YAML: {0}")]
    NotYaml(String),
    #[error("{0} must be set in an applied configuration")]
    Unset(&'static str),
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
            "application/apply-patch+yaml" => Ok(Self::Apply),
            _ => Err(PatchError::Unsupported(media)),
        }
    }
}

/// `target` with `body` (a patch of `patch_type`) applied.
pub fn apply(patch_type: PatchType, target: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let parse =
        || serde_json::from_slice::<Value>(body).map_err(|e| PatchError::NotJson(e.to_string()));
    let mut patched = target.clone();
    match patch_type {
        PatchType::Apply => return Err(PatchError::ServerSideApply),
        PatchType::Merge => json_patch::merge(&mut patched, &parse()?),
        PatchType::Json => {
            let operations: json_patch::Patch = serde_json::from_value(parse()?)
                .map_err(|e| PatchError::BadJsonPatch(e.to_string()))?;
            json_patch::patch(&mut patched, &operations)
                .map_err(|e| PatchError::Failed(e.to_string()))?;
        }
    }
    Ok(patched)
}

/// The configuration a server-side apply sends: a YAML (or JSON) object that names its
/// `apiVersion` and `kind`.
pub fn applied_config(body: &[u8]) -> Result<Value, PatchError> {
    let applied: Value =
        serde_yaml_ng::from_slice(body).map_err(|e| PatchError::NotYaml(e.to_string()))?;
    for field in ["apiVersion", "kind"] {
        if !applied.get(field).is_some_and(Value::is_string) {
            return Err(PatchError::Unset(field));
        }
    }
    Ok(applied)
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
            Ok(PatchType::Apply)
        );
        assert_eq!(
            apply(PatchType::Apply, &serde_json::json!({}), b"{}"),
            Err(PatchError::ServerSideApply)
        );
        assert_eq!(
            applied_config(b"apiVersion: reactor.dev/v1\nkind: Widget\nspec: {size: 3}\n"),
            Ok(
                serde_json::json!({"apiVersion": "reactor.dev/v1", "kind": "Widget", "spec": {"size": 3}})
            )
        );
        assert_eq!(
            applied_config(b"kind: Widget"),
            Err(PatchError::Unset("apiVersion"))
        );
        assert!(matches!(
            applied_config(b"a: [b"),
            Err(PatchError::NotYaml(_))
        ));
        assert!(matches!(
            PatchType::of("application/strategic-merge-patch+json"),
            Err(PatchError::Unsupported(_))
        ));
    }
}
