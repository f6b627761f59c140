//! Parses the documents a user applies: YAML (several documents separated by `---`) or JSON
//! (one object, an array of objects, or a stream of objects).

use super::{ApplyRequest, Meta, NameError, Revision};
use serde::de::{MapAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// A document that could not be read; `index` counts documents from 1 as the user sees them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("document {index}: {problem}")]
pub struct DocumentError {
    pub index: usize,
    pub problem: String,
}

/// The object document as a user writes it. `status` and most of `meta` are server-owned: they
/// are accepted (so `get -o yaml` output can be re-applied) and ignored, but for
/// `meta.revision`, the compare-and-swap guard. Any other field is refused by name.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = ObjectDocument))]
pub struct InputDocument {
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[A-Za-z][A-Za-z0-9-]*$", max_length = 63)
    )]
    kind: String,
    #[cfg_attr(
        feature = "openapi",
        schema(
            pattern = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?|[A-Za-z][A-Za-z0-9-]*)$",
            max_length = 63
        )
    )]
    name: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
    #[serde(default)]
    spec: Value,
    #[serde(default, rename = "status")]
    _status: Value,
    #[serde(default)]
    meta: Option<Meta>,
}

impl From<InputDocument> for ApplyRequest {
    fn from(doc: InputDocument) -> Self {
        Self {
            kind: doc.kind,
            name: doc.name,
            labels: doc.labels,
            annotations: doc.annotations,
            spec: doc.spec,
            expected_revision: doc.meta.map(|m| m.revision).filter(|r| *r != 0),
            // A document's `meta.owner` is the server's to set, like the rest of `meta`.
            owner: None,
        }
    }
}

/// An apply request is read from an object document, and only from a map: a list or a scalar
/// is refused rather than read field by field.
impl<'de> Deserialize<'de> for ApplyRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Document;
        impl<'de> Visitor<'de> for Document {
            type Value = InputDocument;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object document (kind, name, labels, annotations, spec, meta)")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<InputDocument, A::Error> {
                InputDocument::deserialize(MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_map(Document).map(Into::into)
    }
}

/// The object document an apply request is sent as.
#[derive(Serialize)]
struct OutputDocument<'a> {
    kind: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    labels: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    annotations: &'a BTreeMap<String, String>,
    spec: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    meta: Option<RevisionOnly>,
}

#[derive(Serialize)]
struct RevisionOnly {
    revision: Revision,
}

impl Serialize for ApplyRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        OutputDocument {
            kind: &self.kind,
            name: &self.name,
            labels: &self.labels,
            annotations: &self.annotations,
            spec: &self.spec,
            meta: self
                .expected_revision
                .map(|revision| RevisionOnly { revision }),
        }
        .serialize(serializer)
    }
}

/// Parses every document in `text` into apply requests, or names the first bad document.
pub fn parse_documents(text: &str) -> Result<Vec<ApplyRequest>, DocumentError> {
    let trimmed = text.trim_start();
    let values = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        json_values(text)?
    } else {
        yaml_values(text)?
    };
    let mut requests = Vec::new();
    for (index, value) in values {
        let fail = |problem: String| DocumentError { index, problem };
        let request: ApplyRequest =
            serde_json::from_value(value).map_err(|e| fail(e.to_string()))?;
        request
            .validate()
            .map_err(|e: NameError| fail(e.to_string()))?;
        requests.push(request);
    }
    if requests.is_empty() {
        return Err(DocumentError {
            index: 1,
            problem: "no documents found".into(),
        });
    }
    Ok(requests)
}

type Numbered = Vec<(usize, Value)>;

/// Flattens a top-level array into its elements, each counted as one document.
fn push_document(out: &mut Numbered, value: Value) {
    match value {
        Value::Null => {}
        Value::Array(items) => {
            for item in items {
                let index = out.len() + 1;
                out.push((index, item));
            }
        }
        other => {
            let index = out.len() + 1;
            out.push((index, other));
        }
    }
}

