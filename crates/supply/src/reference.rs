//! `oci://HOST[:PORT]/REPO:TAG` and `oci://HOST[:PORT]/REPO@sha256:HEX`: what a component's
//! `source` and `component push` name.

use std::fmt;

/// A component's place in a registry: by tag (followed) or by digest (pinned).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ComponentRef {
    /// `HOST[:PORT]`.
    pub registry: String,
    /// The repository, e.g. `policies/policy-rust`.
    pub repository: String,
    /// The tag or the pinned manifest digest.
    pub version: Version,
}

/// A tag, or a manifest digest `sha256:HEX`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Version {
    /// A tag, looked up again at the `supply.interval`.
    Tag(String),
    /// A manifest digest `sha256:<64 hex>`: fixed, read from the cache once pulled.
    Digest(String),
}

/// Why a reference is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{reference:?} is not an OCI reference like oci://HOST[:PORT]/REPO:TAG or oci://HOST[:PORT]/REPO@sha256:HEX: {why}"
)]
pub struct ReferenceError {
    /// The text given.
    pub reference: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// Whether `text` is `sha256:` and 64 lowercase hex digits.
pub fn is_sha256_digest(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(reactor_core::component::is_sha256)
}

impl ComponentRef {
    /// Parses `oci://HOST[:PORT]/REPO(:TAG|@sha256:HEX)`.
    pub fn parse(text: &str) -> Result<Self, ReferenceError> {
        let error = |why| ReferenceError {
            reference: text.to_owned(),
            why,
        };
        let rest = text
            .strip_prefix("oci://")
            .ok_or(error("it must start with oci://"))?;
        let (registry, path) = rest
            .split_once('/')
            .ok_or(error("no repository after the host"))?;
        if registry.is_empty()
            || !registry
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        {
            return Err(error("the host is not HOST[:PORT]"));
        }
        let (repository, version) = if let Some((repository, digest)) = path.split_once('@') {
            if !is_sha256_digest(digest) {
                return Err(error(
                    "a digest must be sha256: and 64 lowercase hex digits",
                ));
            }
            (repository, Version::Digest(digest.to_owned()))
        } else {
            let (repository, tag) = match path.rsplit_once(':') {
                Some((repository, tag)) if !tag.contains('/') => (repository, tag),
                _ => return Err(error("no :TAG or @sha256:HEX after the repository")),
            };
            let valid_tag = !tag.is_empty()
                && tag.len() <= 128
                && !tag.starts_with(['.', '-'])
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
            if !valid_tag {
                return Err(error(
                    "a tag is at most 128 of [A-Za-z0-9_.-], not first . or -",
                ));
            }
            (repository, Version::Tag(tag.to_owned()))
        };
        let valid_repository = !repository.is_empty()
            && repository.split('/').all(|part| {
                !part.is_empty()
                    && part.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b)
                    })
            });
        if !valid_repository {
            return Err(error(
                "a repository is lowercase [a-z0-9._-] parts joined by /",
            ));
        }
        Ok(ComponentRef {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            version,
        })
    }

    /// The same repository at `version`.
    pub fn at(&self, version: Version) -> Self {
        ComponentRef {
            version,
            ..self.clone()
        }
    }

    /// As `oci-client` names it.
    pub(crate) fn oci(&self) -> oci_client::Reference {
        let (registry, repository) = (self.registry.clone(), self.repository.clone());
        match &self.version {
            Version::Tag(tag) => oci_client::Reference::with_tag(registry, repository, tag.clone()),
            Version::Digest(digest) => {
                oci_client::Reference::with_digest(registry, repository, digest.clone())
            }
        }
    }
}

impl fmt::Display for ComponentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)?;
        match &self.version {
            Version::Tag(tag) => write!(f, ":{tag}"),
            Version::Digest(digest) => write!(f, "@{digest}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_digests_parse_and_print_back() {
        let tag = ComponentRef::parse("oci://127.0.0.1:5000/policies/policy-rust:v1").expect("tag");
        assert_eq!(tag.registry, "127.0.0.1:5000");
        assert_eq!(tag.repository, "policies/policy-rust");
        assert_eq!(tag.version, Version::Tag("v1".into()));
        assert_eq!(
            tag.to_string(),
            "oci://127.0.0.1:5000/policies/policy-rust:v1"
        );
        let pin = format!("oci://registry.example/p@sha256:{}", "a".repeat(64));
        let digest = ComponentRef::parse(&pin).expect("digest");
        assert!(matches!(digest.version, Version::Digest(_)));
        assert_eq!(digest.to_string(), pin);
    }

    #[test]
    fn bad_references_say_what_is_wrong() {
        for (text, why) in [
            ("https://r/p:v1", "oci://"),
            ("oci://r", "no repository"),
            ("oci://r/p", "no :TAG"),
            ("oci://r/P:v1", "lowercase"),
            ("oci://r/p@sha256:abc", "64 lowercase hex"),
            ("oci://r/p:-x", "a tag"),
            ("oci://r x/p:v1", "HOST[:PORT]"),
        ] {
            let err = ComponentRef::parse(text).expect_err(text).to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
