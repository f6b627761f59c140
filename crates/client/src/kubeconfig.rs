//! The client file: a kubeconfig (server address, CA, credential), written by `serve` as
//! `<data>/kubeconfig`, read by the CLI, and by kubectl and Kubernetes' client libraries.

use base64::Engine;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    #[error("cannot read the client file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the client file {path} is not a kubeconfig: {reason}")]
    Malformed { path: PathBuf, reason: String },
    #[error("cannot write the client file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What a client needs from the file: where, whom to trust, what to present.
#[derive(Clone, Default)]
pub struct ClientFile {
    pub server: String,
    pub ca_pem: Option<String>,
    pub token: Option<String>,
}

impl std::fmt::Debug for ClientFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFile")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct Kubeconfig {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    clusters: Vec<Named<Cluster>>,
    #[serde(default)]
    users: Vec<Named<User>>,
    #[serde(default)]
    contexts: Vec<Named<Context>>,
    #[serde(default)]
    current_context: String,
}

#[derive(Serialize, Deserialize)]
struct Named<T> {
    name: String,
    #[serde(flatten)]
    value: T,
}

#[derive(Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    cluster: ClusterFields,
}

#[derive(Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct ClusterFields {
    server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    certificate_authority_data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    certificate_authority: Option<PathBuf>,
}

#[derive(Serialize, Deserialize, Default)]
struct User {
    user: UserFields,
}

#[derive(Serialize, Deserialize, Default)]
struct UserFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token: Option<String>,
    #[serde(default, rename = "tokenFile", skip_serializing_if = "Option::is_none")]
    token_file: Option<PathBuf>,
}

#[derive(Serialize, Deserialize, Default)]
struct Context {
    context: ContextFields,
}

#[derive(Serialize, Deserialize, Default)]
struct ContextFields {
    cluster: String,
    user: String,
}

const NAME: &str = "reactor-host";

/// Writes a kubeconfig for `file` at `path` (0600: it holds a credential).
pub fn write(path: &Path, file: &ClientFile, user: &str) -> Result<(), KubeconfigError> {
    let text = render(file, user).map_err(|source| KubeconfigError::Write {
        path: path.to_owned(),
        source,
    })?;
    reactor_core::private::write_durably(path, text.as_bytes()).map_err(|source| {
        KubeconfigError::Write {
            path: path.to_owned(),
            source,
        }
    })
}

/// A kubeconfig for `file` whose user is named `user`, as text.
pub fn render(file: &ClientFile, user: &str) -> Result<String, std::io::Error> {
    let config = Kubeconfig {
        api_version: "v1".into(),
        kind: "Config".into(),
        clusters: vec![Named {
            name: NAME.into(),
            value: Cluster {
                cluster: ClusterFields {
                    server: file.server.clone(),
                    certificate_authority_data: file
                        .ca_pem
                        .as_ref()
                        .map(|pem| base64::engine::general_purpose::STANDARD.encode(pem)),
                    certificate_authority: None,
                },
            },
        }],
        users: vec![Named {
            name: user.into(),
            value: User {
                user: UserFields {
                    token: file.token.clone(),
                    token_file: None,
                },
            },
        }],
        contexts: vec![Named {
            name: NAME.into(),
            value: Context {
                context: ContextFields {
                    cluster: NAME.into(),
                    user: user.into(),
                },
            },
        }],
        current_context: NAME.into(),
    };
    serde_yaml_ng::to_string(&config).map_err(std::io::Error::other)
}

/// The current context's server, CA and token in the kubeconfig at `path`.
pub fn read(path: &Path) -> Result<ClientFile, KubeconfigError> {
    let malformed = |reason: String| KubeconfigError::Malformed {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|source| KubeconfigError::Read {
        path: path.to_owned(),
        source,
    })?;
    let config: Kubeconfig =
        serde_yaml_ng::from_str(&text).map_err(|e| malformed(e.to_string()))?;
    let context = match config
        .contexts
        .iter()
        .find(|c| c.name == config.current_context)
    {
        Some(context) => &context.value.context,
        None if config.contexts.len() == 1 => &config.contexts[0].value.context,
        None => {
            return Err(malformed(format!(
                "no context {:?} (current-context)",
                config.current_context
            )));
        }
    };
    let cluster = config
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .ok_or_else(|| malformed(format!("no cluster {:?}", context.cluster)))?;
    let cluster = &cluster.value.cluster;
    let relative = |p: &Path| match path.parent() {
        Some(dir) if p.is_relative() => dir.join(p),
        _ => p.to_owned(),
    };
    let ca_pem = match (
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
    ) {
        (Some(data), _) => Some(
            base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(|| malformed("certificate-authority-data is not base64 PEM".into()))?,
        ),
        (None, Some(file)) => {
            let file = relative(file);
            Some(
                std::fs::read_to_string(&file)
                    .map_err(|source| KubeconfigError::Read { path: file, source })?,
            )
        }
        (None, None) => None,
    };
    let user = config.users.iter().find(|u| u.name == context.user);
    let token = match user.map(|u| &u.value.user) {
        Some(UserFields {
            token: Some(token), ..
        }) => Some(token.trim().to_owned()),
        Some(UserFields {
            token_file: Some(file),
            ..
        }) => {
            let file = relative(file);
            let text = std::fs::read_to_string(&file)
                .map_err(|source| KubeconfigError::Read { path: file, source })?;
            Some(text.trim().to_owned())
        }
        _ => None,
    };
    Ok(ClientFile {
        server: cluster.server.clone(),
        ca_pem,
        token,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_then_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kubeconfig");
        let file = ClientFile {
            server: "https://127.0.0.1:7800".into(),
            ca_pem: Some("-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n".into()),
            token: Some("secret".into()),
        };
        write(&path, &file, "admin").expect("write");
        let read = read(&path).expect("read");
        assert_eq!(read.server, file.server);
        assert_eq!(read.ca_pem, file.ca_pem);
        assert_eq!(read.token, file.token);
        assert!(!format!("{read:?}").contains("secret"));
    }

    #[test]
    fn a_file_that_is_not_a_kubeconfig_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, "clusters: 3\n").expect("write");
        let error = read(&path).expect_err("malformed");
        assert!(error.to_string().contains("kubeconfig"), "{error}");
    }
}
