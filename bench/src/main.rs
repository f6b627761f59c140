//! reactor-bench: every scenario of issue 8 measured against a baseline in the same run,
//! written to bench/results/latest.json and rendered to docs/src/performance.md. Absolute
//! times on a shared machine are noise; the ratios are the result.

mod agent_apply;
mod chain_descriptor;
mod dispatch;
mod distribution;
mod end_to_end;
mod etcd;
mod etcd_loop;
mod fan_out;
mod hardening;
mod kube_api;
mod kv_incremental;
mod kvscheduler;
mod languages;
mod machine;
mod native_policy;
mod pipeline;
mod plot;
mod publish;
mod reload;
mod render;
mod replicas;
mod report;
mod restart;
mod rollout;
mod scenarios;
mod server;
mod store;
mod supply;
mod tls;
mod watches;

use anyhow::bail;
use clap::{Parser, Subcommand};
use report::{Report, SCENARIOS};
use std::path::PathBuf;

/// The same allocator as the `reactor-host` binary, so in-process scenarios measure what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(about = "reactor-host benchmarks against same-run baselines")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs every scenario, or the ones named, and merges the rows into the results file.
    Run {
        /// The built components (scripts/build-components.sh OUT).
        components: PathBuf,
        /// Scenarios to run (default: all): store dispatch reload rollout end-to-end fan-out distribution
        /// agent-publish agent-apply replicas kvscheduler restart languages memory hardening watches tls kube supply.
        scenarios: Vec<String>,
        #[command(flatten)]
        sizes: Box<scenarios::Sizes>,
        #[arg(long, default_value = "bench/results/latest.json")]
        out: PathBuf,
    },
    /// One side of the supply scenario's permission row, once (for an instruction count:
    /// bench/permission-instructions.sh runs it under valgrind).
    PermissionOnce {
        /// The built components (scripts/build-components.sh OUT).
        components: PathBuf,
        /// The compiled-code cache to load from (warm it with a first run).
        #[arg(long)]
        cache: PathBuf,
        #[arg(long, default_value_t = 500)]
        objects: usize,
        /// policy-rust with its declaration; otherwise undeclared.
        #[arg(long)]
        declared: bool,
    },
    /// Renders a results file as Markdown with its plots (PNG, beside the page).
    Render {
        #[arg(long = "in", default_value = "bench/results/latest.json")]
        input: PathBuf,
        #[arg(long, default_value = "docs/src/performance.md")]
        out: PathBuf,
        /// Hand-written findings appended to the page.
        #[arg(long, default_value = "bench/results/findings.md")]
        findings: PathBuf,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Run {
            components,
            scenarios,
            sizes,
            out,
        } => {
            let names: Vec<String> = if scenarios.is_empty() {
                SCENARIOS.iter().map(|s| s.to_string()).collect()
            } else {
                scenarios
            };
            if let Some(unknown) = names.iter().find(|n| !SCENARIOS.contains(&n.as_str())) {
                bail!(
                    "unknown scenario {unknown:?}; known: {}",
                    SCENARIOS.join(" ")
                );
            }
            let run = scenarios::run(&names, &components, &sizes).await;
            let failed = run.scenarios.iter().any(|s| s.note.starts_with("failed"));
            let previous = Report::load(&out).ok();
            let report = run.merge_into(previous, &names);
            report.save(&out)?;
            println!("wrote {}", out.display());
            if failed {
                bail!("some scenarios failed (see {})", out.display());
            }
        }
        Command::PermissionOnce {
            components,
            cache,
            objects,
            declared,
        } => supply::permission_once(&components, &cache, objects, declared).await?,
        Command::Render {
            input,
            out,
            findings,
        } => {
            let report = Report::load(&input)?;
            let findings = std::fs::read_to_string(&findings).ok();
            let dir = out
                .parent()
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("."));
            std::fs::create_dir_all(&dir)?;
            let md = render::render(&report, findings.as_deref(), &dir)?;
            std::fs::write(&out, md)?;
            println!("wrote {}", out.display());
        }
    }
    Ok(())
}
