//! What a client command printed: its output as text, the one-line failure, the revisions of `apply`.

use std::process::Output;

/// The revision `apply` printed for `what` (`KIND/NAME`), from its line
/// `KIND/NAME created|updated|unchanged (revision N)`. Tests compare revisions with each
/// other, never with fixed numbers: etcd starts higher and gives one apply one revision.
pub fn applied_revision(output: &str, what: &str) -> u64 {
    output
        .lines()
        .filter(|line| line.starts_with(&format!("{what} ")))
        .find_map(|line| {
            line.rsplit_once("(revision ")?
                .1
                .strip_suffix(')')?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no revision of {what} in apply's output: {output}"))
}

/// The rows of a printed table, split on runs of two spaces or more (cells hold single
/// spaces).
pub fn table_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// The command's stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The command's stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts the command failed with exactly one line on stderr containing every `needle`.
pub fn assert_fails_with(output: &Output, needles: &[&str]) {
    let err = stderr(output);
    assert!(
        !output.status.success(),
        "expected failure, got success; stdout: {}",
        stdout(output)
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line on stderr, got: {err}"
    );
    for needle in needles {
        assert!(
            err.contains(needle),
            "stderr {err:?} should mention {needle:?}"
        );
    }
}

/// Asserts the command line was refused by the parser: exit 2, its first line naming every
/// `needle` (clap adds a usage hint below it).
pub fn assert_usage_error(output: &Output, needles: &[&str]) {
    assert_eq!(output.status.code(), Some(2), "{}", stderr(output));
    let err = stderr(output);
    let first = err.lines().next().unwrap_or_default();
    for needle in needles {
        assert!(
            first.contains(needle),
            "{first:?} should mention {needle:?}"
        );
    }
}
