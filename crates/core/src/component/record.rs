//! The host's records about one component kept in the store: their object names, and the sha256s they name.

use sha2::{Digest, Sha256};

/// The record's object name for `component`: the component's name when it is a valid object
/// name, else `<prefix>-` and a hash of it (component names may hold capitals and `_`).
pub fn record_name(prefix: &str, component: &str) -> String {
    if crate::object::validate_name(component).is_ok() {
        return component.to_owned();
    }
    let digest = Sha256::digest(component.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{hex}")
}

/// Whether `text` is a sha256 as the host writes them: 64 lowercase hex digits (so a name
/// read from the store can never lead out of a folder).
pub fn is_sha256(text: &str) -> bool {
    text.len() == 64
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_name_is_kept_and_another_is_hashed() {
        assert_eq!(record_name("p", "echo"), "echo");
        let hashed = record_name("p", "My_Component");
        assert!(hashed.starts_with("p-") && hashed.len() == 34, "{hashed}");
        assert_eq!(hashed, record_name("p", "My_Component"), "stable");
    }

    #[test]
    fn only_lowercase_hex_of_64_is_a_sha256() {
        assert!(is_sha256(&"a1".repeat(32)));
        assert!(!is_sha256(&"A1".repeat(32)));
        assert!(!is_sha256("../etc/passwd"));
        assert!(!is_sha256(&"a".repeat(63)));
    }
}
