//! The compiled-code cache through the real binary (issue 37, part 5): while a new version
//! compiles, `components` says so; once four versions of one component were swapped in, the
//! cache holds only the versions in use — the one serving and the one it replaced (kept for a
//! rollback) — and not the two before.

use reactor_testkit::{Host, eventually, guest, sha256_hex};
use std::collections::BTreeSet;
use std::path::Path;

const NAME: &str = "evict";

/// The versions (wasm sha256) with a compiled entry in the cache.
fn cached(data: &Path) -> BTreeSet<String> {
    std::fs::read_dir(data.join("cache"))
        .expect("cache folder")
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".cwasm")?;
            Some(stem.split_once('-')?.0.to_owned())
        })
        .collect()
}

#[test]
fn a_new_version_shows_compiling_and_the_cache_keeps_only_the_versions_in_use() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("components")).expect("components folder");
    let host = Host::start(&data, &[]);
    let mut shas = Vec::new();
    let mut seen_compiling = Vec::new();
    for version in ["version-1", "version-2", "version-trap", "misbehave"] {
        let bytes = guest(version);
        let sha = sha256_hex(&bytes);
        let tmp_file = host.components_dir().join(".evict.tmp");
        std::fs::write(&tmp_file, &bytes).expect("write");
        std::fs::rename(
            &tmp_file,
            host.components_dir().join(format!("{NAME}.wasm")),
        )
        .expect("rename in");
        let before = shas.last().cloned();
        eventually(&format!("{NAME} serves {version}"), 120, || {
            let now = host.component(NAME);
            if now["compiling"] == sha.as_str() {
                // The version serving meanwhile is still shown serving.
                assert_eq!(now["sha256"].as_str(), before.as_deref(), "{now}");
                let table = reactor_testkit::stdout(&host.cli(&["components"]));
                let row = table
                    .lines()
                    .find(|l| l.starts_with("evict "))
                    .unwrap_or_default();
                if row.contains("compiling") {
                    assert!(row.contains(&format!("compiling {}", &sha[..12])), "{row}");
                    seen_compiling.push(version);
                }
            }
            (now["sha256"] == sha.as_str() && now["compiling"].is_null()).then_some(())
        });
        shas.push(sha);
    }
    eprintln!("seen compiling: {seen_compiling:?}");
    assert!(!seen_compiling.is_empty(), "no swap was seen compiling");
    let expected: BTreeSet<String> = shas[2..].iter().cloned().collect();
    assert_eq!(
        cached(&data),
        expected,
        "the serving version and the one it replaced"
    );
}
