//! Pulling a component from a registry: its manifest (checked against the Wasm layout), its
//! one layer (bounded in size, its bytes checked against its digest) and, when asked, the
//! signature stored beside it. Every call is bounded by the registry's timeout.

use crate::access::Access;
use crate::artifact::{
    self, EMPTY_CONFIG_MEDIA_TYPE, LayoutError, MANIFEST_MEDIA_TYPE, MAX_SIGNATURE_BYTES,
    SIGNATURE_MEDIA_TYPE, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE,
};
use crate::reference::{ComponentRef, Version};
use futures::StreamExt;
use oci_client::manifest::OciDescriptor;
use reactor_core::one_line::one_line;
use sha2::{Digest, Sha256};
use std::future::Future;
use std::time::Duration;

/// Why a pull failed.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// No client could be made for the registry.
    #[error(transparent)]
    Access(#[from] crate::access::AccessError),
    /// The registry did not answer in time.
    #[error("{what}: no answer within {}", humantime(*.timeout))]
    Timeout {
        /// What was asked.
        what: String,
        /// The bound.
        timeout: Duration,
    },
    /// The registry refused or could not be reached.
    #[error("{what}: {message}")]
    Registry {
        /// What was asked.
        what: String,
        /// The error and its causes, on one line.
        message: String,
    },
    /// The manifest is not of the Wasm layout.
    #[error("{what}: {source}")]
    Layout {
        /// Whose manifest: `its manifest` (the component's) or the signature's.
        what: String,
        /// What is wrong.
        source: LayoutError,
    },
    /// The layer's bytes do not hash to its digest, or are more than it said.
    #[error("{what} {digest} {problem}")]
    Layer {
        /// Whose layer: `its layer` (the component's) or the signature's.
        what: String,
        /// The layer's digest.
        digest: String,
        /// What is wrong with its bytes.
        problem: String,
    },
}

fn humantime(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// A component pulled.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The digest of its manifest, `sha256:HEX`.
    pub manifest_digest: String,
    /// The digest of its wasm, `sha256:HEX`.
    pub layer_digest: String,
    /// The wasm, whose sha256 is `layer_digest`.
    pub bytes: Vec<u8>,
}

/// Runs one registry call `what` within the access's timeout.
pub(crate) async fn bounded<T, E: std::error::Error>(
    access: &Access,
    what: impl Fn() -> String,
    call: impl Future<Output = Result<T, E>>,
) -> Result<T, PullError> {
    match tokio::time::timeout(access.timeout, call).await {
        Err(_) => Err(PullError::Timeout {
            what: what(),
            timeout: access.timeout,
        }),
        Ok(Err(e)) => Err(PullError::Registry {
            what: what(),
            message: one_line(&e),
        }),
        Ok(Ok(value)) => Ok(value),
    }
}

/// The manifest of `reference` and its digest (checked by the client against the pin or
/// the registry's `Docker-Content-Digest`).
async fn manifest(
    client: &oci_client::Client,
    access: &Access,
    reference: &ComponentRef,
) -> Result<(bytes::Bytes, String), PullError> {
    bounded(
        access,
        || format!("pull the manifest of {reference}"),
        client.pull_manifest_raw(&reference.oci(), access.auth(), &[MANIFEST_MEDIA_TYPE]),
    )
    .await
}

/// Pulls the component `reference` names; `cached` answers the wasm of a layer digest
/// already kept, so that a known layer is not downloaded again.
pub async fn component(
    access: &Access,
    reference: &ComponentRef,
    limit: u64,
    cached: impl Fn(&str) -> Option<Vec<u8>>,
) -> Result<Pulled, PullError> {
    let client = access.client()?;
    let (body, manifest_digest) = manifest(&client, access, reference).await?;
    let layout = |source| PullError::Layout {
        what: "its manifest".into(),
        source,
    };
    let layer = artifact::single_layer(&body, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE, limit)
        .map_err(layout)?;
    if let Some(bytes) = cached(&layer.digest) {
        return Ok(Pulled {
            manifest_digest,
            layer_digest: layer.digest,
            bytes,
        });
    }
    let pinned = reference.at(Version::Digest(manifest_digest.clone()));
    let bytes = blob(
        &client,
        access,
        &pinned,
        "its layer",
        &layer,
        WASM_LAYER_MEDIA_TYPE,
    )
    .await?;
    Ok(Pulled {
        manifest_digest,
        layer_digest: layer.digest,
        bytes,
    })
}

