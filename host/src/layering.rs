//! A test that reads every crate's sources: no two files of a crate import each other,
//! directly or through others (test code at the bottom of a file, after its `#[cfg(test)]`, is
//! not counted). Between crates the layers are Cargo's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path, e.g. `["controller", "engine"]`; the crate root is empty.
type ModPath = Vec<String>;

struct Crate {
    /// The file of each module.
    files: BTreeMap<ModPath, PathBuf>,
    /// The source of each module, up to its tests.
    sources: BTreeMap<ModPath, String>,
}

impl Crate {
    fn read(src: &Path) -> Self {
        let mut files = BTreeMap::new();
        collect(src, src, &mut files);
        let sources = files
            .iter()
            .map(|(module, file)| {
                let text = std::fs::read_to_string(file).unwrap_or_default();
                let code = match text.find("#[cfg(test)]") {
                    Some(at) => text[..at].to_owned(),
                    None => text,
                };
                (module.clone(), code_only(&code))
            })
            .collect();
        Self { files, sources }
    }

    fn is_module(&self, path: &[String]) -> bool {
        self.files.contains_key(path)
    }

    /// The module that defines `name` as seen from module `at`, following `pub use`.
    fn defining(&self, at: &ModPath, name: &str, depth: usize) -> ModPath {
        let Some(source) = self.sources.get(at) else {
            return at.clone();
        };
        if depth > 4 || defines(source, name) {
            return at.clone();
        }
        for path in use_paths(source) {
            if path.first().is_none_or(|p| p != "pub") {
                continue;
            }
            let path = &path[1..];
            let (last, front) = match path.split_last() {
                Some(split) => split,
                None => continue,
            };
            if last == name || last == "*" {
                let target = self.resolve(at, front, depth + 1);
                if last == name || self.sources.get(&target).is_some_and(|s| defines(s, name)) {
                    return target;
                }
            }
        }
        at.clone()
    }

