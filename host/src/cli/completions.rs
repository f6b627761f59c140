//! `reactor-host completions SHELL`: the shell completion script (clap_complete), e.g.
//! `source <(reactor-host completions bash)`.

use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::io::Write;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut super::Cli::command(),
        "reactor-host",
        &mut script,
    );
    std::io::stdout().write_all(&script)?;
    Ok(())
}
