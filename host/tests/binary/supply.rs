//! Components from a real OCI registry (Debian's docker-registry on loopback, plain, with
//! basic auth, with TLS) and signatures checked before load, through the real binary:
//! `component push|sign|keygen`, `serve --config` with `source:` and `trust:`, and
//! `components` showing why a version does not serve.

use reactor_testkit::{
    Etcd, Host, Registry, RegistryOptions, assert_fails_with, built, eventually, guest, metric,
    run_cli, run_cli_env, stdout,
};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The component `name` as `components -o json` shows it, if listed.
fn component(host: &Host, name: &str) -> Option<serde_json::Value> {
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&host.cli(&["components", "-o", "json"]))).ok()?;
    json.as_array()?.iter().find(|c| c["name"] == name).cloned()
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Waits until `name` serves the wasm whose sha256 is `sha`, with no error shown.
fn wait_serving(host: &Host, name: &str, sha: &str) {
    eventually(&format!("{name} serves {sha}"), 60, || {
        component(host, name)
            .filter(|c| c["sha256"] == sha && c["state"] == "ready" && c["error"].is_null())
    });
}

/// Waits until `name` shows an error containing `needle`; answers the component. A timeout
/// fails with what `components` showed last.
fn wait_error(host: &Host, name: &str, needle: &str) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let seen = component(host, name);
        if let Some(c) = seen
            .as_ref()
            .filter(|c| c["error"].as_str().is_some_and(|e| e.contains(needle)))
        {
            return c.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{name} never showed {needle:?}; last seen: {seen:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Writes `wasm` to `dir/file` and answers its path.
fn write(dir: &Path, file: &str, wasm: &[u8]) -> PathBuf {
    std::fs::create_dir_all(dir).expect("folder");
    let path = dir.join(file);
    std::fs::write(&path, wasm).expect("write");
    path
}

/// `component push FILE REF` against `registry`, with `extra` flags; answers the pinned
/// reference it printed.
fn push(registry: &Registry, file: &Path, reference: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "component".to_owned(),
        "push".to_owned(),
        file.display().to_string(),
        reference.to_owned(),
    ];
    args.extend(registry.push_flags());
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_cli(&args);
    assert!(
        out.status.success(),
        "push: {}",
        reactor_testkit::stderr(&out)
    );
    stdout(&out)
        .lines()
        .find_map(|l| l.strip_prefix("pushed "))
        .expect("pushed REF")
        .to_owned()
}

/// A config file with the `supply` section (1s interval and timeout) for `registries`,
/// `trust` keys if any, and the components `(name, revision, source)`.
fn config(registries: &[String], keys: &[&Path], components: &[(&str, u64, &str)]) -> String {
    let mut text = format!(
        "supply:\n  interval: 1s\n  timeout: 1s\n  registries: {{{}}}\n",
        registries.join(", ")
    );
    if !keys.is_empty() {
        let keys: Vec<String> = keys.iter().map(|k| k.display().to_string()).collect();
        text.push_str(&format!("trust:\n  keys: [{}]\n", keys.join(", ")));
    }
    text.push_str("components:\n");
    for (name, revision, source) in components {
        text.push_str(&format!(
            "  {name}: {{revision: {revision}, source: \"{source}\"}}\n"
        ));
    }
    text
}

fn start(data: &Path, config_file: &Path) -> Host {
    let config = config_file.display().to_string();
    Host::start(data, &["--config", &config])
}

#[test]
fn a_tag_is_pulled_followed_and_a_broken_version_never_replaces_the_one_serving() {
    let registry = Registry::start(RegistryOptions::default());
    let tmp = tempfile::tempdir().expect("tempdir");
    let (v1, v2) = (guest("version-1"), guest("version-2"));
    let file = write(tmp.path(), "reactor.wasm", &v1);
    let tag = registry.reference("reactors/versioned:stable");
    let pinned = push(&registry, &file, &tag, &[]);
    assert!(
        pinned.starts_with(&registry.reference("reactors/versioned@sha256:")),
        "{pinned}"
    );

    let config_file = tmp.path().join("reactor.yaml");
    std::fs::write(
        &config_file,
        config(
            &[registry.settings_yaml(None)],
            &[],
            &[("versioned", 1, &tag)],
        ),
    )
    .expect("config");
    let host = start(&tmp.path().join("data"), &config_file);
    wait_serving(&host, "versioned", &sha256(&v1));

    // The tag moves: the new digest is a new version, loaded as a changed file would be.
    std::fs::write(&file, &v2).expect("v2");
    push(&registry, &file, &tag, &[]);
    wait_serving(&host, "versioned", &sha256(&v2));

    // The tag moves to a component that does not compile: v2 keeps serving, the reason shows.
    let broken = write(
        tmp.path(),
        "broken.wasm",
        b"\0asm\x0d\0\x01\0 not a component",
    );
    push(&registry, &broken, &tag, &[]);
    let failed = wait_error(&host, "versioned", "compile");
    assert_eq!(failed["sha256"], sha256(&v2), "{failed}");
    assert_eq!(failed["serving"], true, "{failed}");
}

#[test]
fn replicas_on_one_etcd_serve_the_digest_recorded_by_the_first_to_see_the_tag_move() {
    let registry = Registry::start(RegistryOptions::default());
    let etcd = Etcd::start();
    let url = etcd.url("/reactor");
    let tmp = tempfile::tempdir().expect("tempdir");
    let (v1, v2) = (guest("version-1"), guest("version-2"));
    let file = write(tmp.path(), "reactor.wasm", &v1);
    let tag = registry.reference("reactors/versioned:stable");
    push(&registry, &file, &tag, &[]);
    // Replica a looks the tag up every second, replica b once an hour: b moves with a's record.
    let text = config(
        &[registry.settings_yaml(None)],
        &[],
        &[("versioned", 1, &tag)],
    );
    let replica = |id: &str, interval: &str| {
        let config_file = tmp.path().join(format!("{id}.yaml"));
        let text = text.replace("interval: 1s", &format!("interval: {interval}"));
        std::fs::write(&config_file, text).expect("config");
        let config = config_file.display().to_string();
        let data = tmp.path().join(id);
        Host::start(
            &data,
            &["--config", &config, "--store", &url, "--replica-id", id],
        )
    };
    let a = replica("a", "1s");
    let b = replica("b", "1h");
    wait_serving(&a, "versioned", &sha256(&v1));
    wait_serving(&b, "versioned", &sha256(&v1));

    std::fs::write(&file, &v2).expect("v2");
    push(&registry, &file, &tag, &[]);
    wait_serving(&a, "versioned", &sha256(&v2));
    wait_serving(&b, "versioned", &sha256(&v2));
    assert!(
        a.log()
            .contains("the tag moved: its digest recorded for every replica"),
        "{}",
        a.log()
    );
}

#[test]
fn a_registry_down_slow_or_answering_garbage_leaves_the_cached_version_serving() {
    let mut registry = Registry::start(RegistryOptions::default());
    let tmp = tempfile::tempdir().expect("tempdir");
    let wasm = std::fs::read(built().join("probe.wasm")).expect("probe");
    let file = write(tmp.path(), "probe.wasm", &wasm);
    let tag = registry.reference("reactors/probe:v1");
    push(&registry, &file, &tag, &[]);
    let config_file = tmp.path().join("reactor.yaml");
    std::fs::write(
        &config_file,
        config(&[registry.settings_yaml(None)], &[], &[("probe", 1, &tag)]),
    )
    .expect("config");
    let host = start(&tmp.path().join("data"), &config_file);
    wait_serving(&host, "probe", &sha256(&wasm));

    registry.stop();
    let down = wait_error(&host, "probe", "keeps serving");
    assert!(
        down["error"]
            .as_str()
            .is_some_and(|e| e.starts_with(&format!("source {tag}: "))),
        "{down}"
    );
    assert_eq!(down["sha256"], sha256(&wasm), "{down}");
    assert!(
        host.log()
            .contains("the version loaded before keeps serving"),
        "logged too"
    );
    registry.resume();
    wait_serving(&host, "probe", &sha256(&wasm));

    // A registry that accepts and never answers: bounded by the 1s timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let silent_host = silent.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        let held: Vec<_> = silent.incoming().take(64).collect();
        std::thread::sleep(std::time::Duration::from_secs(120));
        drop(held);
    });
    // A registry answering garbage.
    let garbage = fake_registry(|_| (200, "text/html", b"<html>no registry here</html>".to_vec()));
    let registries = [
        registry.settings_yaml(None),
        format!("\"{silent_host}\": {{plain_http: true}}"),
        format!("\"{garbage}\": {{plain_http: true}}"),
    ];
    let slow_source = format!("oci://{silent_host}/reactors/probe:v1");
    std::fs::write(
        &config_file,
        config(&registries, &[], &[("probe", 2, &slow_source)]),
    )
    .expect("config");
    let slow = wait_error(&host, "probe", "no answer within 1.0s");
    assert_eq!(
        slow["sha256"],
        sha256(&wasm),
        "the cached version serves: {slow}"
    );
    let garbage_source = format!("oci://{garbage}/reactors/probe:v1");
    std::fs::write(
        &config_file,
        config(&registries, &[], &[("probe", 3, &garbage_source)]),
    )
    .expect("config");
    let garbled = wait_error(
        &host,
        "probe",
        &format!("source {garbage_source}: its manifest: not an OCI image manifest"),
    );
    assert!(
        garbled["error"]
            .as_str()
            .is_some_and(|e| e.contains("keeps serving")),
        "{garbled}"
    );
    assert_eq!(garbled["sha256"], sha256(&wasm), "{garbled}");
}