    /// The file a path used in module `at` leads to.
    fn resolve(&self, at: &ModPath, path: &[String], depth: usize) -> ModPath {
        let mut module: ModPath = Vec::new();
        let mut rest = path;
        match path.first().map(String::as_str) {
            Some("crate") => rest = &path[1..],
            Some("super") | Some("self") => {
                module = at.clone();
                while let Some(first) = rest.first() {
                    match first.as_str() {
                        "super" => {
                            module.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                // A path from a child module (`use items::Item;` in its parent).
                let mut child = at.clone();
                child.push(first.to_owned());
                if !self.is_module(&child) {
                    return at.clone();
                }
                module = at.clone();
            }
            None => return at.clone(),
        }
        for segment in rest {
            let mut child = module.clone();
            child.push(segment.clone());
            if self.is_module(&child) {
                module = child;
            } else {
                return self.defining(&module, segment, depth);
            }
        }
        module
    }

    /// Every module each module's code refers to.
    fn edges(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut edges = BTreeMap::new();
        for (module, source) in &self.sources {
            let mut targets = BTreeSet::new();
            // A `pub use` only re-exports: the dependency is of whoever uses the item.
            let used = use_paths(source)
                .into_iter()
                .filter(|path| path.first().is_none_or(|p| p != "pub"));
            for path in used.chain(inline_paths(source)) {
                if path.last().is_some_and(|l| l == "*") {
                    continue;
                }
                let target = self.resolve(module, &path, 0);
                if &target != module && !target.is_empty() {
                    targets.insert(target);
                }
            }
            edges.insert(module.clone(), targets);
        }
        edges
    }
}

fn collect(root: &Path, dir: &Path, files: &mut BTreeMap<ModPath, PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, files);
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        let mut module: ModPath = relative
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if module
            .last()
            .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
        {
            module.pop();
        }
        if relative == Path::new("main.rs") {
            continue;
        }
        files.insert(module, path);
    }
}

/// `code` without comments and without the contents of string and char literals.
fn code_only(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == 'r' && (next == Some('#') || next == Some('"')) && !word_before(&chars, i) {
            let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
            i += 1 + hashes;
            if chars.get(i) == Some(&'"') {
                i += 1;
                while i < chars.len()
                    && !(chars[i] == '"' && chars[i + 1..].iter().take(hashes).all(|c| *c == '#'))
                {
                    i += 1;
                }
                i += 1 + hashes;
            }
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // A char literal ('a', '\n', '\''); a lifetime has no closing quote.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn word_before(chars: &[char], at: usize) -> bool {
    at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_')
}

/// Whether `source` defines an item called `name`.
fn defines(source: &str, name: &str) -> bool {
    const KINDS: [&str; 9] = [
        "struct",
        "enum",
        "fn",
        "trait",
        "type",
        "const",
        "static",
        "mod",
        "macro_rules!",
    ];
    let words: Vec<&str> = source
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .any(|pair| KINDS.contains(&pair[0]) && pair[1] == name)
}

/// The paths of every `use` declaration, groups expanded; a leading `pub` is kept as a segment.
fn use_paths(source: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = source;
    while let Some(at) = find_word(rest, "use") {
        let before = rest[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')');
        let after = &rest[at + 3..];
        let Some(end) = after.find(';') else { break };
        let tree: String = after[..end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        for mut path in expand(&tree) {
            if public {
                path.insert(0, "pub".to_owned());
            }
            paths.push(path);
        }
        rest = &after[end..];
    }
    paths
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find(word) {
        let at = from + found;
        let before = text[..at].chars().last();
        let after = text[at + word.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if boundary(before) && after.is_some_and(char::is_whitespace) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// `a::{b, c::{d, e}}` as `[a, b]`, `[a, c, d]`, `[a, c, e]`; `self` in a group is the prefix.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.split(" as ").next().unwrap_or(tree);
    let Some(open) = tree.find('{') else {
        let path: Vec<String> = tree
            .split("::")
            .map(|s| s.split("as").next().unwrap_or(s).to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        return vec![path];
    };
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let close = tree.rfind('}').filter(|c| *c > open).unwrap_or(tree.len());
    let inner = &tree[open + 1..close];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut paths = Vec::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        for tail in expand(part) {
            let mut path = prefix.clone();
            if tail != ["self"] {
                path.extend(tail);
            }
            paths.push(path);
        }
    }
    paths
}

/// Paths written in code, e.g. `crate::nimbus::unpublish_all(` or `super::items::object_name`.
fn inline_paths(source: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(found) = source[from..].find(start) {
            let at = from + found;
            let tail: String = source[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            from = at + tail.len().max(1);
            let preceded = source[..at]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
            if preceded {
                continue;
            }
            let path: Vec<String> = tail
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            if path.len() > 1 {
                paths.push(path);
            }
        }
    }
    paths
}

fn name(module: &ModPath) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

/// Strongly connected sets of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a ModPath) {
            let i = self.index.len();
            self.index.insert(node, i);
            self.low.insert(node, i);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.edges.get(node).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[next].min(self.low[node]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.index[next].min(self.low[node]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut set = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    set.push(name(top));
                    if top == node {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.found.push(set);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !walk.index.contains_key(node) {
            walk.visit(node);
        }
    }
    walk.found
}

/// The sources of every crate of the workspace: this one and those under `crates/`.
fn workspace() -> Vec<(PathBuf, Crate)> {
    let host = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![host.join("src")];
    let crates = host.join("../crates");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&crates)
        .expect("the crates folder")
        .map(|entry| entry.expect("a crate").path().join("src"))
        .collect();
    found.sort();
    dirs.extend(found);
    dirs.into_iter()
        .map(|src| {
            let krate = Crate::read(&src);
            (src, krate)
        })
        .collect()
}

#[test]
fn no_file_level_import_cycles() {
    // Between crates, Cargo keeps the layers; inside one, no two files import each other.
    let mut problems = Vec::new();
    for (src, krate) in workspace() {
        assert!(krate.files.len() > 1, "{} read no files", src.display());
        let edges = krate.edges();
        for set in cycles(&edges) {
            let ties: Vec<String> = edges
                .iter()
                .flat_map(|(from, targets)| {
                    targets
                        .iter()
                        .filter(|to| set.contains(&name(from)) && set.contains(&name(to)))
                        .map(move |to| format!("{} -> {}", name(from), name(to)))
                })
                .collect();
            problems.push(format!("{}: {set:?} through {ties:?}", src.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "files that import each other: {problems:#?}"
    );
}

#[test]
fn the_reader_sees_a_leak_and_a_cycle() {
    // The checks above must be able to fail: a made-up crate with both faults.
    let mut krate = Crate {
        files: BTreeMap::new(),
        sources: BTreeMap::new(),
    };
    let mut add = |module: &[&str], source: &str| {
        let module: ModPath = module.iter().map(|s| (*s).to_owned()).collect();
        krate.files.insert(module.clone(), PathBuf::new());
        krate.sources.insert(module, source.to_owned());
    };
    add(&[], "pub mod store; pub mod api;");
    add(&["store"], "mod a; mod b; pub use a::Thing;");
    add(&["store", "a"], "use super::b::other; pub struct Thing;");
    add(
        &["store", "b"],
        "pub fn other() { crate::api::serve(); super::Thing::new(); }",
    );
    add(&["api"], "pub fn serve() {}");
    let edges = krate.edges();
    let b: ModPath = vec!["store".into(), "b".into()];
    assert!(edges[&b].contains(&vec!["api".to_owned()]), "{edges:?}");
    assert_eq!(
        cycles(&edges),
        vec![vec!["store::a".to_owned(), "store::b".to_owned()]]
    );
}
