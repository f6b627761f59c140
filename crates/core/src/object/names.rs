//! The naming rules for kinds, object names, labels and annotations.

use std::collections::BTreeMap;

/// Why a kind or name is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("kind is empty")]
    EmptyKind,
    #[error(
        "kind {0:?} is invalid: it must match [A-Za-z][A-Za-z0-9-]* and be at most 63 characters"
    )]
    BadKind(String),
    #[error("name is empty")]
    EmptyName,
    #[error(
        "name {0:?} is invalid: it must be lowercase letters, digits and '-', start and end with a letter or digit, and be at most 63 characters"
    )]
    BadName(String),
    #[error(
        "the name of a Kind object is the kind it describes: {0:?} must match [A-Za-z][A-Za-z0-9-]* and be at most 63 characters"
    )]
    BadKindName(String),
    #[error(
        "label key {0:?} is invalid: it must be a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, optionally after a DNS subdomain prefix and '/'"
    )]
    BadLabelKey(String),
    #[error(
        "label {key:?} has an invalid value {value:?}: it must be empty or at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
    )]
    BadLabelValue { key: String, value: String },
    #[error(
        "annotation key {0:?} is invalid: it must be a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, optionally after a DNS subdomain prefix and '/'"
    )]
    BadAnnotationKey(String),
    #[error("annotations are {0} bytes, over the limit of {MAX_ANNOTATION_BYTES} bytes")]
    AnnotationsTooLarge(usize),
}

/// The most bytes an object's annotations (keys and values) may hold, as in Kubernetes.
const MAX_ANNOTATION_BYTES: usize = 256 << 10;

const MAX_LEN: usize = 63;

/// A kind is `[A-Za-z][A-Za-z0-9-]*`, at most 63 characters.
pub fn validate_kind(kind: &str) -> Result<(), NameError> {
    let mut chars = kind.chars();
    let Some(first) = chars.next() else {
        return Err(NameError::EmptyKind);
    };
    let ok = first.is_ascii_alphabetic()
        && kind.len() <= MAX_LEN
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(NameError::BadKind(kind.to_owned()))
    }
}

/// A name is a DNS label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub fn validate_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::EmptyName);
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let ok = name.len() <= MAX_LEN
        && name.starts_with(allowed)
        && name.ends_with(allowed)
        && name.chars().all(|c| allowed(c) || c == '-');
    if ok {
        Ok(())
    } else {
        Err(NameError::BadName(name.to_owned()))
    }
}

/// Annotations follow Kubernetes' rules: a key is a label key, a value any text, and all of
/// them together at most 256 KiB (`MAX_ANNOTATION_BYTES`).
pub fn validate_annotations(annotations: &BTreeMap<String, String>) -> Result<(), NameError> {
    let mut size = 0;
    for (key, value) in annotations {
        if !is_label_key(key) {
            return Err(NameError::BadAnnotationKey(key.clone()));
        }
        size += key.len() + value.len();
    }
    if size > MAX_ANNOTATION_BYTES {
        return Err(NameError::AnnotationsTooLarge(size));
    }
    Ok(())
}

/// A label key: a name (`app`) or a DNS subdomain prefix and a name (`example.com/tier`).
fn is_label_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    prefix.is_none_or(is_dns_subdomain) && is_label_name(name)
}

