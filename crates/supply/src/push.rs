//! Publishing a component in the Wasm OCI layout, and its signature beside it under the tag
//! `sha256-<manifest hex>.sig`.

use crate::access::Access;
use crate::artifact::{
    self, EMPTY_CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, SIGNATURE_MEDIA_TYPE,
    WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE,
};
use crate::pull::{PullError, bounded, hex};
use crate::reference::{ComponentRef, Version};
use sha2::{Digest, Sha256};

/// Why a push failed: as a pull's, a registry's answer or its time.
pub type PushError = PullError;

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// Pushes an artifact of one layer and answers its manifest digest.
async fn push_one(
    access: &Access,
    reference: &ComponentRef,
    config: (&str, Vec<u8>),
    layer: (&str, Vec<u8>),
) -> Result<String, PushError> {
    let client = access.client()?;
    let image = reference.oci();
    let (config_type, config_bytes) = config;
    let (layer_type, layer_bytes) = layer;
    let (config_digest, layer_digest) = (digest(&config_bytes), digest(&layer_bytes));
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": {"mediaType": config_type, "digest": config_digest, "size": config_bytes.len()},
        "layers": [{"mediaType": layer_type, "digest": layer_digest, "size": layer_bytes.len()}],
    });
    let body = serde_json::to_vec(&manifest).map_err(|e| PullError::Registry {
        what: format!("make the manifest of {reference}"),
        message: e.to_string(),
    })?;
    let manifest_digest = digest(&body);
    client
        .store_auth_if_needed(&reference.registry, access.auth())
        .await;
    bounded(
        access,
        || format!("push the layer {layer_digest} to {reference}"),
        client.push_blob(&image, layer_bytes, &layer_digest),
    )
    .await?;
    bounded(
        access,
        || format!("push the config of {reference}"),
        client.push_blob(&image, config_bytes, &config_digest),
    )
    .await?;
    let content_type = http::HeaderValue::from_static(MANIFEST_MEDIA_TYPE);
    bounded(
        access,
        || format!("push the manifest of {reference}"),
        client.push_manifest_raw(&image, body, content_type),
    )
    .await?;
    Ok(manifest_digest)
}

/// Publishes `wasm` at `reference` (its tag, or the digest it must have) and answers the
/// reference pinned to the manifest digest.
pub async fn component(
    access: &Access,
    reference: &ComponentRef,
    wasm: Vec<u8>,
) -> Result<ComponentRef, PushError> {
    let digest = push_one(
        access,
        reference,
        (WASM_CONFIG_MEDIA_TYPE, b"{}".to_vec()),
        (WASM_LAYER_MEDIA_TYPE, wasm),
    )
    .await?;
    Ok(reference.at(Version::Digest(digest)))
}

/// Publishes a minisign `signature` for the component whose manifest digest is
/// `manifest_digest`; answers the reference of the signature.
pub async fn signature(
    access: &Access,
    reference: &ComponentRef,
    manifest_digest: &str,
    signature: Vec<u8>,
) -> Result<ComponentRef, PushError> {
    let tagged = reference.at(Version::Tag(artifact::signature_tag(manifest_digest)));
    push_one(
        access,
        &tagged,
        (EMPTY_CONFIG_MEDIA_TYPE, b"{}".to_vec()),
        (SIGNATURE_MEDIA_TYPE, signature),
    )
    .await?;
    Ok(tagged)
}
