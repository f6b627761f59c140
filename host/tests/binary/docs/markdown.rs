//! The documentation's Markdown as mdBook reads it: its links with their lines, the anchors
//! its headings produce, its `{{#include}}` directives and its fenced code blocks.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use std::path::{Path, PathBuf};

/// The repository's root (this crate is `host/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_owned()
}

/// The options mdBook renders with that change what is a link or a heading.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// The 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A link or image in a page.
pub struct Link {
    pub target: String,
    pub line: usize,
}

/// Every link and image target of `text` (not those inside code), with its line.
pub fn links(text: &str) -> Vec<Link> {
    Parser::new_ext(text, options())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => Some(Link {
                target: dest_url.to_string(),
                line: line_of(text, range.start),
            }),
            _ => None,
        })
        .collect()
}

/// mdBook's id of a heading: its text lowercased, whitespace to `-`, every character but
/// letters, digits, `_` and `-` dropped.
pub fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The anchors the headings of `text` produce, as mdBook makes them: an explicit `{#id}`, or
/// the heading's text by [`anchor`], a repeated one suffixed `-1`, `-2`, ...
pub fn anchors(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut heading: Option<(String, Option<String>)> = None;
    for event in Parser::new_ext(text, options()) {
        match event {
            Event::Start(Tag::Heading { id, .. }) => {
                heading = Some((String::new(), id.map(|id| id.to_string())));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((text, _)) = heading.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((text, id)) = heading.take() {
                    let base = id.unwrap_or_else(|| anchor(&text));
                    let mut unique = base.clone();
                    let mut n = 1;
                    while found.contains(&unique) {
                        unique = format!("{base}-{n}");
                        n += 1;
                    }
                    found.push(unique);
                }
            }
            _ => {}
        }
    }
    found
}

/// `{{#include PATH[:...]}}` directives of `text` (outside code blocks too: mdBook expands
/// them everywhere), with their lines.
pub fn includes(text: &str) -> Vec<Link> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(start) = rest.find("{{#include ") {
            let after = &rest[start + "{{#include ".len()..];
            let Some(end) = after.find("}}") else { break };
            let path = after[..end].trim();
            let path = path.split(':').next().unwrap_or(path);
            found.push(Link {
                target: path.to_owned(),
                line: n + 1,
            });
            rest = &after[end..];
        }
    }
    found
}

/// A fenced code block: its info string, its text and the line of its opening fence.
pub struct Block {
    pub info: String,
    pub text: String,
    pub line: usize,
}

/// Every fenced code block of `text`.
pub fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut current: Option<Block> = None;
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                current = Some(Block {
                    info: info.to_string(),
                    text: String::new(),
                    line: line_of(text, range.start),
                });
            }
            Event::Text(t) => {
                if let Some(block) = current.as_mut() {
                    block.text.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => found.extend(current.take()),
            _ => {}
        }
    }
    found
}
