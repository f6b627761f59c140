//! Objects as the store hands them to a reactor, for runtime tests.

use reactor_host::runtime::Object;

/// An object as the store would hand it to a reactor.
pub fn object(kind: &str, name: &str, spec: serde_json::Value) -> Object {
    Object {
        kind: kind.into(),
        name: name.into(),
        labels: vec![("app".into(), "test".into())],
        spec: spec.to_string(),
        status: None,
        meta: None,
    }
}