/// The signature stored beside the component whose manifest digest is `manifest_digest`;
/// `None` when the registry has none.
pub async fn signature(
    access: &Access,
    reference: &ComponentRef,
    manifest_digest: &str,
) -> Result<Option<String>, PullError> {
    let client = access.client()?;
    let tagged = reference.at(Version::Tag(artifact::signature_tag(manifest_digest)));
    let found = tokio::time::timeout(
        access.timeout,
        client.pull_manifest_raw(&tagged.oci(), access.auth(), &[MANIFEST_MEDIA_TYPE]),
    )
    .await;
    let body = match found {
        Err(_) => {
            return Err(PullError::Timeout {
                what: format!("look up the signature {tagged}"),
                timeout: access.timeout,
            });
        }
        Ok(Err(oci_client::errors::OciDistributionError::ImageManifestNotFoundError(_))) => {
            return Ok(None);
        }
        Ok(Err(e)) if is_not_found(&e) => return Ok(None),
        Ok(Err(e)) => {
            return Err(PullError::Registry {
                what: format!("look up the signature {tagged}"),
                message: one_line(&e),
            });
        }
        Ok(Ok((body, _))) => body,
    };
    let layer = artifact::single_layer(
        &body,
        EMPTY_CONFIG_MEDIA_TYPE,
        SIGNATURE_MEDIA_TYPE,
        MAX_SIGNATURE_BYTES,
    )
    .map_err(|source| PullError::Layout {
        what: format!("the manifest of the signature {tagged}"),
        source,
    })?;
    let whose = format!("the layer of the signature {tagged}");
    let bytes = blob(
        &client,
        access,
        &tagged,
        &whose,
        &layer,
        SIGNATURE_MEDIA_TYPE,
    )
    .await?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| PullError::Layer {
            what: whose.clone(),
            digest: layer.digest,
            problem: "is not text, so no minisign signature".into(),
        })
}

fn is_not_found(error: &oci_client::errors::OciDistributionError) -> bool {
    use oci_client::errors::OciDistributionError as E;
    match error {
        E::RegistryError { envelope, .. } => envelope
            .errors
            .iter()
            .any(|e| matches!(e.code, oci_client::errors::OciErrorCode::ManifestUnknown)),
        E::ServerError { code, .. } => *code == 404,
        _ => false,
    }
}

/// The bytes of `layer`, at most its size, checked against its digest.
async fn blob(
    client: &oci_client::Client,
    access: &Access,
    reference: &ComponentRef,
    what: &str,
    layer: &artifact::Layer,
    media_type: &str,
) -> Result<Vec<u8>, PullError> {
    let problem = |problem: String| PullError::Layer {
        what: what.to_owned(),
        digest: layer.digest.clone(),
        problem,
    };
    let descriptor = OciDescriptor {
        media_type: media_type.to_owned(),
        digest: layer.digest.clone(),
        size: i64::try_from(layer.size).unwrap_or(i64::MAX),
        ..OciDescriptor::default()
    };
    let read = async {
        let mut stream = client
            .pull_blob_stream(&reference.oci(), &descriptor)
            .await
            .map_err(|e| problem(format!("could not be pulled: {}", one_line(&e))))?;
        let mut bytes = Vec::with_capacity(usize::try_from(layer.size).unwrap_or(0));
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| {
                match e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<oci_client::errors::DigestError>())
                {
                    Some(oci_client::errors::DigestError::VerificationError { actual, .. }) => {
                        problem(format!("does not match its bytes, which hash to {actual}"))
                    }
                    _ => problem(format!("could not be read whole: {}", one_line(&e))),
                }
            })?;
            if (bytes.len() + chunk.len()) as u64 > layer.size {
                return Err(problem(format!(
                    "has more bytes than the {} its manifest says",
                    layer.size
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    };
    let bytes = match tokio::time::timeout(access.timeout, read).await {
        Err(_) => {
            return Err(PullError::Timeout {
                what: format!("pull the layer {} of {reference}", layer.digest),
                timeout: access.timeout,
            });
        }
        Ok(read) => read?,
    };
    let actual = format!("sha256:{}", hex(&Sha256::digest(&bytes)));
    if actual != layer.digest {
        return Err(problem(format!(
            "does not match its bytes, which hash to {actual}"
        )));
    }
    Ok(bytes)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
