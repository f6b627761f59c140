//! The naming rules for kinds and object names.

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
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
