//! What the report says of the machine and the code: cores, memory, CPU, commit; and the
//! resident memory of a process, read from `/proc`.

use serde::{Deserialize, Serialize};

/// The machine a run was made on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Machine {
    /// Cores available to the process.
    pub cores: usize,
    /// Total memory, bytes.
    pub memory: u64,
    /// CPU model, as `/proc/cpuinfo` names it.
    #[serde(default)]
    pub cpu: String,
}

impl Machine {
    pub fn this() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .map(|l| l.trim_start_matches([' ', '\t', ':']).trim().to_owned())
            .unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Machine {
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory: kib_field(&meminfo, "MemTotal:").unwrap_or(0),
            cpu,
        }
    }
}

/// A `Name:   123 kB` field of a `/proc` file, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024)
}

/// Resident memory of process `pid`, bytes.
pub fn rss_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    kib_field(&status, "VmRSS:")
}

/// CPU time (user + system) process `pid` has used so far.
pub fn cpu_time_of(pid: u32) -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(std::time::Duration::from_millis(ticks * 10))
}

/// The commit the bench runs at (`git rev-parse HEAD`, `-dirty` if the tree has changes).
pub fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let head = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty { format!("{head}-dirty") } else { head }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kib_fields() {
        let text = "Name:\tx\nVmRSS:\t  2048 kB\n";
        assert_eq!(kib_field(text, "VmRSS:"), Some(2 * 1024 * 1024));
        assert_eq!(kib_field(text, "VmHWM:"), None);
    }

    #[test]
    fn reads_own_cpu_time() {
        assert!(cpu_time_of(std::process::id()).is_some());
    }
}