#[test]
fn a_pinned_digest_restarts_from_the_cache_without_its_registry_or_a_recompile() {
    let mut registry = Registry::start(RegistryOptions::default());
    let tmp = tempfile::tempdir().expect("tempdir");
    let wasm = std::fs::read(built().join("probe.wasm")).expect("probe");
    let file = write(tmp.path(), "probe.wasm", &wasm);
    let pinned = push(
        &registry,
        &file,
        &registry.reference("reactors/probe:v1"),
        &[],
    );
    let config_file = tmp.path().join("reactor.yaml");
    std::fs::write(
        &config_file,
        config(
            &[registry.settings_yaml(None)],
            &[],
            &[("probe", 1, &pinned)],
        ),
    )
    .expect("config");
    let data = tmp.path().join("data");
    let mut host = start(&data, &config_file);
    wait_serving(&host, "probe", &sha256(&wasm));
    host.kill9();
    drop(host);

    registry.stop();
    let host = start(&data, &config_file);
    wait_serving(&host, "probe", &sha256(&wasm));
    // A few intervals pass: a pin never asks its registry again (it would show the error).
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let after = component(&host, "probe").expect("listed");
    assert!(after["error"].is_null(), "no registry call: {after}");
    let metrics = host.metrics();
    let series = |family: &str| format!("{family}{{component=\"probe\"}}");
    assert_eq!(
        metric(&metrics, &series("reactor_component_cache_hits_total")),
        Some(1.0),
        "loaded from the compile cache"
    );
    assert_eq!(
        metric(&metrics, &series("reactor_component_compiles_total")).unwrap_or(0.0),
        0.0,
        "no recompile"
    );
}

