//! Samples read from the Prometheus text of `/metrics`, and that text checked by promtool.

/// The value of a Prometheus sample whose line starts with `series` (name and labels).
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find(|line| line.starts_with(series) && line[series.len()..].starts_with(' '))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// What `promtool check metrics` says of `text` (nothing when it is clean). promtool is the
/// one of Debian's prometheus package that `scripts/setup.sh` puts in the tools folder
/// (`REACTOR_TOOLS`, default `~/.cache/reactor-host/tools`); `PROMTOOL` names another.
pub fn promtool_check(text: &str) -> String {
    use std::io::Write;
    let promtool = std::env::var_os("PROMTOOL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::tools::tools_dir().join("promtool/promtool"));
    let mut child = std::process::Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/setup.sh installs it)", promtool.display()));
    child
        .stdin
        .take()
        .expect("promtool's stdin")
        .write_all(text.as_bytes())
        .expect("write to promtool");
    let out = child.wait_with_output().expect("promtool ran");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    match out.status.success() {
        true => said,
        false => format!("promtool failed ({}): {said}", out.status),
    }
}