/// Labels follow Kubernetes' rules: a key is a name (`app`) or a prefix and a name
/// (`example.com/tier`), a value is empty or a name. So no selector term and no index entry
/// can be misread (a label holds no `=`, `,`, `!`, space or control character).
pub fn validate_labels(labels: &BTreeMap<String, String>) -> Result<(), NameError> {
    for (key, value) in labels {
        if !is_label_key(key) {
            return Err(NameError::BadLabelKey(key.clone()));
        }
        if !value.is_empty() && !is_label_name(value) {
            return Err(NameError::BadLabelValue {
                key: key.clone(),
                value: value.clone(),
            });
        }
    }
    Ok(())
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 characters.
fn is_label_name(name: &str) -> bool {
    let edge = |c: char| c.is_ascii_alphanumeric();
    !name.is_empty()
        && name.len() <= MAX_LEN
        && name.starts_with(edge)
        && name.ends_with(edge)
        && name
            .chars()
            .all(|c| edge(c) || matches!(c, '-' | '_' | '.'))
}

/// Dot-separated DNS labels, at most 253 characters.
fn is_dns_subdomain(prefix: &str) -> bool {
    prefix.len() <= 253 && prefix.split('.').all(|part| validate_name(part).is_ok())
}

/// A kind's plural as Kubernetes makes a resource's by default: lowercase, then `y` after a
/// consonant → `ies`, a sibilant ending (`s`, `x`, `z`, `ch`, `sh`) → `es`, else `s`
/// (`Policy` → `policies`, `Gateway` → `gateways`, `Mesh` → `meshes`).
pub fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    let before_y = lower.strip_suffix('y');
    match before_y {
        Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) && !stem.is_empty() => {
            format!("{stem}ies")
        }
        _ if ["s", "x", "z", "ch", "sh"]
            .iter()
            .any(|end| lower.ends_with(end)) =>
        {
            format!("{lower}es")
        }
        _ => format!("{lower}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_default_plurals() {
        for (kind, want) in [
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Mesh", "meshes"),
            ("Ingress", "ingresses"),
            ("Box", "boxes"),
            ("Match", "matches"),
            ("Tenant", "tenants"),
            ("NimbusItem", "nimbusitems"),
            ("Class", "classes"),
            ("Quiz", "quizes"),
            ("Y", "ys"),
        ] {
            assert_eq!(plural(kind), want, "{kind}");
        }
    }

    #[test]
    fn kinds() {
        assert!(validate_kind("Policy").is_ok());
        assert!(validate_kind("bridge-domain2").is_ok());
        assert_eq!(validate_kind(""), Err(NameError::EmptyKind));
        for bad in ["9Policy", "-a", "Po/licy", "Pol icy", "Pólicy"] {
            assert!(validate_kind(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn labels() {
        let one = |key: &str, value: &str| {
            validate_labels(&BTreeMap::from([(key.to_owned(), value.to_owned())]))
        };
        for (key, value) in [
            ("app", "web"),
            ("app", ""),
            ("example.com/tier", "Front_end.v2"),
            ("reactor-host/owner", "a-b"),
            ("A_b.c", "9"),
        ] {
            assert!(one(key, value).is_ok(), "{key}={value} refused");
        }
        for key in [
            "", "a b", "a=b", "a\0b", "-a", "a/", "/a", "Ex.com/a", "a/b/c", "é",
        ] {
            assert_eq!(one(key, "v"), Err(NameError::BadLabelKey(key.into())));
        }
        let long = "a".repeat(64);
        for value in ["a b", "a,b", "x\0y", "-a", "a.", &long] {
            assert!(
                matches!(one("k", value), Err(NameError::BadLabelValue { .. })),
                "{value:?} accepted"
            );
        }
        assert!(one(&long, "v").is_err());
    }

    #[test]
    fn annotations() {
        let one = |key: &str, value: &str| {
            validate_annotations(&BTreeMap::from([(key.to_owned(), value.to_owned())]))
        };
        assert!(one("example.com/note", "any text: {\"json\": [1]}\n").is_ok());
        assert_eq!(
            one("a b", "v"),
            Err(NameError::BadAnnotationKey("a b".into()))
        );
        let huge = "x".repeat(MAX_ANNOTATION_BYTES);
        assert!(matches!(
            one("k", &huge),
            Err(NameError::AnnotationsTooLarge(_))
        ));
    }

    #[test]
    fn names() {
        assert!(validate_name("web-allow").is_ok());
        assert!(validate_name("a").is_ok());
        assert!(validate_name(&"a".repeat(63)).is_ok());
        assert!(validate_name(&"a".repeat(64)).is_err());
        for bad in ["Web", "-a", "a-", "a_b", "a/b", "a.b", ""] {
            assert!(validate_name(bad).is_err(), "{bad} accepted");
        }
    }
}