#[test]
fn basic_auth_and_tls_registries_take_credentials_from_a_file_and_never_show_them() {
    let registry = Registry::start(RegistryOptions {
        auth: true,
        tls: true,
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let wasm = std::fs::read(built().join("probe.wasm")).expect("probe");
    let file = write(tmp.path(), "probe.wasm", &wasm);
    let tag = registry.reference("reactors/probe:v1");

    // Without credentials the registry refuses: one line, no password anywhere.
    let mut args: Vec<String> = vec![
        "component".into(),
        "push".into(),
        file.display().to_string(),
        tag.clone(),
    ];
    args.extend(registry.push_flags());
    let refused = run_cli(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!refused.status.success());
    let credentials = registry.credentials_file(tmp.path());
    let creds = credentials.display().to_string();
    push(&registry, &file, &tag, &["--credentials", &creds]);
    // The environment works too.
    let env_value = format!("{}:{}", Registry::USER, Registry::PASSWORD);
    let out = run_cli_env(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[("REACTOR_REGISTRY_CREDENTIALS", &env_value)],
    );
    assert!(out.status.success(), "{}", reactor_testkit::stderr(&out));
    // An untrusted certificate is refused.
    let plain: Vec<String> = vec![
        "component".into(),
        "push".into(),
        file.display().to_string(),
        tag.clone(),
        "--credentials".into(),
        creds.clone(),
    ];
    let untrusted = run_cli(&plain.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!untrusted.status.success(), "no CA, no trust");

    let config_file = tmp.path().join("reactor.yaml");
    std::fs::write(
        &config_file,
        config(
            &[registry.settings_yaml(Some(&credentials))],
            &[],
            &[("probe", 1, &tag)],
        ),
    )
    .expect("config");
    let host = start(&tmp.path().join("data"), &config_file);
    wait_serving(&host, "probe", &sha256(&wasm));
    for text in [
        host.log(),
        stdout(&host.cli(&["components", "-o", "json"])),
        reactor_testkit::stderr(&refused),
        reactor_testkit::stderr(&untrusted),
    ] {
        assert!(
            !text.contains(Registry::PASSWORD),
            "the password is never shown"
        );
    }
}

#[test]
fn manifests_off_the_wasm_layout_or_whose_digest_lies_are_refused() {
    let wasm = std::fs::read(built().join("probe.wasm")).expect("probe");
    let layer = format!("sha256:{}", sha256(&wasm));
    let other = format!("sha256:{}", sha256(b"other bytes"));
    let manifest = |media_type: &str, digest: &str| {
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.wasm.config.v0+json", "digest": format!("sha256:{}", sha256(b"{}")), "size": 2},
            "layers": [{"mediaType": media_type, "digest": digest, "size": wasm.len()}],
        }))
        .expect("json")
    };
    let tar = manifest("application/vnd.oci.image.layer.v1.tar+gzip", &layer);
    let lying = manifest("application/wasm", &other);
    let served = wasm.clone();
    let fake = fake_registry(move |path| {
        if path.ends_with("/manifests/tar") {
            (
                200,
                "application/vnd.oci.image.manifest.v1+json",
                tar.clone(),
            )
        } else if path.ends_with("/manifests/lying") {
            (
                200,
                "application/vnd.oci.image.manifest.v1+json",
                lying.clone(),
            )
        } else if path.contains("/blobs/") {
            (200, "application/octet-stream", served.clone())
        } else {
            (
                404,
                "application/json",
                b"{\"errors\":[{\"code\":\"MANIFEST_UNKNOWN\",\"message\":\"unknown\"}]}".to_vec(),
            )
        }
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let config_file = tmp.path().join("reactor.yaml");
    let (tar_source, lying_source) = (
        format!("oci://{fake}/r/p:tar"),
        format!("oci://{fake}/r/p:lying"),
    );
    std::fs::write(
        &config_file,
        config(
            &[format!("\"{fake}\": {{plain_http: true}}")],
            &[],
            &[("tarred", 1, &tar_source), ("lying", 1, &lying_source)],
        ),
    )
    .expect("config");
    let host = start(&tmp.path().join("data"), &config_file);
    let tarred = wait_error(
        &host,
        "tarred",
        "its manifest: the layer's media type is \"application/vnd.oci.image.layer.v1.tar+gzip\", not \"application/wasm\"",
    );
    assert_eq!(tarred["serving"], false, "{tarred}");
    let lied = wait_error(
        &host,
        "lying",
        &format!("its layer {other} does not match its bytes, which hash to {layer}"),
    );
    assert_eq!(lied["serving"], false, "{lied}");
}

/// keygen through the CLI: answers (public key, secret key).
fn keygen(dir: &Path, stem: &str) -> (PathBuf, PathBuf) {
    let stem = dir.join(stem);
    let out = run_cli(&["component", "keygen", &stem.display().to_string()]);
    assert!(
        out.status.success(),
        "keygen: {}",
        reactor_testkit::stderr(&out)
    );
    (stem.with_extension("pub"), stem.with_extension("key"))
}

fn sign(file: &Path, key: &Path) {
    let out = run_cli(&[
        "component",
        "sign",
        &file.display().to_string(),
        "--key",
        &key.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "sign: {}",
        reactor_testkit::stderr(&out)
    );
}

fn minisig(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.minisig", file.display()))
}

#[test]
fn with_a_trust_policy_only_components_signed_by_its_keys_load_from_the_folder() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (public, secret) = keygen(tmp.path(), "release");
    let (_, stranger) = keygen(tmp.path(), "stranger");
    // A key made by Debian's minisign tool, trusted too: signatures interoperate.
    let tool_pub = tmp.path().join("tool.pub");
    let tool_key = tmp.path().join("tool.key");
    let made = std::process::Command::new("minisign")
        .args(["-G", "-W", "-p"])
        .arg(&tool_pub)
        .arg("-s")
        .arg(&tool_key)
        .output()
        .expect("minisign (scripts/setup.sh)");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let config_file = tmp.path().join("reactor.yaml");
    std::fs::write(
        &config_file,
        format!(
            "trust:\n  keys: [{}, {}]\n",
            public.display(),
            tool_pub.display()
        ),
    )
    .expect("config");
    let data = tmp.path().join("data");
    let dir = data.join("components");
    let probe = std::fs::read(built().join("probe.wasm")).expect("probe");
    let (v1, v2) = (guest("version-1"), guest("version-2"));

    let signed = write(&dir, "probe.wasm", &probe);
    sign(&signed, &secret);
    let by_tool = write(&dir, "versioned.wasm", &v1);
    let out = std::process::Command::new("minisign")
        .arg("-S")
        .arg("-s")
        .arg(&tool_key)
        .arg("-m")
        .arg(&by_tool)
        .output()
        .expect("minisign");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    write(&dir, "unsigned.wasm", &v2);
    let by_stranger = write(&dir, "stranger.wasm", &v2);
    sign(&by_stranger, &stranger);
    let other_digest = write(&dir, "other.wasm", &v2);
    std::fs::copy(minisig(&signed), minisig(&other_digest))
        .expect("a signature over probe's bytes");
    let truncated = write(&dir, "truncated.wasm", &v2);
    sign(&truncated, &secret);
    let text = std::fs::read_to_string(minisig(&truncated)).expect("sig");
    std::fs::write(minisig(&truncated), &text[..text.len() / 2]).expect("truncate");

    let host = start(&data, &config_file);
    wait_serving(&host, "probe", &sha256(&probe));
    wait_serving(&host, "versioned", &sha256(&v1));
    let reason = |name: &str, needle: &str| {
        let c = wait_error(&host, name, needle);
        assert_eq!(c["serving"], false, "{c}");
    };
    reason("unsigned", "unsigned: no signature");
    reason("stranger", "not among the trusted keys");
    reason("other", "over other bytes");
    reason("truncated", "not a minisign signature");
    assert!(host.log().contains("unsigned: no signature"), "logged too");

    // A new version without a signature: the signed one keeps serving, the reason shows.
    std::fs::write(&by_tool, &v2).expect("unsigned v2");
    let held = wait_error(&host, "versioned", "over other bytes");
    assert_eq!(held["sha256"], sha256(&v1), "{held}");
    // Its signature arrives: it loads.
    sign(&by_tool, &secret);
    wait_serving(&host, "versioned", &sha256(&v2));
}

/// The misbehave guest declaring `flags` (`component annotate` flags), written to
/// `dir/file` and signed with `key`.
fn annotated_and_signed(dir: &Path, file: &str, flags: &[&str], key: &Path) -> PathBuf {
    let path = write(dir, file, &guest("misbehave"));
    let mut args = vec!["component", "annotate", path.to_str().expect("utf-8 path")];
    args.extend(flags);
    let out = run_cli(&args);
    assert!(
        out.status.success(),
        "annotate: {}",
        reactor_testkit::stderr(&out)
    );
    sign(&path, key);
    path
}

/// Puts `file` and its signature in `dir` as component `name`, the signature first, each
/// renamed in; answers the version's sha256.
fn deploy_signed(dir: &Path, name: &str, file: &Path) -> String {
    std::fs::create_dir_all(dir).expect("folder");
    for (from, to) in [
        (minisig(file), format!("{name}.wasm.minisig")),
        (file.to_owned(), format!("{name}.wasm")),
    ] {
        let tmp = dir.join(format!(".{to}.tmp"));
        std::fs::copy(&from, &tmp).expect("copy");
        std::fs::rename(&tmp, dir.join(&to)).expect("rename it in");
    }
    sha256(&std::fs::read(file).expect("read"))
}

/// Writes a config file trusting only `keys`, renamed in whole (a watching server reads it
/// once, never half written).
fn write_trust(config_file: &Path, keys: &[&Path]) {
    let keys: Vec<String> = keys.iter().map(|k| k.display().to_string()).collect();
    let text = format!("trust:\n  keys: [{}]\n", keys.join(", "));
    let staged = config_file.with_extension("yaml.tmp");
    std::fs::write(&staged, text).expect("config");
    std::fs::rename(&staged, config_file).expect("rename the config in");
}

#[test]
fn a_version_restored_after_a_restart_is_checked_again_against_the_keys_trusted_now() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (old_public, old_secret) = keygen(tmp.path(), "old");
    let (new_public, new_secret) = keygen(tmp.path(), "new");
    let config_file = tmp.path().join("reactor.yaml");
    let trusting = |keys: &[&Path]| write_trust(&config_file, keys);
    let data = tmp.path().join("data");
    let dir = data.join("components");
    // v1, signed by the old key, serves; v2 declares more (it waits for an approval) and is
    // signed by the new key.
    let v1 = annotated_and_signed(tmp.path(), "v1.wasm", &["--writes", "Note"], &old_secret);
    let v2 = annotated_and_signed(
        tmp.path(),
        "v2.wasm",
        &["--writes", "Note,Secret"],
        &new_secret,
    );
    trusting(&[&old_public, &new_public]);
    let v1_sha = deploy_signed(&dir, "misbehave", &v1);
    let mut host = start(&data, &config_file);
    wait_serving(&host, "misbehave", &v1_sha);
    let v2_sha = deploy_signed(&dir, "misbehave", &v2);
    let waits = |host: &Host| {
        eventually("v2 waits for an approval", 60, || {
            let c = component(host, "misbehave")?;
            (c["waiting"]["sha256"] == v2_sha.as_str() && c["sha256"] == v1_sha.as_str())
                .then_some(())
        })
    };
    waits(&host);

    // A restart with both keys trusted: v1 serves again first, admitted by the signature
    // kept beside it (its file is gone from the folder), and v2 still waits.
    drop(host);
    host = start(&data, &config_file);
    wait_serving(&host, "misbehave", &v1_sha);
    waits(&host);
    let again = "the version serving before the restart serves again";
    assert_eq!(host.log().matches(again).count(), 1, "{}", host.log());

    // The old key is no longer trusted: v1 does not serve again; v2 loads as a first
    // version, checked against the new key.
    drop(host);
    trusting(&[&new_public]);
    host = start(&data, &config_file);
    wait_serving(&host, "misbehave", &v2_sha);
    let log = host.log();
    assert_eq!(
        log.matches(again).count(),
        1,
        "v1 never served again: {log}"
    );
    assert!(
        log.contains("the version serving before the restart cannot serve again")
            && log.contains("not among the trusted keys"),
        "{log}"
    );
}

