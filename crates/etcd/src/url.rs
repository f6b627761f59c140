//! `etcd://host:port[,host:port][/prefix]`: the endpoints of one etcd cluster and our key prefix.

use super::error::EtcdError;

/// The prefix used when the URL names none.
pub const DEFAULT_PREFIX: &str = "/reactor/";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdUrl {
    /// `http://host:port`, as etcd-client connects to them.
    pub endpoints: Vec<String>,
    pub prefix: String,
}

impl EtcdUrl {
    pub fn parse(url: &str) -> Result<Self, EtcdError> {
        let bad = |reason: &str| EtcdError::Url {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let rest = url
            .strip_prefix("etcd://")
            .ok_or_else(|| bad("it must start with etcd://"))?;
        let (hosts, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        let mut endpoints = Vec::new();
        for host in hosts.split(',') {
            let (name, port) = host
                .rsplit_once(':')
                .ok_or_else(|| bad("every endpoint needs host:port"))?;
            if name.is_empty() || port.parse::<u16>().is_err() {
                return Err(bad("every endpoint needs host:port"));
            }
            endpoints.push(format!("http://{host}"));
        }
        let prefix = match path.trim_end_matches('/') {
            "" => DEFAULT_PREFIX.to_owned(),
            trimmed => format!("{trimmed}/"),
        };
        Ok(Self { endpoints, prefix })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_and_prefix() {
        let url = EtcdUrl::parse("etcd://127.0.0.1:2379,10.0.0.2:2379").expect("valid");
        assert_eq!(
            url.endpoints,
            vec!["http://127.0.0.1:2379", "http://10.0.0.2:2379"]
        );
        assert_eq!(url.prefix, "/reactor/");
        let url = EtcdUrl::parse("etcd://h:1/team/a/").expect("valid");
        assert_eq!(url.prefix, "/team/a/");
        for bad in [
            "http://h:1",
            "etcd://",
            "etcd://h",
            "etcd://h:x",
            "etcd://:1",
        ] {
            let err = EtcdUrl::parse(bad).expect_err(bad);
            assert!(
                err.to_string().starts_with("invalid etcd store url"),
                "{err}"
            );
        }
    }
}
