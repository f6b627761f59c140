//! The client flags (`--server`, `--token`, `--token-file`, `--data`, `--agent`) are global:
//! accepted before the subcommand as after it; `serve` and `agent` refuse the ones they do
//! not take, and the environment is the fallback of a flag, never a conflict with it.

use reactor_testkit::{Host, assert_fails_with, reactor_host_bin, stderr, stdout};
use std::process::{Command, Output};

/// `reactor-host ARGS` with no client setting inherited from the test's environment.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(reactor_host_bin())
        .args(args)
        .env_remove("REACTOR_TOKEN")
        .env_remove("REACTOR_TOKEN_FILE")
        .env_remove("REACTOR_SERVER")
        .env_remove("REACTOR_AGENT")
        .envs(env.iter().copied())
        .current_dir(std::env::temp_dir())
        .output()
        .expect("reactor-host runs")
}

#[test]
fn client_flags_before_and_after_the_subcommand() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // Plain HTTP: this is about where flags go; TLS is tested in both_stores::trust.
    let host = Host::start(&tmp.path().join("data"), &["--insecure-http"]);
    let token = host.token();
    let token_file = host.data.join("token");
    let token_file = token_file.to_str().expect("utf-8");
    let data = host.data.to_str().expect("utf-8");
    let url = host.url.as_str();

    let file = tmp.path().join("t.yaml");
    std::fs::write(&file, "kind: Thing\nname: a\nspec: {}\n").expect("write");
    let file = file.to_str().expect("utf-8");
    let out = run(
        &["--server", url, "--token", &token, "apply", "-f", file],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("Thing/a created"),
        "{}",
        stdout(&out)
    );

    let names = ["-o", "jsonpath={.items[*].name}"];
    for args in [
        vec!["--token-file", token_file, "--server", url, "get", "Thing"],
        vec!["get", "Thing", "--server", url, "--token-file", token_file],
        vec!["--server", url, "get", "--data", data, "Thing"],
    ] {
        let mut args = args.clone();
        args.extend_from_slice(&names);
        let out = run(&args, &[]);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "a", "{args:?}");
    }

    // The environment is the fallback: a flag wins over it.
    let out = run(
        &["--server", url, "get", "Thing"],
        &[
            ("REACTOR_SERVER", "http://127.0.0.1:1"),
            ("REACTOR_TOKEN", &token),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(
        &["get", "Thing"],
        &[("REACTOR_SERVER", url), ("REACTOR_TOKEN_FILE", token_file)],
    );
    assert!(out.status.success(), "{}", stderr(&out));

    // A wrong token before the subcommand is used (and refused), not ignored.
    let out = run(&["--token", "wrong", "--server", url, "get", "Thing"], &[]);
    assert_fails_with(&out, &["--token-file"]);
}

#[test]
fn the_agent_flag_before_and_after_the_scheduler_subcommand() {
    for args in [
        ["--agent", "http://127.0.0.1:1", "scheduler", "status"],
        ["scheduler", "--agent", "http://127.0.0.1:1", "status"],
        ["scheduler", "status", "--agent", "http://127.0.0.1:1"],
    ] {
        let out = run(&args, &[("REACTOR_AGENT", "http://127.0.0.1:2")]);
        assert_fails_with(&out, &["127.0.0.1:1"]);
    }
}

#[test]
fn serve_and_agent_refuse_the_client_flags_they_do_not_take() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("d");
    let data = data.to_str().expect("utf-8");
    let out = run(&["--token", "t", "serve", "--data", data], &[]);
    assert_fails_with(&out, &["serve does not take --token"]);
    let out = run(&["serve", "--data", data, "--server", "http://x"], &[]);
    assert_fails_with(&out, &["serve does not take --server"]);
    assert!(
        !tmp.path().join("d").exists(),
        "a refused serve changes nothing"
    );
    let out = run(&["agent", "--id", "a", "--agent", "http://x"], &[]);
    assert_fails_with(&out, &["agent does not take --agent"]);
    // The environment of a client does not stop a server from starting on the same shell.
    let out = run(
        &["store", "verify", "--data", data],
        &[("REACTOR_SERVER", "http://x"), ("REACTOR_TOKEN", "t")],
    );
    assert_fails_with(&out, &["store.redb"]);
}
