//! serve on an etcd over TLS with client certificates and with etcd's users: the round trip
//! works; a missing or foreign client certificate and a wrong password fail at start, in one
//! line naming the endpoint, within the connect timeout; the password is never printed.

use reactor_testkit::{Etcd, Host, Pki, THREE, eventually, get_json, reactor_host_bin, stderr};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const PASSWORD: &str = "pw-7f3a9c-never-printed";

/// `serve --store URL FLAGS…` with `env`, which must exit by itself (not hang): its output
/// and how long it took.
fn serve_refused(data: &Path, url: &str, flags: &[String], env: &[(&str, &str)]) -> Output {
    let started = Instant::now();
    let mut child = Command::new(reactor_host_bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--store", url, "--data"])
        .arg(data)
        .arg("--components")
        .arg(data.join("components"))
        .args(flags)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    // The connect timeout is 5 s: well before 20 s it must have given up.
    while child.try_wait().expect("serve's status").is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let output = child.wait_with_output().expect("serve reaped");
            panic!("serve still running after 20s: {}", stderr(&output));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("serve's output");
    assert!(
        !output.status.success(),
        "serve must fail: {}",
        stderr(&output)
    );
    output
}

/// Asserts serve failed with exactly one line that names the etcd endpoint, and `needles`.
fn assert_one_line_naming(output: &Output, etcd: &Etcd, needles: &[&str]) -> String {
    let text = stderr(output);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line, got: {text}");
    let line = lines[0];
    let endpoint = format!("cannot reach etcd at {}:", etcd.client_url());
    assert!(
        line.starts_with("error: ") && line.contains(&endpoint),
        "names {endpoint}: {line}"
    );
    for needle in needles {
        assert!(line.contains(needle), "{needle:?} in {line}");
    }
    line.to_owned()
}

fn apply_and_get(host: &Host) {
    let applied = host.cli_with_stdin(&["apply", "-f", "-"], Some(THREE));
    assert!(applied.status.success(), "apply: {}", stderr(&applied));
    let web = get_json(host, &["Policy", "web-allow"]);
    assert_eq!(web["spec"]["rules"][0]["action"], "allow");
    assert_eq!(
        get_json(host, &["Policy"])["items"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

#[test]
fn serve_on_tls_etcd_with_a_client_certificate_applies_and_gets() {
    let etcd = Etcd::start_tls();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["--store".to_owned(), etcd.url("/reactor")];
    args.extend(etcd.serve_flags());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let host = Host::start(&tmp.path().join("data"), &args);
    apply_and_get(&host);
    // The objects are in that etcd: a second replica with its own folder sees them.
    let other = Host::start(&tmp.path().join("other"), &args);
    assert_eq!(
        get_json(&other, &["Policy", "db-deny"]),
        get_json(&host, &["Policy", "db-deny"])
    );
}

#[test]
fn serve_without_a_trusted_client_certificate_fails_at_start_in_one_line() {
    let etcd = Etcd::start_tls();
    let pki = etcd.pki().expect("over TLS").clone();
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = etcd.url("/reactor");
    let ca = pki.ca.display().to_string();

    // The CA only: etcd asks for a client certificate, none is sent.
    let started = Instant::now();
    let output = serve_refused(
        &tmp.path().join("none"),
        &url,
        &["--etcd-ca".into(), ca.clone()],
        &[],
    );
    let line = assert_one_line_naming(&output, &etcd, &[]);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "bounded: {line}"
    );
    eprintln!("without a client certificate: {line}");

    // A client certificate from another CA.
    let foreign = Pki::foreign_client(&tmp.path().join("foreign"));
    let flags = vec![
        "--etcd-ca".into(),
        ca.clone(),
        "--etcd-cert".into(),
        foreign.cert.display().to_string(),
        "--etcd-key".into(),
        foreign.key.display().to_string(),
    ];
    let output = serve_refused(&tmp.path().join("foreign-data"), &url, &flags, &[]);
    let line = assert_one_line_naming(&output, &etcd, &[]);
    eprintln!("with a foreign client certificate: {line}");

    // etcd's certificate checked against another CA: refused by us, naming why.
    let mut flags = pki.serve_flags();
    flags[1] = tmp
        .path()
        .join("foreign/other-ca.pem")
        .display()
        .to_string();
    let output = serve_refused(&tmp.path().join("other-ca"), &url, &flags, &[]);
    let line = assert_one_line_naming(&output, &etcd, &["certificate"]);
    eprintln!("with another CA: {line}");

    // Plain http to a TLS etcd fails too, the same way.
    let output = serve_refused(&tmp.path().join("plain"), &url, &[], &[]);
    assert_eq!(
        stderr(&output).trim_end().lines().count(),
        1,
        "{}",
        stderr(&output)
    );

    // A CA file that cannot be read: one line naming it.
    let missing = tmp.path().join("missing-ca.pem");
    let output = serve_refused(
        &tmp.path().join("missing"),
        &url,
        &["--etcd-ca".into(), missing.display().to_string()],
        &[],
    );
    let text = stderr(&output);
    assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    assert!(
        text.starts_with("error: cannot read the etcd CA file")
            && text.contains(&missing.display().to_string()),
        "{text}"
    );
}

#[test]
fn serve_as_an_etcd_user_with_the_password_from_the_environment() {
    let mut etcd = Etcd::start_tls();
    etcd.enable_auth(PASSWORD);
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let mut args = vec!["--store".to_owned(), etcd.url("/reactor")];
    args.extend(etcd.serve_flags());
    args.extend(["--etcd-user".to_owned(), "root".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Debug logs of every crate: the password is in none of them.
    let env = [("REACTOR_ETCD_PASSWORD", PASSWORD), ("RUST_LOG", "debug")];
    let host = Host::launch(&data, &data.join("components"), &args, &env)
        .unwrap_or_else(|e| panic!("{e}"));
    apply_and_get(&host);
    // etcd forgets its tokens when it restarts: the server authenticates again by itself.
    etcd.restart();
    let again = "kind: Policy\nname: after-restart\nspec: {rules: [{name: x, action: allow}]}\n";
    eventually("an apply after etcd restarted", 30, || {
        host.cli_with_stdin(&["apply", "-f", "-"], Some(again))
            .status
            .success()
            .then_some(())
    });
    assert!(host.object("Policy", "after-restart").is_some());
    let log = host.log();
    assert!(!log.is_empty(), "serve logged at debug");
    assert!(!log.contains(PASSWORD), "the password in the log: {log}");
    drop(host);

    // A wrong password: one line, no password in it (neither the wrong nor the right one).
    let wrong = "wrong-pw-51c2e8";
    let output = serve_refused(
        &tmp.path().join("wrong"),
        &etcd.url("/reactor"),
        &args[2..]
            .iter()
            .map(|s| (*s).to_owned())
            .collect::<Vec<_>>(),
        &[("REACTOR_ETCD_PASSWORD", wrong)],
    );
    let line = assert_one_line_naming(&output, &etcd, &["authentication failed"]);
    assert!(!line.contains(wrong) && !line.contains(PASSWORD), "{line}");
    eprintln!("with a wrong password: {line}");

    // The user without the variable: refused before connecting.
    let output = serve_refused(
        &tmp.path().join("unset"),
        &etcd.url("/reactor"),
        &args[2..]
            .iter()
            .map(|s| (*s).to_owned())
            .collect::<Vec<_>>(),
        &[],
    );
    let text = stderr(&output);
    assert_eq!(
        text.trim_end(),
        "error: --etcd-user root needs its password in the environment variable REACTOR_ETCD_PASSWORD"
    );
}
