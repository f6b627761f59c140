//! Keys of a family, checked and mapped to files: `<prefix><a>/<b>` ⇔ `/<a>/<b>.json`.

/// How many `/`-separated parts a family's keys have after the prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parts {
    /// Exactly this many, e.g. 2 for `policy/<policy>/<rule>`.
    Exactly(usize),
    /// At least this many, e.g. 2 for `vpp/interface/address/<interface>/<ip>/<len>`.
    AtLeast(usize),
}

impl Parts {
    fn allows(self, count: usize) -> bool {
        match self {
            Parts::Exactly(n) => count == n,
            Parts::AtLeast(n) => count >= n,
        }
    }
}

/// Longest part: with the `.json` suffix and the temporary file's `.` and `.tmp`, a file
/// name stays below the usual 255-byte limit.
const MAX_PART: usize = 200;

/// Why `part` cannot be a part of a key (and so a file or folder name), if it cannot.
pub fn bad_part(part: &str) -> Option<&'static str> {
    if part.is_empty() {
        Some("an empty part")
    } else if part == "." || part == ".." {
        Some("a `.` or `..` part")
    } else if part.starts_with('.') {
        Some("a part starting with `.`")
    } else if part.ends_with(".json") {
        Some("a part ending with `.json`")
    } else if part.len() > MAX_PART {
        Some("a part longer than 200 bytes")
    } else if part.chars().any(|c| c.is_control() || c == '\\') {
        Some("a control character or `\\`")
    } else {
        None
    }
}

/// Checks that `text`, split at `/`, is made of safe key parts; `what` names it in the error,
/// e.g. `vpp/interface/tap1: address ../x has a `.` or `..` part`.
pub fn check_path(key: &str, what: &str, text: &str) -> Result<(), String> {
    match text.split('/').find_map(bad_part) {
        Some(reason) => Err(format!("{key}: {what} {text:?} has {reason}")),
        None => Ok(()),
    }
}

/// A key of a family: its prefix, then safe `/`-separated parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The whole key, e.g. `vpp/interface/address/lender/10.0.0.1/24`.
    pub full: String,
    /// The parts after the prefix, e.g. `["lender", "10.0.0.1", "24"]`.
    pub parts: Vec<String>,
}

impl Key {
    /// Checks `key` against a family's prefix and shape; `form` (e.g. `vpp/route/<name>`)
    /// is shown in the error.
    pub fn parse(key: &str, prefix: &str, parts: Parts, form: &str) -> Result<Key, String> {
        let Some(rest) = key.strip_prefix(prefix) else {
            return Err(format!("{key}: not a key of this descriptor ({form})"));
        };
        let split: Vec<&str> = rest.split('/').collect();
        if let Some(reason) = split.iter().copied().find_map(bad_part) {
            return Err(format!("{key}: key has {reason}"));
        }
        if !parts.allows(split.len()) {
            return Err(format!("{key}: key is not of the form {form}"));
        }
        Ok(Key {
            full: key.to_owned(),
            parts: split.into_iter().map(str::to_owned).collect(),
        })
    }

    /// The key's value file relative to the device root, e.g. `lender/10.0.0.1/24.json`.
    pub fn file(&self) -> String {
        format!("{}.json", self.parts.join("/"))
    }

    /// The first part after the prefix (the interface, the policy, the bridge domain).
    pub fn first(&self) -> &str {
        self.parts.first().map_or("", String::as_str)
    }

    /// The last part after the prefix.
    pub fn last(&self) -> &str {
        self.parts.last().map_or("", String::as_str)
    }

    /// The parts after the first, joined by `/` (an address `10.0.0.1/24`).
    pub fn rest(&self) -> String {
        self.parts.get(1..).unwrap_or_default().join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(key: &str, parts: Parts) -> Result<Key, String> {
        Key::parse(key, "vpp/route/", parts, "vpp/route/<name>")
    }

    #[test]
    fn keys_map_to_nested_json_files() {
        let key = parse("vpp/route/a/10.0.0.1/24", Parts::AtLeast(1)).expect("valid");
        assert_eq!(key.file(), "a/10.0.0.1/24.json");
        assert_eq!((key.first(), key.rest().as_str()), ("a", "10.0.0.1/24"));
        assert_eq!(key.last(), "24");
    }

    #[test]
    fn unsafe_or_misshapen_keys_are_refused_naming_the_key() {
        for (key, needle) in [
            ("vpp/route/../etc", "`..`"),
            ("vpp/route/a//b", "empty part"),
            ("vpp/route/", "empty part"),
            ("vpp/route/.fail", "starting with `.`"),
            ("vpp/route/x.json", "`.json`"),
            ("vpp/route/a\\b", "`\\`"),
            ("vpp/interface/a", "not a key of this descriptor"),
        ] {
            let error = parse(key, Parts::AtLeast(1)).expect_err(key);
            assert!(error.starts_with(key), "{error}");
            assert!(error.contains(needle), "{error}");
        }
        let error = parse("vpp/route/a/b", Parts::Exactly(1)).expect_err("two parts");
        assert_eq!(
            error,
            "vpp/route/a/b: key is not of the form vpp/route/<name>"
        );
    }

    #[test]
    fn paths_inside_values_are_checked_part_by_part() {
        assert!(check_path("k", "address", "10.0.0.1/24").is_ok());
        let error = check_path("k", "address", "10.0.0.1/../x").expect_err("dots");
        assert_eq!(error, "k: address \"10.0.0.1/../x\" has a `.` or `..` part");
    }
}
