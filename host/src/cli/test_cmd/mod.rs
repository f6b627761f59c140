//! `reactor-host test COMPONENT.wasm -f FIXTURES.yaml [--expect EXPECTED.yaml]`: runs a
//! reactor component against fixtures, without a server, on the embedded store kept in memory,
//! and prints (or checks) the objects, statuses and items its reconciles leave.

mod expect;
mod fixtures;
mod settle;
mod setup;
mod view;

use super::client_args::ClientArgs;
use super::exit::Exit;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The reactor component (`.wasm`, world `controller`), named after its file as in a
    /// components folder.
    pub component: PathBuf,
    /// A fixture file: YAML or JSON documents, as for `apply -f`. Several are applied in
    /// order, each all or nothing, and the reconciles run to quiescence after each.
    #[arg(short = 'f', long = "filename", required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Compare the result with this file (the YAML this command prints): exit 0 with an
    /// `ok` line when equal, 1 with a unified diff when not (2: the run failed).
    #[arg(long, value_name = "FILE")]
    pub expect: Option<PathBuf>,
    /// The component config file, as `serve --config` reads it (config, limits, grants).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// How many times a failing object runs (its backoff skipped) before it is reported as
    /// still retrying.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub attempts: u32,
    /// How long the reconciles after one fixture file may take before the run fails.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Keep the compiled component in this folder between runs (by default it is compiled
    /// into a temporary folder, removed at the end).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// The component's wall clock, stopped at this RFC 3339 time so that times it writes
    /// (a condition's `lastTransitionTime`) are the same on every run; `now`: the real clock.
    #[arg(long, default_value = "2000-01-01T00:00:00Z", value_parser = clock, value_name = "TIME|now")]
    pub clock: Clock,
}

/// The wall clock a `test` run gives the component.
#[derive(Debug, Clone, Copy)]
pub enum Clock {
    Real,
    Frozen(std::time::SystemTime),
}

fn clock(text: &str) -> Result<Clock, String> {
    if text == "now" {
        return Ok(Clock::Real);
    }
    humantime::parse_rfc3339_weak(text)
        .map(Clock::Frozen)
        .map_err(|e| format!("{text:?} is neither an RFC 3339 time nor `now`: {e}"))
}

/// Exits 0 when the run went through (and matched `--expect`), 1 when the result differs
/// from `--expect`, 2 when the run could not be done (bad fixtures, a refused apply, a
/// component that does not load, reconciles that never settle), as `diff` does.
pub async fn run(args: TestArgs, global: &ClientArgs) -> anyhow::Result<()> {
    match outcome(args, global).await {
        Ok(Outcome::Same) => Ok(()),
        Ok(Outcome::Differs(source)) => Err(Exit {
            code: 1,
            message: Some(format!("the result differs from {source}")),
        }
        .into()),
        Err(e) => Err(Exit {
            code: 2,
            message: Some(format!("{e:#}")),
        }
        .into()),
    }
}

enum Outcome {
    Same,
    /// The result differs from this expectation file.
    Differs(String),
}

async fn outcome(args: TestArgs, global: &ClientArgs) -> anyhow::Result<Outcome> {
    global.refuse(
        "test",
        &["--server", "--token", "--token-file", "--data", "--agent"],
    )?;
    // Everything the user gave is read before anything runs.
    let fixtures = fixtures::read_all(&args.files)?;
    let expected = args
        .expect
        .as_deref()
        .map(expect::Expected::read)
        .transpose()?;
    let host = setup::Host::start(&args).await?;
    for fixture in &fixtures {
        fixture.apply(&host.admitter, host.store.as_ref()).await?;
        let settled = settle::settle(&host.engine, args.attempts, args.timeout)
            .await
            .map_err(|e| anyhow::anyhow!("after {}: {e}", fixture.source))?;
        settled.report(args.attempts);
    }
    let result = view::render(host.store.as_ref()).await?;
    match expected {
        None => print!("{result}"),
        Some(expected) => match expected.diff(&result) {
            None => println!("ok: {}", expected.source),
            Some(diff) => {
                print!("{diff}");
                return Ok(Outcome::Differs(expected.source));
            }
        },
    }
    Ok(Outcome::Same)
}
