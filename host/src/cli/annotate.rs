//! `reactor-host component annotate FILE`: write what a component may touch (kinds read,
//! written, watched; publishing to agents; WASI folders) into its `reactor-permissions`
//! custom section, from flags or a YAML file.

use crate::runtime::declaration;
use anyhow::Context;
use clap::Args;
use reactor_core::component::Permissions;
use reactor_core::object::validate_kind;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct AnnotateArgs {
    /// The component (`.wasm`); rewritten in place unless --out names another file.
    pub file: PathBuf,
    /// A kind it gets or lists (repeat, or separate with commas); the kinds it reconciles
    /// are always readable.
    #[arg(long, value_delimiter = ',')]
    pub reads: Vec<String>,
    /// A kind it applies or deletes as children (repeat, or separate with commas).
    #[arg(long, value_delimiter = ',')]
    pub writes: Vec<String>,
    /// A kind its describe() names as a secondary watch (repeat, or separate with commas).
    #[arg(long, value_delimiter = ',')]
    pub watches: Vec<String>,
    /// It publishes items to agents (the nimbus import).
    #[arg(long)]
    pub publishes: bool,
    /// A guest folder it expects the config to grant, e.g. /data (repeat).
    #[arg(long, value_delimiter = ',')]
    pub wasi: Vec<String>,
    /// A YAML file with the same fields (reads, writes, watches, publishes, wasi), merged
    /// with the flags.
    #[arg(long = "from")]
    pub from: Option<PathBuf>,
    /// Write the annotated component here instead of over FILE.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn set(items: &[String]) -> BTreeSet<String> {
    items.iter().map(|s| s.trim().to_owned()).collect()
}

/// The declaration the flags and the YAML file (if any) make together, checked.
fn declaration(args: &AnnotateArgs) -> anyhow::Result<Permissions> {
    let flags = Permissions {
        reads: set(&args.reads),
        writes: set(&args.writes),
        watches: set(&args.watches),
        publishes: args.publishes,
        wasi: set(&args.wasi),
    };
    let permissions = match &args.from {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("read {}", path.display()))?;
            let from: Permissions = serde_yaml_ng::from_str(&text)
                .with_context(|| format!("{}: not a declaration", path.display()))?;
            from.union(&flags)
        }
        None => flags,
    };
    for (field, kinds) in [
        ("reads", &permissions.reads),
        ("writes", &permissions.writes),
        ("watches", &permissions.watches),
    ] {
        for kind in kinds {
            validate_kind(kind).with_context(|| format!("{field}: {kind:?} is not a kind"))?;
        }
    }
    if let Some(bad) = permissions.wasi.iter().find(|dir| !dir.starts_with('/')) {
        anyhow::bail!("wasi: {bad:?} is not an absolute guest folder (e.g. /data)");
    }
    Ok(permissions)
}

pub fn run(args: AnnotateArgs) -> anyhow::Result<()> {
    let permissions = declaration(&args)?;
    let bytes = super::component_file::read(&args.file)?;
    let annotated = declaration::annotate(&bytes, &permissions)
        .with_context(|| format!("{}", args.file.display()))?;
    let out = args.out.as_deref().unwrap_or(&args.file);
    write_atomically(out, &annotated)?;
    println!("{}: declares {}", out.display(), permissions.summary());
    let signature = reactor_supply::policy::signature_path(out);
    if signature.exists() {
        println!(
            "{} no longer covers it: sign it again (reactor-host component sign)",
            signature.display()
        );
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file beside it, so a watched folder never
/// sees half a component.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let tmp = tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new(".")))
        .with_context(|| format!("write {}", path.display()))?;
    std::fs::write(tmp.path(), bytes).with_context(|| format!("write {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("write {}", path.display()))?;
    Ok(())
}