#[test]
fn a_config_reload_that_changes_the_trusted_keys_checks_every_version_loaded_again() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (old_public, old_secret) = keygen(tmp.path(), "old");
    let (new_public, new_secret) = keygen(tmp.path(), "new");
    let config_file = tmp.path().join("reactor.yaml");
    let trusting = |keys: &[&Path]| write_trust(&config_file, keys);
    let data = tmp.path().join("data");
    let dir = data.join("components");
    // v1 signed by the old key serves, then v2 (declaring less, so no approval is asked)
    // signed by the new key replaces it: v1 is kept for a rollback.
    let v1 = annotated_and_signed(
        tmp.path(),
        "v1.wasm",
        &["--writes", "Note,Secret"],
        &old_secret,
    );
    let v2 = annotated_and_signed(tmp.path(), "v2.wasm", &["--writes", "Note"], &new_secret);
    // v1 serves first without a trust section; one trusting both keys is added: v1, signed,
    // serves on untouched.
    std::fs::write(&config_file, "{}\n").expect("config");
    let v1_sha = deploy_signed(&dir, "misbehave", &v1);
    let host = start(&data, &config_file);
    wait_serving(&host, "misbehave", &v1_sha);
    let loads = |host: &Host| host.log().matches("component loaded").count();
    let loaded = loads(&host);
    trusting(&[&old_public, &new_public]);
    let checked = |host: &Host| {
        host.log()
            .matches("the trust in force changed: every")
            .count()
    };
    eventually("the trust checked", 60, || {
        (checked(&host) == 1).then_some(())
    });
    let v2_sha = deploy_signed(&dir, "misbehave", &v2);
    wait_serving(&host, "misbehave", &v2_sha);
    let serving = "no longer admits the version serving";
    assert!(!host.log().contains(serving), "{}", host.log());
    assert_eq!(loads(&host), loaded + 1, "only v2 loaded: {}", host.log());
    let loaded = loads(&host);

    // The old key is no longer trusted: v2 serves on, untouched; v1 is let go.
    trusting(&[&new_public]);
    let kept = "no longer admits the version kept for a rollback";
    eventually("v1 let go", 60, || host.log().contains(kept).then_some(()));
    wait_serving(&host, "misbehave", &v2_sha);
    assert_eq!(
        loads(&host),
        loaded,
        "v2 was not loaded again: {}",
        host.log()
    );

    // Only the old key: v2 stops serving and its file, signed by the new key, is refused.
    trusting(&[&old_public]);
    let refused = wait_error(&host, "misbehave", "not among the trusted keys");
    assert_eq!(refused["serving"], false, "{refused}");
    let log = host.log();
    assert!(log.contains(serving), "{log}");

    // The new key trusted again: the file's version is tried again and serves, no restart.
    trusting(&[&new_public]);
    wait_serving(&host, "misbehave", &v2_sha);
}