fn json_values(text: &str) -> Result<Numbered, DocumentError> {
    let mut out = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        let value = value.map_err(|e| DocumentError {
            index: out.len() + 1,
            problem: format!("invalid JSON: {e}"),
        })?;
        push_document(&mut out, value);
    }
    Ok(out)
}

fn yaml_values(text: &str) -> Result<Numbered, DocumentError> {
    let mut out = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let value = Value::deserialize(document).map_err(|e| DocumentError {
            index: out.len() + 1,
            problem: format!("invalid YAML: {e}"),
        })?;
        push_document(&mut out, value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_several_documents() {
        let text = "kind: Policy\nname: a\nspec: {x: 1}\n---\nkind: Policy\nname: b\nlabels: {app: web}\nmeta: {revision: 7}\n---\n";
        let docs = parse_documents(text).expect("parses");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].spec["x"], 1);
        assert_eq!(docs[1].labels["app"], "web");
        assert_eq!(docs[1].expected_revision, Some(7));
        assert_eq!(docs[0].expected_revision, None);
    }

    #[test]
    fn a_request_travels_as_its_document() {
        let text = "kind: A\nname: a\nlabels: {x: y}\nannotations: {note: 'a b: c'}\nspec: [1]\nmeta: {revision: 9}\n";
        let request = parse_documents(text).expect("parses").remove(0);
        let wire = serde_json::to_value(&request).expect("serialize");
        assert_eq!(wire["meta"], serde_json::json!({"revision": 9}));
        let back: ApplyRequest = serde_json::from_value(wire).expect("deserialize");
        assert_eq!(back, request);
    }

    #[test]
    fn json_array_and_stream() {
        let arr = r#"[{"kind":"A","name":"a"},{"kind":"A","name":"b"}]"#;
        assert_eq!(parse_documents(arr).expect("array").len(), 2);
        let stream = r#"{"kind":"A","name":"a"} {"kind":"A","name":"b"}"#;
        assert_eq!(parse_documents(stream).expect("stream").len(), 2);
    }

    #[test]
    fn errors_name_the_document() {
        let missing = "kind: A\nname: a\n---\nname: b\n";
        let err = parse_documents(missing).expect_err("kind missing");
        assert_eq!(err.index, 2);
        assert!(err.problem.contains("kind"), "{err}");

        let bad_name = "kind: A\nname: a\n---\nkind: A\nname: b\n---\nkind: A\nname: Not_Ok\n";
        let err = parse_documents(bad_name).expect_err("bad name");
        assert_eq!(err.index, 3);
        assert!(err.to_string().contains("Not_Ok"), "{err}");

        let syntax = "kind: A\nname: a\n---\nkind: [unclosed\n";
        let err = parse_documents(syntax).expect_err("syntax");
        assert_eq!(err.index, 2);
        assert!(err.problem.starts_with("invalid YAML"), "{err}");

        let unknown = "kind: A\nname: a\nspek: {}\n";
        let err = parse_documents(unknown).expect_err("unknown field");
        assert!(err.problem.contains("unknown field `spek`"), "{err}");

        let unknown_meta = "kind: A\nname: a\nmeta: {revison: 3}\n";
        let err = parse_documents(unknown_meta).expect_err("unknown meta field");
        assert!(err.problem.contains("unknown field `revison`"), "{err}");

        let meta_list = "kind: A\nname: a\nmeta: [x, 3]\n";
        let err = parse_documents(meta_list).expect_err("meta as a list");
        assert!(
            err.problem.contains("expected a map of meta fields"),
            "{err}"
        );

        let listed = "- [A, a]\n";
        let err = parse_documents(listed).expect_err("a list is no document");
        assert!(err.problem.contains("expected an object document"), "{err}");

        assert!(parse_documents("").is_err());
        assert!(parse_documents("{\"kind\": \"A\",").is_err());
    }
}
