//! Where the `reactor-host` binary under test is: `$REACTOR_HOST_BIN`, else the one cargo built beside the running program.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The `reactor-host` binary the launchers run.
///
/// `$REACTOR_HOST_BIN` overrides it (a copy of the binary, when several worktrees share one
/// target folder and overwrite its binary). Otherwise it is the binary cargo built for this
/// profile: beside the running program (a bench binary in `target/release/`) or one folder
/// up from it (a test binary in `target/debug/deps/`), as cargo places `CARGO_BIN_EXE_*`.
pub fn reactor_host_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(path) = std::env::var_os("REACTOR_HOST_BIN") {
            return path.into();
        }
        let profile = profile_dir();
        let bin = profile.join(format!("reactor-host{}", std::env::consts::EXE_SUFFIX));
        assert!(
            bin.exists(),
            "no reactor-host binary at {} (build it with `cargo build -p reactor-host`, or set REACTOR_HOST_BIN)",
            bin.display()
        );
        bin
    })
}

/// The profile folder of the running program (`target/debug`, `target/release`).
pub(crate) fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("the running program's path: {e}"));
    let dir = exe.parent().unwrap_or(Path::new("."));
    if dir.file_name().is_some_and(|name| name == "deps") {
        dir.parent().unwrap_or(dir).to_owned()
    } else {
        dir.to_owned()
    }
}

/// A scratch folder in the target folder that outlives test runs, as cargo's
/// `CARGO_TARGET_TMPDIR` (`target/tmp`): built guests are cached there.
pub fn target_tmpdir() -> PathBuf {
    let profile = profile_dir();
    profile.parent().unwrap_or(&profile).join("tmp")
}

/// Removes from `command`'s environment every variable a client command reads (server,
/// credentials, CA), so that it uses only what a test gives it.
pub fn without_client_env(command: &mut std::process::Command) -> &mut std::process::Command {
    for name in [
        "REACTOR_TOKEN",
        "REACTOR_TOKEN_FILE",
        "REACTOR_SERVER",
        "REACTOR_KUBECONFIG",
        "REACTOR_CA",
        "REACTOR_AGENT",
        "REACTOR_JOIN_TOKEN",
    ] {
        command.env_remove(name);
    }
    command
}

/// Runs `reactor-host ARGS` outside any server's folder, with none of the client variables
/// of the environment but `env`.
pub fn run_cli_env(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = std::process::Command::new(reactor_host_bin());
    without_client_env(&mut command)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(std::env::temp_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("reactor-host runs")
}

/// [`run_cli_env`] with no variables.
pub fn run_cli(args: &[&str]) -> std::process::Output {
    run_cli_env(args, &[])
}
