//! Where things live in etcd, and how an object is encoded in a key's value.

use super::error::{EtcdError, revision};
use etcd_client::KeyValue;
use reactor_core::object::{Meta, Object};

/// The key layout under one prefix: `<prefix>objects/<kind>/<name>`, `<prefix>token`,
/// `<prefix>owners/<shard>`. Kinds and names cannot contain `/`, so each kind is one range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    /// `prefix` gets a trailing `/` if it lacks one, so `/a` never overlaps `/ab`.
    pub fn new(prefix: &str) -> Self {
        let mut prefix = prefix.to_owned();
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        Self { prefix }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn object(&self, kind: &str, name: &str) -> String {
        format!("{}objects/{kind}/{name}", self.prefix)
    }

    /// The prefix of every object of `kind`, or of every object.
    pub fn objects(&self, kind: Option<&str>) -> String {
        match kind {
            Some(kind) => format!("{}objects/{kind}/", self.prefix),
            None => format!("{}objects/", self.prefix),
        }
    }

    pub fn token(&self) -> String {
        format!("{}token", self.prefix)
    }

    /// The cluster's CA (certificate and key), shared by the replicas as the token is.
    pub fn ca(&self) -> String {
        format!("{}ca", self.prefix)
    }

    pub fn owner(&self, shard: u32) -> String {
        format!("{}owners/{shard}", self.prefix)
    }

    pub fn owners(&self) -> String {
        format!("{}owners/", self.prefix)
    }

    pub fn replica(&self, id: &str) -> String {
        format!("{}replicas/{id}", self.prefix)
    }

    pub fn replicas(&self) -> String {
        format!("{}replicas/", self.prefix)
    }
}

/// The stored value: the object without its revision, which is etcd's `mod_revision`.
pub fn encode(object: &Object) -> Result<Vec<u8>, EtcdError> {
    let mut stored = object.clone();
    stored.meta.revision = 0;
    serde_json::to_vec(&stored).map_err(|e| EtcdError::Corrupt {
        key: object.key().to_string(),
        reason: e.to_string(),
    })
}

/// The object stored in `kv`, its revision set from `mod_revision`.
pub fn decode(kv: &KeyValue) -> Result<Object, EtcdError> {
    let mut object = decode_value(kv)?;
    object.meta.revision = revision(kv.mod_revision())?;
    Ok(object)
}

/// The object stored in `kv` with its revision left as stored.
pub fn decode_value(kv: &KeyValue) -> Result<Object, EtcdError> {
    serde_json::from_slice(kv.value()).map_err(|e| EtcdError::Corrupt {
        key: String::from_utf8_lossy(kv.key()).into_owned(),
        reason: e.to_string(),
    })
}

/// A stand-in for an object whose last value etcd no longer has (a delete whose previous value
/// was compacted away): kind and name from the key, nothing else.
pub fn from_key(keys: &Keys, key: &[u8]) -> Result<Object, EtcdError> {
    let text = String::from_utf8_lossy(key);
    let rest = text.strip_prefix(&keys.objects(None));
    let (kind, name) = rest
        .and_then(|r| r.split_once('/'))
        .ok_or_else(|| EtcdError::Corrupt {
            key: text.to_string(),
            reason: "not an object key".into(),
        })?;
    Ok(Object {
        kind: kind.to_owned(),
        name: name.to_owned(),
        labels: Default::default(),
        annotations: Default::default(),
        spec: serde_json::Value::Null,
        status: serde_json::Value::Null,
        meta: Meta::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_do_not_overlap_and_the_prefix_is_closed() {
        let keys = Keys::new("/reactor");
        assert_eq!(keys.object("Policy", "a"), "/reactor/objects/Policy/a");
        assert!(
            !keys
                .object("Policy-x", "a")
                .starts_with(&keys.objects(Some("Policy")))
        );
        assert!(keys.object("Policy", "a").starts_with(&keys.objects(None)));
        assert_eq!(Keys::new("/r/").prefix(), "/r/");
    }
}
