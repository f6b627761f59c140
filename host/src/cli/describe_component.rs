//! `reactor-host describe component NAME`: one component for a person — its state and
//! version, what it reconciles, what it may touch (its declared permissions), and a version
//! waiting for approval with what it would add.

use super::client_args::explain;
use crate::api::Client;
use crate::runtime::{ComponentInfo, Described, version_of};
use reactor_core::component::Permissions;
use reactor_core::component::permissions::UNDECLARED;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Prints component `name` as the server runs it.
pub async fn run(client: &Client, name: &str) -> anyhow::Result<()> {
    let info = client.component(name).await.map_err(explain)?;
    print!("{}", text(&info)?);
    Ok(())
}

fn list(items: &BTreeSet<String>) -> String {
    if items.is_empty() {
        return "-".into();
    }
    items.iter().cloned().collect::<Vec<_>>().join(", ")
}

/// The declaration, one line per permission.
fn permissions(out: &mut String, p: &Permissions, indent: &str) -> std::fmt::Result {
    writeln!(out, "{indent}reads:      {}", list(&p.reads))?;
    writeln!(out, "{indent}writes:     {}", list(&p.writes))?;
    writeln!(out, "{indent}watches:    {}", list(&p.watches))?;
    let publishes = if p.publishes { "yes" } else { "no" };
    writeln!(out, "{indent}publishes:  {publishes}")?;
    writeln!(out, "{indent}wasi:       {}", list(&p.wasi))
}

fn text(c: &ComponentInfo) -> anyhow::Result<String> {
    let mut out = String::new();
    let or_none = |v: Option<String>| v.unwrap_or_else(|| "<none>".into());
    writeln!(out, "Name:         {}", c.name)?;
    writeln!(out, "World:        {}", c.world)?;
    writeln!(
        out,
        "State:        {}",
        format!("{:?}", c.state).to_lowercase()
    )?;
    writeln!(
        out,
        "Version:      {}",
        or_none(c.sha256.as_deref().map(version_of))
    )?;
    writeln!(out, "Loaded:       {}", or_none(c.loaded_at.clone()))?;
    writeln!(out, "File:         {}", c.file.display())?;
    if let Some(sha256) = &c.compiling {
        writeln!(out, "Compiling:    {}", version_of(sha256))?;
    }
    if let Some(Described::Controller(info)) = &c.described {
        writeln!(out, "Reconciles:   {}", info.kinds.join(", "))?;
        let watches: Vec<&str> = info.watches.iter().map(|w| w.kind()).collect();
        writeln!(
            out,
            "Watches:      {}",
            or_none((!watches.is_empty()).then(|| watches.join(", ")))
        )?;
    }
    match (&c.permissions, c.serving) {
        (Some(p), _) => {
            writeln!(out, "Permissions:")?;
            permissions(&mut out, p, "  ")?;
        }
        (None, true) => writeln!(
            out,
            "Permissions:  {UNDECLARED} (it may read, write and publish as any reactor)"
        )?,
        (None, false) => writeln!(out, "Permissions:  <none serving>")?,
    }
    match &c.waiting {
        None => writeln!(out, "Waiting:      <none>")?,
        Some(waiting) => {
            writeln!(out, "Waiting:")?;
            writeln!(out, "  version:    {}", version_of(&waiting.sha256))?;
            writeln!(out, "  adds:       {}", waiting.added.join(", "))?;
            match &waiting.permissions {
                Some(p) => permissions(&mut out, p, "  ")?,
                None => writeln!(out, "  declares:   {UNDECLARED}")?,
            }
            writeln!(
                out,
                "  approve:    reactor-host component approve {}",
                c.name
            )?;
        }
    }
    match &c.shadow {
        None => writeln!(out, "Shadow:       <none>")?,
        Some(shadow) => {
            writeln!(out, "Shadow:")?;
            writeln!(out, "  version:    {}", version_of(&shadow.sha256))?;
            let state = match shadow.dropped {
                true => "dropped: its writes differed",
                false => "running beside the serving version, committing nothing",
            };
            writeln!(out, "  state:      {state}")?;
            writeln!(
                out,
                "  compared:   {} matched, {} differed, of {} needed",
                shadow.matched, shadow.differed, shadow.needed
            )?;
            for diff in &shadow.diffs {
                writeln!(out, "  differed on {}:", diff.object)?;
                for line in &diff.lines {
                    writeln!(out, "    {line}")?;
                }
            }
            if !shadow.dropped {
                writeln!(
                    out,
                    "  promote:    reactor-host component approve {}",
                    c.name
                )?;
            }
        }
    }
    writeln!(out, "Calls:        {} ({} trapped)", c.calls, c.traps)?;
    writeln!(out, "Last error:   {}", or_none(c.error.clone()))?;
    Ok(out)
}
