//! The CNCF Wasm OCI artifact layout: an OCI image manifest whose config is
//! `application/vnd.wasm.config.v0+json` and whose one layer is the `application/wasm`
//! component; and the signature artifact stored beside it under the tag
//! `sha256-<manifest hex>.sig`, one `application/vnd.minisign.signature` layer.

use crate::reference::is_sha256_digest;
use serde::Deserialize;

/// The manifest media type pulled and pushed.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config media type of a Wasm component artifact.
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The layer media type of a Wasm component.
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The config media type of a signature artifact (the OCI empty descriptor).
pub const EMPTY_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The layer media type of a minisign signature.
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.minisign.signature";
/// The largest signature file accepted (a minisign one is ~300 bytes).
pub const MAX_SIGNATURE_BYTES: u64 = 4096;
/// The largest manifest accepted.
pub const MAX_MANIFEST_BYTES: usize = 64 << 10;

/// Why a manifest is not a Wasm component (or signature) artifact.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// Not JSON of an image manifest.
    #[error("not an OCI image manifest: {0}")]
    NotAManifest(String),
    /// Too big to be a manifest of this layout.
    #[error("{0} bytes, more than the {MAX_MANIFEST_BYTES} a manifest may have")]
    TooBig(usize),
    /// The config is of another media type.
    #[error("the config's media type is {found:?}, not {expected:?}")]
    Config {
        /// What the manifest says.
        found: String,
        /// What the layout needs.
        expected: &'static str,
    },
    /// Not exactly one layer.
    #[error("{0} layers, not one")]
    Layers(usize),
    /// The layer is of another media type.
    #[error("the layer's media type is {found:?}, not {expected:?}")]
    LayerType {
        /// What the manifest says.
        found: String,
        /// What the layout needs.
        expected: &'static str,
    },
    /// The layer's digest is no sha256.
    #[error("the layer's digest {0:?} is not sha256: and 64 lowercase hex digits")]
    Digest(String),
    /// The layer is bigger than allowed.
    #[error("the layer is {size} bytes, more than the {limit} accepted")]
    Size {
        /// What the manifest says.
        size: i64,
        /// The limit.
        limit: u64,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    #[serde(default)]
    media_type: Option<String>,
    config: Descriptor,
    layers: Vec<Descriptor>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    media_type: String,
    digest: String,
    size: i64,
}

/// The one layer a manifest names, checked against the layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// `sha256:HEX`.
    pub digest: String,
    /// Its size in bytes, as the manifest says.
    pub size: u64,
}

/// The layer of `manifest` if it has `config_type` and one layer of `layer_type` of at most
/// `limit` bytes.
pub fn single_layer(
    manifest: &[u8],
    config_type: &'static str,
    layer_type: &'static str,
    limit: u64,
) -> Result<Layer, LayoutError> {
    if manifest.len() > MAX_MANIFEST_BYTES {
        return Err(LayoutError::TooBig(manifest.len()));
    }
    let parsed: Manifest =
        serde_json::from_slice(manifest).map_err(|e| LayoutError::NotAManifest(e.to_string()))?;
    if let Some(media_type) = parsed.media_type.filter(|m| m != MANIFEST_MEDIA_TYPE) {
        return Err(LayoutError::NotAManifest(format!(
            "its media type is {media_type:?}"
        )));
    }
    if parsed.config.media_type != config_type {
        return Err(LayoutError::Config {
            found: parsed.config.media_type,
            expected: config_type,
        });
    }
    let [layer] = <[Descriptor; 1]>::try_from(parsed.layers)
        .map_err(|layers| LayoutError::Layers(layers.len()))?;
    if layer.media_type != layer_type {
        return Err(LayoutError::LayerType {
            found: layer.media_type,
            expected: layer_type,
        });
    }
    if !is_sha256_digest(&layer.digest) {
        return Err(LayoutError::Digest(layer.digest));
    }
    let size = u64::try_from(layer.size)
        .ok()
        .filter(|size| *size <= limit)
        .ok_or(LayoutError::Size {
            size: layer.size,
            limit,
        })?;
    Ok(Layer {
        digest: layer.digest,
        size,
    })
}

/// The tag a component's signature is stored under: `sha256-<hex>.sig`, after the digest of
/// the component's manifest (cosign's naming).
pub fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", manifest_digest.replacen(':', "-", 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(config: &str, layers: &[(&str, &str, i64)]) -> Vec<u8> {
        let layers: Vec<_> = layers
            .iter()
            .map(|(m, d, s)| serde_json::json!({"mediaType": m, "digest": d, "size": s}))
            .collect();
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": {"mediaType": config, "digest": format!("sha256:{}", "0".repeat(64)), "size": 2},
            "layers": layers,
        }))
        .expect("json")
    }

    #[test]
    fn only_the_wasm_layout_passes() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let ok = manifest(
            WASM_CONFIG_MEDIA_TYPE,
            &[(WASM_LAYER_MEDIA_TYPE, &digest, 10)],
        );
        let check = |m: &[u8]| single_layer(m, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE, 100);
        assert_eq!(
            check(&ok),
            Ok(Layer {
                digest: digest.clone(),
                size: 10
            })
        );
        let tar = manifest(
            WASM_CONFIG_MEDIA_TYPE,
            &[("application/vnd.oci.image.layer.v1.tar", &digest, 10)],
        );
        assert!(
            check(&tar)
                .expect_err("tar")
                .to_string()
                .contains("not \"application/wasm\"")
        );
        let big = manifest(
            WASM_CONFIG_MEDIA_TYPE,
            &[(WASM_LAYER_MEDIA_TYPE, &digest, 101)],
        );
        assert!(matches!(check(&big), Err(LayoutError::Size { .. })));
        let two = manifest(
            WASM_CONFIG_MEDIA_TYPE,
            &[
                (WASM_LAYER_MEDIA_TYPE, &digest, 1),
                (WASM_LAYER_MEDIA_TYPE, &digest, 1),
            ],
        );
        assert_eq!(check(&two), Err(LayoutError::Layers(2)));
        assert!(matches!(
            check(b"<html>"),
            Err(LayoutError::NotAManifest(_))
        ));
        assert_eq!(
            signature_tag(&digest),
            format!("sha256-{}.sig", "a".repeat(64))
        );
    }
}
