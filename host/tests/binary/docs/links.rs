//! Every internal link of the documentation leads somewhere: in README.md, sdk/README.md and
//! the pages of the site (docs/src/), a relative link names a file that exists (for a page of
//! the site, one inside the site), a `#anchor` is produced by a heading of the page it names,
//! an `{{#include}}` names a file, and every page is in SUMMARY.md (mdBook renders no other).
//! A broken one fails naming FILE:LINE.

use super::markdown::{self, root};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// `path` with `.` and `..` folded away, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The Markdown files checked: the site's pages, then the READMEs that point into it.
fn pages(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("a folder entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root.join("docs/src"), &mut out);
    out.push(root.join("README.md"));
    out.push(root.join("sdk/README.md"));
    out
}

/// What is wrong with the links of the Markdown file `page` (empty: nothing).
fn problems(root: &Path, page: &Path) -> Vec<String> {
    let site = root.join("docs/src");
    let text = std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let name = page
        .strip_prefix(root)
        .unwrap_or(page)
        .display()
        .to_string();
    let dir = page.parent().unwrap_or(root);
    let mut found = Vec::new();
    for link in markdown::links(&text) {
        let target = link.target.as_str();
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let at = format!("{name}:{}", link.line);
        let (path, fragment) = match target.split_once('#') {
            Some((path, fragment)) => (path, Some(fragment)),
            None => (target, None),
        };
        let file = if path.is_empty() {
            page.to_owned()
        } else {
            normalize(&dir.join(path))
        };
        if !file.exists() {
            found.push(format!(
                "{at}: link to {target}: no such file {}",
                file.display()
            ));
            continue;
        }
        if page.starts_with(&site) && !file.starts_with(&site) {
            found.push(format!(
                "{at}: link to {target}: {} is outside docs/src, so the site has no such page",
                file.display()
            ));
            continue;
        }
        let Some(fragment) = fragment else { continue };
        if file.extension().is_none_or(|ext| ext != "md") {
            found.push(format!(
                "{at}: link to {target}: an anchor into a file that is not a page"
            ));
            continue;
        }
        let target_text = std::fs::read_to_string(&file).unwrap_or_default();
        let anchors = markdown::anchors(&target_text);
        if !anchors.iter().any(|a| a == fragment) {
            found.push(format!(
                "{at}: link to {target}: no heading of {} makes the anchor #{fragment} (it has: {})",
                file.strip_prefix(root).unwrap_or(&file).display(),
                anchors.join(", ")
            ));
        }
    }
    for include in markdown::includes(&text) {
        let file = normalize(&dir.join(&include.target));
        if !file.is_file() {
            found.push(format!(
                "{name}:{}: {{{{#include {}}}}}: no such file {}",
                include.line,
                include.target,
                file.display()
            ));
        }
    }
    found
}

/// The pages of the site that SUMMARY.md leaves out (mdBook renders only those it lists).
fn missing_from_summary(root: &Path) -> Vec<String> {
    let site = root.join("docs/src");
    let summary = site.join("SUMMARY.md");
    let text = std::fs::read_to_string(&summary).expect("docs/src/SUMMARY.md");
    let listed: BTreeSet<PathBuf> = markdown::links(&text)
        .into_iter()
        .map(|l| normalize(&site.join(&l.target)))
        .collect();
    pages(root)
        .into_iter()
        .filter(|p| p.starts_with(&site) && *p != summary && !listed.contains(p))
        .map(|p| {
            format!(
                "docs/src/SUMMARY.md: {} is not listed, so the site does not render it",
                p.strip_prefix(root).unwrap_or(&p).display()
            )
        })
        .collect()
}

#[test]
fn every_internal_link_of_the_documentation_leads_somewhere() {
    let root = root();
    let mut found: Vec<String> = pages(&root)
        .iter()
        .flat_map(|page| problems(&root, page))
        .collect();
    found.extend(missing_from_summary(&root));
    assert!(found.is_empty(), "broken links:\n{}", found.join("\n"));
}

#[test]
fn the_check_finds_a_broken_link_and_a_missing_anchor() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let page = tmp.path().join("page.md");
    std::fs::write(
        &page,
        "# A page\n\n## Its part\n\n[fine](#its-part)\n[gone](nowhere.md)\n[wrong](#no-such-part)\n",
    )
    .expect("page.md");
    let found = problems(tmp.path(), &page);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("page.md:6: link to nowhere.md: no such file"),
        "{found:?}"
    );
    assert!(
        found[1].starts_with("page.md:7: link to #no-such-part: no heading"),
        "{found:?}"
    );
}

#[test]
fn anchors_follow_mdbook() {
    let text = "# Agents' reports: `on-agent-status(owner, report)`\n## Rust: `reactor_sdk::testing`\n## Twice\n## Twice\n## Named {#own-id}\n";
    assert_eq!(
        markdown::anchors(text),
        [
            "agents-reports-on-agent-statusowner-report",
            "rust-reactor_sdktesting",
            "twice",
            "twice-1",
            "own-id"
        ]
    );
}
