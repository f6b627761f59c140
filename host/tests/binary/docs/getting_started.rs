//! Every shell example of the getting-started page (docs/src/getting-started.md) runs as
//! printed. Its `console` blocks are run in order, in one scratch folder, with `rh` the
//! binary under test: a `$ ` line is a command (a `<<'TAG'` here-document goes on to its
//! `TAG` line), the lines after it what it prints — on stdout, or on stderr when it fails —
//! with `...` standing for any text, times and the loopback port free to differ. An `export`
//! holds for the commands after it, as in a terminal. A command commented `runs until
//! Ctrl-C` is started, its lines read, and left running until the page is done, as in a
//! terminal of its own; `rh serve` gets a free port (`--listen 127.0.0.1:0`), since 7800 may
//! be the demo's. Its `sh` blocks may hold only `./run.sh`, which scripts/test-first-run.sh
//! runs from a fresh clone.

use super::markdown::{self, root};
use reactor_testkit::reactor_host_bin;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A command of a `console` block and what it prints.
#[derive(Debug)]
struct Step {
    command: String,
    expected: Vec<String>,
    line: usize,
}

/// The steps of one `console` block that starts at line `first` of the page.
fn steps(block: &str, first: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut heredoc: Option<String> = None;
    for (n, line) in block.lines().enumerate() {
        if let Some(tag) = &heredoc {
            let step = steps
                .last_mut()
                .expect("a here-document follows its command");
            step.command.push('\n');
            step.command.push_str(line);
            if line == tag {
                heredoc = None;
            }
        } else if let Some(command) = line.strip_prefix("$ ") {
            heredoc = command
                .split_once("<<'")
                .and_then(|(_, rest)| rest.split_once('\''))
                .map(|(tag, _)| tag.to_owned());
            steps.push(Step {
                command: command.to_owned(),
                expected: Vec::new(),
                line: first + 1 + n,
            });
        } else {
            let step = steps
                .last_mut()
                .unwrap_or_else(|| panic!("line {}: output before any command", first + 1 + n));
            step.expected.push(line.to_owned());
        }
    }
    steps
}

/// The shell comment of a command's first line (after an unquoted ` #`), if any.
fn comment(command: &str) -> &str {
    let first = command.lines().next().unwrap_or("");
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (i, c) in first.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && previous.is_whitespace() => return &first[i..],
            None => {}
        }
        previous = c;
    }
    ""
}