#[test]
fn a_signature_pushed_beside_a_component_admits_it_from_the_registry() {
    let registry = Registry::start(RegistryOptions::default());
    let tmp = tempfile::tempdir().expect("tempdir");
    let (public, secret) = keygen(tmp.path(), "release");
    let probe = std::fs::read(built().join("probe.wasm")).expect("probe");
    let signed = write(&tmp.path().join("signed"), "probe.wasm", &probe);
    sign(&signed, &secret);
    let signed_tag = registry.reference("reactors/probe:signed");
    push(&registry, &signed, &signed_tag, &[]);
    let v1 = guest("version-1");
    let unsigned = write(&tmp.path().join("unsigned"), "versioned.wasm", &v1);
    let unsigned_tag = registry.reference("reactors/versioned:unsigned");
    push(&registry, &unsigned, &unsigned_tag, &[]);

    let config_file = tmp.path().join("reactor.yaml");
    std::fs::write(
        &config_file,
        config(
            &[registry.settings_yaml(None)],
            &[&public],
            &[("probe", 1, &signed_tag), ("versioned", 1, &unsigned_tag)],
        ),
    )
    .expect("config");
    let host = start(&tmp.path().join("data"), &config_file);
    wait_serving(&host, "probe", &sha256(&probe));
    let refused = wait_error(&host, "versioned", "unsigned: no signature");
    assert_eq!(refused["serving"], false, "{refused}");
}

