//! The `reactor-host` command line: `serve` and the client commands. This is the program's
//! edge, so errors are `anyhow` here and become one line on stderr in main.

mod agent;
mod agents;
mod annotate;
mod api_resources;
mod apply;
mod audit;
mod client_args;
mod completions;
mod component;
mod component_file;
mod components;
mod delete;
mod describe;
mod describe_component;
mod diff;
mod documents;
mod events;
mod exit;
mod explain;
mod finalize;
mod get;
mod jsonpath;
mod kinds;
mod kubeconfig;
mod label;
mod logs;
mod output;
mod scheduler;
mod serve;
mod shutdown;
mod store;
mod table;
mod test_cmd;
mod tls;
mod tokens;
mod users;
mod wait;
mod watch;

pub use exit::Exit;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "reactor-host",
    version,
    about = "A host for controllers whose logic runs sandboxed in WebAssembly"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: client_args::ClientArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the API, the store and the controllers.
    Serve(Box<serve::ServeArgs>),
    /// Create or update objects from YAML or JSON documents (all or nothing).
    Apply(apply::ApplyArgs),
    /// Show objects of a kind, or one object.
    Get(get::GetArgs),
    /// Delete objects: KIND NAME..., KIND -l SELECTOR, or -f FILE (each stays, marked
    /// deleting, while finalizers hold it).
    Delete(delete::DeleteArgs),
    /// One object for a person: metadata, owner, spec, status, reconcile state per reactor,
    /// children, Nimbus items with each agent's state, recent events.
    Describe(describe::DescribeArgs),
    /// Show what `apply -f FILE` would change (exit 0: nothing, 1: differences).
    Diff(diff::DiffArgs),
    /// Set (`key=value`) and remove (`key-`) an object's labels.
    Label(label::LabelArgs),
    /// Wait until an object is deleted, created, or a JSONPath of it has a value.
    Wait(wait::WaitArgs),
    /// Remove a finalizer that holds an object (its cleanup will not run).
    Finalize(finalize::FinalizeArgs),
    /// The kinds the server knows of: their Kind objects, and what reconciles each.
    ApiResources(api_resources::ApiResourcesArgs),
    /// A kind's schema (from its Kind object): fields, types, defaults, descriptions.
    Explain(explain::ExplainArgs),
    /// What happened to objects: reconcile errors, failures, finalizer waits, agents' failed
    /// items, with counts (kept in memory by the server, bounded).
    Events(events::EventsArgs),
    /// The lines a component logged or printed (the newest, kept by the server); -f follows.
    Logs(logs::LogsArgs),
    /// Print every change of a kind as one JSON event per line.
    Watch(watch::WatchArgs),
    /// List the loaded components: name, world, file, sha256, state, last error.
    Components(components::ComponentsArgs),
    /// One component file: push it to an OCI registry, sign it, make a signing key, declare
    /// its permissions; approve a version waiting for its wider declaration.
    Component(component::ComponentArgs),
    /// Run an agent: receive the items meant for it, apply them, report their state.
    Agent(agent::AgentArgs),
    /// List the agents: connected or not, last seen, items applied / pending / failed.
    Agents(agents::AgentsArgs),
    /// Ask an agent's KV scheduler: values' states, dump, graph, history; resync, notify, txn.
    Scheduler(scheduler::SchedulerArgs),
    /// Maintain the embedded store: `store verify` checks a stopped server's file.
    Store(store::StoreArgs),
    /// Run a reactor component against fixture files, without a server (an in-memory store),
    /// and print the objects, statuses and items its reconciles leave; --expect compares.
    Test(test_cmd::TestArgs),
    /// Users with their own tokens and roles: create, list, revoke (admin only).
    User(users::UserArgs),
    /// Join tokens for agents: `token create --agent ID` (admin only).
    Token(tokens::TokenArgs),
    /// The server's audit log, newest last: every change and every refusal (admin only).
    Audit(audit::AuditArgs),
    /// Who the credential this command presents is, and its role.
    Whoami,
    /// Print a kubeconfig (server, CA, this command's credential) for kubectl and client
    /// libraries; `--token-file` for another user's.
    Kubeconfig(kubeconfig::KubeconfigArgs),
    /// Print a shell completion script: `source <(reactor-host completions bash)`.
    Completions(completions::CompletionsArgs),
}

impl Command {
    /// Whether this command is the long-running server (it logs more by default).
    pub fn is_server(&self) -> bool {
        matches!(self, Self::Serve(_) | Self::Agent(_))
    }

    /// What the command logs to stderr unless `RUST_LOG` says otherwise: servers their
    /// `info`, `test` the guest's own lines (its `log` calls, stdout, stderr) but not the
    /// loader's warning of a failed load (the command's own error line says it), the rest
    /// warnings only.
    pub fn default_log_filter(&self) -> &'static str {
        match self {
            _ if self.is_server() => "info",
            Self::Test(_) => "warn,reactor_runtime::load::loader=error,guest=debug",
            _ => "warn",
        }
    }
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let global = &cli.global;
    match cli.command {
        Command::Serve(args) => serve::run(*args, global).await,
        Command::Apply(args) => apply::run(args, global).await,
        Command::Get(args) => get::run(args, global).await,
        Command::Delete(args) => delete::run(args, global).await,
        Command::Describe(args) => describe::run(args, global).await,
        Command::Diff(args) => diff::run(args, global).await,
        Command::Label(args) => label::run(args, global).await,
        Command::Wait(args) => wait::run(args, global).await,
        Command::Finalize(args) => finalize::run(args, global).await,
        Command::ApiResources(args) => api_resources::run(args, global).await,
        Command::Explain(args) => explain::run(args, global).await,
        Command::Events(args) => events::run(args, global).await,
        Command::Logs(args) => logs::run(args, global).await,
        Command::Watch(args) => watch::run(args, global).await,
        Command::Components(args) => components::run(args, global).await,
        Command::Component(args) => component::run(args, global).await,
        Command::Agent(args) => agent::run(args, global).await,
        Command::Agents(args) => agents::run(args, global).await,
        Command::Scheduler(args) => scheduler::run(args, global).await,
        Command::Store(args) => store::run(args, global).await,
        Command::Test(args) => test_cmd::run(args, global).await,
        Command::User(args) => users::run(args, global).await,
        Command::Token(args) => tokens::run(args, global).await,
        Command::Audit(args) => audit::run(args, global).await,
        Command::Whoami => users::whoami(global).await,
        Command::Kubeconfig(args) => kubeconfig::run(args, global).await,
        Command::Completions(args) => completions::run(args),
    }
}