/// `line` with what may differ from run to run made fixed: RFC 3339 times and the port of a
/// loopback address.
fn normalize(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &line[i..];
        let is_time = rest.len() >= 11
            && rest.as_bytes()[..10].iter().enumerate().all(|(k, b)| {
                if k == 4 || k == 7 {
                    *b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            })
            && rest.as_bytes()[10] == b'T';
        if is_time {
            let end = rest[11..]
                .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.' || c == 'Z'))
                .map_or(rest.len(), |e| e + 11);
            out.push_str("<time>");
            i += end;
        } else if let Some(after) = rest.strip_prefix("127.0.0.1:") {
            let digits = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            out.push_str("127.0.0.1:<port>");
            i += "127.0.0.1:".len() + digits;
        } else {
            let c = rest.chars().next().expect("a character");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out.trim_end().to_owned()
}

/// Whether `actual` is what `expected` shows, `...` in it standing for any text.
fn matches(expected: &str, actual: &str) -> bool {
    let (expected, actual) = (normalize(expected), normalize(actual));
    let parts: Vec<&str> = expected.split("...").collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return expected == actual;
    };
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Checks `actual` lines against a step's expected ones, naming the step on a mismatch.
fn check(step: &Step, actual: &[String]) {
    let same = actual.len() == step.expected.len()
        && step.expected.iter().zip(actual).all(|(e, a)| matches(e, a));
    assert!(
        same,
        "docs/src/getting-started.md:{}: `{}` printed\n{}\nwhere the page shows\n{}",
        step.line,
        step.command,
        actual.join("\n"),
        step.expected.join("\n")
    );
}

/// Processes started by the page, killed when it is done (or failed).
struct Running(Vec<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A bash running `script` in `dir`, with `rh` on the PATH and no client settings inherited.
fn shell(dir: &Path, bin: &Path, script: &str) -> Command {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("bash");
    command
        .args(["-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir);
    reactor_testkit::without_client_env(&mut command);
    command
}

/// Starts a command that runs until Ctrl-C and checks the lines it prints first.
fn start(step: &Step, mut command: Command, running: &mut Running) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("bash starts");
    let stdout = child.stdout.take().expect("stdout piped");
    running.0.push(child);
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    while lines.len() < step.expected.len() {
        match receive.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
    }
    check(step, &lines);
}

#[test]
fn the_getting_started_examples_run_as_printed() {
    let page_path = root().join("docs/src/getting-started.md");
    let page = std::fs::read_to_string(&page_path).expect("docs/src/getting-started.md");
    let first_run = std::fs::read_to_string(root().join("scripts/test-first-run.sh"))
        .expect("scripts/test-first-run.sh");
    let tmp = tempfile::tempdir().expect("tempdir");
    let bin = tmp.path().join("bin");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&bin).expect("bin/");
    std::fs::create_dir_all(&work).expect("work/");
    std::os::unix::fs::symlink(reactor_host_bin(), bin.join("rh")).expect("bin/rh");

    let mut running = Running(Vec::new());
    let mut exports = String::new();
    let mut ran = 0;
    for block in markdown::blocks(&page) {
        match block.info.split_whitespace().next().unwrap_or("") {
            "console" => {}
            "sh" | "bash" | "shell" => {
                for (n, line) in block.text.lines().enumerate() {
                    let command = line.trim();
                    assert!(
                        command.is_empty()
                            || command.starts_with('#')
                            || (command.starts_with("./run.sh") && first_run.contains("./run.sh")),
                        "docs/src/getting-started.md:{}: `{command}` is run by no test: \
                         put it in a `console` block",
                        block.line + 1 + n
                    );
                }
                continue;
            }
            _ => continue,
        }
        for step in steps(&block.text, block.line) {
            ran += 1;
            if comment(&step.command).contains("runs until Ctrl-C") {
                let mut command = step.command.clone();
                if command.starts_with("rh serve ") {
                    command = command.replacen("rh serve ", "rh serve --listen 127.0.0.1:0 ", 1);
                }
                let script = format!("{exports}exec {command}");
                start(&step, shell(&work, &bin, &script), &mut running);
                continue;
            }
            let script = format!("{exports}{}", step.command);
            let out = shell(&work, &bin, &script)
                .stdin(Stdio::null())
                .output()
                .expect("bash runs");
            let failed = !out.status.success();
            let printed = if failed { &out.stderr } else { &out.stdout };
            let actual: Vec<String> = String::from_utf8_lossy(printed)
                .lines()
                .map(str::to_owned)
                .collect();
            let shows_error = step
                .expected
                .first()
                .is_some_and(|l| l.starts_with("error:"));
            assert_eq!(
                failed,
                shows_error,
                "docs/src/getting-started.md:{}: `{}` {} (stderr: {})",
                step.line,
                step.command,
                if failed {
                    "failed"
                } else {
                    "succeeded, where the page shows an error"
                },
                String::from_utf8_lossy(&out.stderr)
            );
            check(&step, &actual);
            if step.command.starts_with("export ") {
                exports.push_str(&step.command);
                exports.push('\n');
            }
        }
    }
    assert!(ran >= 5, "the page's console blocks hold {ran} commands");
}

#[test]
fn output_matches_with_wildcards_times_and_ports() {
    assert!(matches(
        "{\"type\":\"created\",...,\"name\":\"a\",...}}",
        "{\"type\":\"created\",\"revision\":1,\"name\":\"a\",\"x\":{}}"
    ));
    assert!(matches(
        "web  1  2026-11-23T01:40:00.123Z",
        "web  1  2027-01-02T03:04:05.6Z"
    ));
    assert!(matches(
        "reactor-host listening on https://127.0.0.1:7800",
        "reactor-host listening on https://127.0.0.1:41234"
    ));
    assert!(!matches(
        "Policy/a created (revision 1)",
        "Policy/a created (revision 2)"
    ));
    assert!(!matches("error: a ...", "error: b c"));
    assert_eq!(
        comment("rh get x -o 'jsonpath={.a}'  # the # sign"),
        "# the # sign"
    );
    let parsed = steps("$ cat > f <<'EOF'\na\n$ b\nEOF\n$ rh x\nout\n", 10);
    assert_eq!(parsed.len(), 2, "{parsed:?}");
    assert_eq!(parsed[0].command, "cat > f <<'EOF'\na\n$ b\nEOF");
    assert_eq!(
        (parsed[1].line, parsed[1].expected.as_slice()),
        (15, &["out".to_owned()][..])
    );
}