#[test]
fn push_refuses_what_is_not_a_component_in_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let core = write(tmp.path(), "core.wasm", b"\0asm\x01\0\0\0");
    let out = run_cli(&[
        "component",
        "push",
        &core.display().to_string(),
        "oci://127.0.0.1:1/r/p:v1",
        "--plain-http",
    ]);
    assert_fails_with(&out, &["core wasm module"]);
    let file = write(tmp.path(), "c.wasm", b"\0asm\x0d\0\x01\0");
    let out = run_cli(&[
        "component",
        "push",
        &file.display().to_string(),
        "https://r/p:v1",
    ]);
    assert_fails_with(&out, &["oci://"]);
}

#[test]
fn a_system_without_ca_certificates_is_an_error_in_one_line_not_a_panic() {
    let registry = Registry::start(RegistryOptions {
        tls: true,
        ..RegistryOptions::default()
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = write(tmp.path(), "reactor.wasm", &guest("version-1"));
    // The system's CA store as a minimal container has it: empty.
    let no_file = write(tmp.path(), "no-cas.pem", b"");
    let no_dir = tmp.path().join("no-cas");
    std::fs::create_dir_all(&no_dir).expect("folder");
    let mut args = vec![
        "component".to_owned(),
        "push".to_owned(),
        file.display().to_string(),
        registry.reference("reactors/versioned:v1"),
    ];
    args.extend(registry.push_flags());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (no_file, no_dir) = (no_file.display().to_string(), no_dir.display().to_string());
    let out = run_cli_env(
        &args,
        &[("SSL_CERT_FILE", &no_file), ("SSL_CERT_DIR", &no_dir)],
    );
    assert_fails_with(
        &out,
        &["needs the system's CA certificates", "ca-certificates"],
    );
    let err = reactor_testkit::stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
}

/// A fake registry on loopback answering every request with `answer(path)`: for what a real
/// registry never does (garbage, a layer that does not match its digest). Serves at most
/// 200 requests, then stops.
fn fake_registry(answer: impl Fn(&str) -> (u16, &'static str, Vec<u8>) + Send + 'static) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let addr = listener.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(2000) {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut byte = [0u8; 1];
            while !request.ends_with(b"\r\n\r\n") && request.len() < 16 << 10 {
                match stream.read(&mut byte) {
                    Ok(1) => request.push(byte[0]),
                    _ => break,
                }
            }
            let text = String::from_utf8_lossy(&request);
            let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let (status, content_type, body) = answer(&path);
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    addr
}
