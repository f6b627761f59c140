//! `reactor-host serve`: the store, the API and (as they arrive) the controllers.

use super::client_args::ClientArgs;
use super::shutdown::Shutdown;
use crate::api::server::ComponentsApi;
use crate::api::{Server, ServerConfig, token};
use crate::controller::{
    Admitter, Approvals, ControllerOptions, Engine, EngineHost, ObjectLocks, Rollbacks,
};
use crate::nimbus::FanoutLimits;
use crate::runtime::{Runtime, RuntimeConfig, World};
use crate::store::embedded::StartCheck;
use crate::store::{EmbeddedStore, EmbeddedStoreOptions, Store};
#[cfg(feature = "etcd")]
use crate::store::{
    EtcdAuth, EtcdStore, EtcdStoreOptions, EtcdUrl, Shards,
    etcd::{Replica, share_ca, share_token},
};

/// Without the `etcd` feature there is never an etcd store nor a replica.
#[cfg(not(feature = "etcd"))]
type EtcdStore = std::convert::Infallible;
#[cfg(not(feature = "etcd"))]
type Replica = std::convert::Infallible;
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub tls: super::tls::TlsArgs,
    /// Where the embedded store and the API token live: the global --data (default ./data).
    #[arg(skip)]
    pub data: PathBuf,
    /// The folder of reactor components (`.wasm`), watched for changes.
    #[arg(long, default_value = "./components")]
    pub components: PathBuf,
    /// The component configuration file (YAML).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The address of the HTTP API.
    #[arg(long, default_value = "127.0.0.1:7800")]
    pub listen: String,
    /// The store: embedded in --data by default, or `etcd://host:port[,host:port][/prefix]`
    /// (objects under the prefix, default `/reactor/`; replicas on one etcd share the work).
    #[arg(long)]
    pub store: Option<String>,
    /// How many of the newest changes the embedded store keeps for watches to resume from
    /// (etcd keeps its history until it is compacted); agents' feeds resume from at most as
    /// many item changes.
    #[arg(long, default_value_t = 100_000)]
    pub log_retention: u64,
    /// The most memory the embedded store's file cache (redb's pages read and written) may
    /// hold, in bytes. Its pages are in the kernel's page cache too, so a smaller cache costs
    /// a system call per page missed, not a disk read.
    #[arg(long, default_value_t = EmbeddedStoreOptions::default().cache_bytes)]
    pub store_cache_bytes: usize,
    /// When the embedded store checks every record (checksum, label index, log, counts)
    /// before it serves: `unclean` (after an unclean shutdown, when redb had to recover the
    /// file), `always` or `never`. What it finds marks the store damaged (see /healthz).
    #[arg(long, default_value = "unclean")]
    pub store_start_check: StartCheck,
    /// Records a second the embedded store's background scrub checks, pass after pass
    /// (checksums, label index, log, counts); 0 turns it off. What it finds marks the store
    /// damaged (see /healthz).
    #[arg(long, default_value_t = crate::store::embedded::DEFAULT_SCRUB_RATE)]
    pub store_scrub_rate: u32,
    /// How often an idle watch gets a bookmark, e.g. `10s`.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub bookmark_interval: Duration,
    /// On etcd: this replica's name among those sharing the work (default: random).
    #[arg(long)]
    pub replica_id: Option<String>,
    /// On etcd: the lease of this replica; its work moves to others this long after it dies.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub lease_ttl: Duration,
    /// On etcd: how many shards the objects are split into among the replicas.
    #[arg(long, default_value_t = 16)]
    pub shards: u32,
    /// Allow uploading and removing components over the API (off: it runs code the caller
    /// chooses).
    #[arg(long)]
    pub allow_component_api: bool,
    /// The API group the Kubernetes API (`/apis`) serves kinds in when their Kind objects
    /// name none.
    #[arg(long, default_value = reactor_kube::DEFAULT_GROUP)]
    pub api_group: String,
    /// The largest object, spec and status included (as JSON), any writer may store: the API,
    /// reactors and agents alike. Request bodies are limited to 4× this (at least 2 MiB).
    #[arg(long, default_value_t = crate::store::DEFAULT_MAX_OBJECT_BYTES)]
    pub max_object_bytes: usize,
    /// The most bytes of agents' reports in flight: a report request waits, unread, until
    /// its body's bytes are free in this budget, and frees them once its reports are
    /// written. A slow store makes agents wait rather than the server grow; a request larger
    /// than the budget goes alone. At most 4 GiB.
    #[arg(long, default_value_t = crate::nimbus::DEFAULT_BYTES_IN_FLIGHT, value_parser = parse_budget)]
    pub reports_in_flight_bytes: usize,
    /// How long a report request's body may take to arrive once its share of
    /// `--reports-in-flight-bytes` is granted: one that does not is refused (408) and its
    /// share freed, so a client that declares a body and never sends it holds nothing for
    /// long.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub report_body_timeout: Duration,
    /// On etcd: the etcd server's `--max-txn-ops`. One apply, or one callback's writes, is one
    /// transaction: one of more objects is refused with an error naming this limit.
    #[arg(long, default_value_t = 128)]
    pub etcd_max_txn_ops: usize,
    /// On etcd: the etcd server's `--max-request-bytes`, checked the same way.
    #[arg(long, default_value_t = 1536 << 10)]
    pub etcd_max_request_bytes: usize,
    /// On etcd over TLS: the CA (PEM) that signed etcd's server certificate. With it the
    /// endpoints are `https://` and etcd's certificate must be signed by this CA.
    #[arg(long, value_name = "FILE")]
    pub etcd_ca: Option<PathBuf>,
    /// On etcd over TLS: the client certificate (PEM) to present to an etcd started with
    /// `--client-cert-auth`; with --etcd-key and --etcd-ca.
    #[arg(long, value_name = "FILE")]
    pub etcd_cert: Option<PathBuf>,
    /// On etcd over TLS: the private key (PEM) of --etcd-cert.
    #[arg(long, value_name = "FILE")]
    pub etcd_key: Option<PathBuf>,
    /// On etcd with auth enabled: the etcd user. Its password is read from the environment
    /// variable REACTOR_ETCD_PASSWORD (never a flag: command lines are visible to every user).
    #[arg(long, value_name = "NAME")]
    pub etcd_user: Option<String>,
    /// The most writes one callback may make: each `publish`, `unpublish`, `store.apply`,
    /// `store.delete` and `set-status` that changes something counts one. They commit in one
    /// transaction when it returns; one write more fails the callback, keeping none of them.
    /// Default 1000; on etcd at most --etcd-max-txn-ops less 2 (the callback's object and the
    /// replica's guard are in its transaction too), which is the default there when lower.
    #[arg(long, value_parser = parse_writes)]
    pub max_callback_writes: Option<usize>,
    /// When a component's new version starts serving, the objects its reactor watches are
    /// reconciled again at this many per second, behind fresh events (the config file's
    /// `rollout.rate` overrides it).
    #[arg(long, default_value_t = crate::controller::DEFAULT_SLOW_RATE, value_parser = parse_rate)]
    pub rollout_rate: f64,
    /// How often the items agents receive are checked for owners that are gone (deleted
    /// with no reactor to withdraw them, a finalizer removed by hand): those are withdrawn.
    /// Also at start.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub orphan_sweep_interval: Duration,
    /// Remove the agents not seen for this long (no heartbeat, e.g. `1h`), as `agents remove`
    /// does: their registration and their reports go. Off by default. Checked every tenth of
    /// it (within 1s and 1m); with replicas, each agent is removed by one of them.
    #[arg(long, value_parser = parse_after)]
    pub remove_agents_after: Option<Duration>,
    /// Refuse applies of kinds that have no Kind object (by default they are stored, and the
    /// answer warns when no reactor knows the kind either).
    #[arg(long)]
    pub strict_kinds: bool,
}

/// The environment variable `--etcd-user`'s password is read from.
pub const ETCD_PASSWORD_VAR: &str = "REACTOR_ETCD_PASSWORD";

/// The connection flags of etcd (`--etcd-ca`, `--etcd-cert`, `--etcd-key`, `--etcd-user`),
/// checked before anything starts: each needs an etcd store, a certificate its key (and the
/// reverse) and the CA, a user its password in the environment. One line each.
fn check_etcd_flags(args: &ServeArgs, password: Option<&str>) -> anyhow::Result<()> {
    let given = [
        ("--etcd-ca", args.etcd_ca.is_some()),
        ("--etcd-cert", args.etcd_cert.is_some()),
        ("--etcd-key", args.etcd_key.is_some()),
        ("--etcd-user", args.etcd_user.is_some()),
    ];
    if args.store.is_none()
        && let Some((flag, _)) = given.iter().find(|(_, set)| *set)
    {
        anyhow::bail!(
            "{flag} is for an etcd store: the store is the embedded one (add --store etcd://host:port)"
        );
    }
    match (&args.etcd_cert, &args.etcd_key) {
        (Some(_), None) => anyhow::bail!("--etcd-cert needs --etcd-key (its private key)"),
        (None, Some(_)) => anyhow::bail!("--etcd-key needs --etcd-cert (its certificate)"),
        (Some(_), Some(_)) if args.etcd_ca.is_none() => {
            anyhow::bail!("--etcd-cert needs --etcd-ca (the CA of etcd's server certificate: TLS)")
        }
        _ => {}
    }
    if let Some(user) = &args.etcd_user
        && password.is_none()
    {
        anyhow::bail!(
            "--etcd-user {user} needs its password in the environment variable {ETCD_PASSWORD_VAR}"
        );
    }
    Ok(())
}

/// The etcd password from the environment; `None` when unset or not text.
fn etcd_password() -> Option<String> {
    std::env::var(ETCD_PASSWORD_VAR).ok()
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!(
            "{text:?} is not a rate above 0 (objects per second)"
        )),
    }
}

fn parse_after(text: &str) -> Result<Duration, String> {
    match humantime::parse_duration(text) {
        Ok(after) if !after.is_zero() => Ok(after),
        Ok(_) => Err(format!("{text:?} is not a duration above 0")),
        Err(e) => Err(format!("{text:?} is not a duration such as 1h: {e}")),
    }
}

fn parse_budget(text: &str) -> Result<usize, String> {
    match text.parse::<u32>() {
        Ok(bytes) if bytes > 0 => Ok(bytes as usize),
        _ => Err(format!(
            "{text:?} is not a number of bytes above 0 and at most 4294967295"
        )),
    }
}

fn parse_writes(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(writes) if writes > 0 => Ok(writes),
        _ => Err(format!("{text:?} is not a number of writes above 0")),
    }
}

/// The most writes one callback may make: `--max-callback-writes`, within what one etcd
/// transaction holds when the store is etcd.
fn callback_writes(args: &ServeArgs) -> anyhow::Result<usize> {
    let default = ControllerOptions::default().max_writes;
    if args.store.is_none() {
        return Ok(args.max_callback_writes.unwrap_or(default));
    }
    // A callback's transaction holds its writes, a check of its object and the replica's guard.
    let most = args.etcd_max_txn_ops.saturating_sub(2);
    match args.max_callback_writes {
        _ if most == 0 => anyhow::bail!(
            "--etcd-max-txn-ops {} leaves no room for a callback's writes: it takes at least 3",
            args.etcd_max_txn_ops
        ),
        None => Ok(default.min(most)),
        Some(writes) if writes <= most => Ok(writes),
        Some(writes) => anyhow::bail!(
            "--max-callback-writes {writes} is more than one etcd transaction holds with --etcd-max-txn-ops {}: at most {most} (raise etcd's --max-txn-ops and --etcd-max-txn-ops first)",
            args.etcd_max_txn_ops
        ),
    }
}

pub async fn run(mut args: ServeArgs, global: &ClientArgs) -> anyhow::Result<()> {
    global.refuse(
        "serve",
        &[
            "--server",
            "--token",
            "--token-file",
            "--agent",
            "--kubeconfig",
            "--ca",
        ],
    )?;
    // From the start, also as a container's PID 1: a stop signal while the server starts is
    // acted on once it serves (nothing half-written is left behind).
    let mut shutdown = Shutdown::listen()?;
    args.data = global.data_or("./data");
    check_etcd_flags(&args, etcd_password().as_deref())?;
    let max_writes = callback_writes(&args)?;
    // Count the loads of the components found at start (compiled or from the cache).
    crate::api::server::install_metrics();
    let (store, token, etcd) = open_store(&args).await?;
    let ca = cluster_ca(&args, etcd.as_ref()).await?;
    let tls = if args.tls.insecure_http {
        if args.tls.tls_cert.is_some() {
            anyhow::bail!("--insecure-http serves plain HTTP: it takes no --tls-cert");
        }
        eprintln!(
            "reactor-host: serving plain HTTP (--insecure-http): tokens cross the network readable"
        );
        None
    } else {
        Some(super::tls::prepare(
            &args.tls,
            &args.data,
            &args.listen,
            &ca,
        )?)
    };
    // On etcd the engine works only on the shards this replica owns, and writes through a
    // handle fenced by its lease; the API serves every object and is not fenced.
    let (engine_store, locks, replica): (Arc<dyn Store>, ObjectLocks, Option<Replica>) = match etcd
    {
        None => (store.clone(), ObjectLocks::default(), None),
        #[cfg(not(feature = "etcd"))]
        Some(never) => match never {},
        #[cfg(feature = "etcd")]
        Some(etcd) => {
            let shards = Shards::new(args.shards);
            let id = args
                .replica_id
                .clone()
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let (replica, fence) = Replica::start(etcd.clone(), shards.clone(), id, args.lease_ttl);
            let fenced: Arc<dyn Store> = Arc::new(etcd.fenced(fence));
            (fenced, ObjectLocks::sharded(shards), Some(replica))
        }
    };
    let options = ControllerOptions {
        rollout_rate: args.rollout_rate,
        max_writes,
        ..ControllerOptions::default()
    };
    let engine = Engine::with_locks(engine_store, options, locks);
    let mut runtime_config = RuntimeConfig::new(&args.data);
    // Users' applies and reactors' writes pass one admission.
    let admitter = Arc::new(Admitter::new(engine.context(), args.strict_kinds));
    runtime_config.host = Arc::new(EngineHost::admitting(
        engine.context().clone(),
        admitter.clone(),
    ));
    // The serving and replaced versions of each component, so that one rolled back to
    // serves again after a restart.
    runtime_config.versions_dir = Some(args.data.join("versions"));
    // With a `trust` section in the config, only components signed by its keys load.
    runtime_config.admission = Some(Arc::new(reactor_supply::TrustPolicy));
    let runtime = Runtime::new(runtime_config)?;
    // The versions rolled back (here, before a restart, or by another replica) before any
    // component loads, then as they are recorded or cleared.
    let _rollbacks = Rollbacks::follow(store.clone(), runtime.clone())
        .await
        .context("cannot read the rollbacks recorded in the store")?;
    // The wider declarations approved (here, before a restart, or on another replica), before
    // any component loads, then as they are approved.
    let _approvals = Approvals::follow(store.clone(), runtime.clone())
        .await
        .context("cannot read the approvals recorded in the store")?;
    if let Some(path) = &args.config {
        runtime.watch_config(path).await?;
    }
    runtime
        .watch_dir(&args.components, World::Controller)
        .await?;
    // Components the config names by `source`: pulled from their registries, kept by digest,
    // each tag serving the digest recorded in the store for every replica.
    let _supply = match &args.config {
        Some(_) => {
            let agreement = reactor_supply::agreement::Agreement::follow(store.clone());
            let components = &args.components;
            Some(
                reactor_supply::follow::start(runtime.clone(), &args.data, components, agreement)
                    .await?,
            )
        }
        None => None,
    };
    let _following = engine.follow(&runtime);
    let sweeping = tokio::spawn(crate::nimbus::sweep_orphans_every(
        store.clone(),
        args.orphan_sweep_interval.max(Duration::from_millis(100)),
    ));
    let removing = args.remove_agents_after.map(|after| {
        tokio::spawn(crate::nimbus::remove_unseen_every(
            store.clone(),
            engine.context().reports.clone(),
            after,
        ))
    });

    let server = Server::bind(ServerConfig {
        listen: args.listen.clone(),
        token: token.clone(),
        tls: tls.as_ref().map(|t| t.config.clone()),
        ca_anchor: tls.as_ref().map(|t| t.anchor_pem.clone()),
        ca: tls.is_some().then_some(ca),
        audit: Some(args.data.join("audit.log")),
        store,
        admission: Some(admitter),
        events: Some(engine.context().events.clone()),
        reports: Some(engine.context().reports.clone()),
        components: Some(ComponentsApi {
            runtime: runtime.clone(),
            dir: args.components.clone(),
            allow_changes: args.allow_component_api,
        }),
        max_request_bytes: crate::api::server::request_limit(args.max_object_bytes),
        reports_in_flight_bytes: args.reports_in_flight_bytes,
        report_body_timeout: args.report_body_timeout,
        fanout: FanoutLimits::resuming(args.log_retention),
        api_group: args.api_group.clone(),
    })
    .await?;
    let addr = server.local_addr()?;
    let url = format!("{}://{addr}", server.scheme());
    tracing::info!(%addr, data = %args.data.display(), "serving");
    let reachable = if addr.ip().is_unspecified() {
        format!("{}://127.0.0.1:{}", server.scheme(), addr.port())
    } else {
        url.clone()
    };
    let client_file = super::tls::write_client_file(
        &args.data,
        &reachable,
        tls.as_ref().map(|t| t.anchor_pem.as_str()),
        &token,
    )?;
    tracing::info!(file = %client_file.display(), "the client file (a kubeconfig) is written");
    // Tests and scripts read this line to learn the port when --listen ends in :0.
    let mut stdout = std::io::stdout();
    writeln!(stdout, "reactor-host listening on {url}")?;
    stdout.flush()?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(async {
        let _ = stop_rx.await;
    }));
    let signal = shutdown.requested().await;
    tracing::info!(signal, "shutting down");
    let _ = stop_tx.send(());
    sweeping.abort();
    if let Some(removing) = removing {
        removing.abort();
    }
    // Open watch streams never end by themselves: give the rest a moment, then stop.
    if let Some(replica) = replica {
        #[cfg(feature = "etcd")]
        replica.leave().await;
        #[cfg(not(feature = "etcd"))]
        match replica {}
    }
    match tokio::time::timeout(Duration::from_secs(3), serving).await {
        Ok(joined) => joined.context("the server task failed")??,
        Err(_) => tracing::info!("closing open watch streams"),
    }
    Ok(())
}

/// The store `--store` names (embedded in `--data` by default) and the API token. On etcd the
/// token is shared: the first replica stores its own, later ones adopt it into their `--data`.
async fn open_store(
    args: &ServeArgs,
) -> anyhow::Result<(Arc<dyn Store>, String, Option<EtcdStore>)> {
    let local = token::load_or_create(&args.data)?;
    let Some(url) = &args.store else {
        let options = EmbeddedStoreOptions {
            log_retention: args.log_retention,
            bookmark_interval: args.bookmark_interval,
            max_object_bytes: args.max_object_bytes,
            cache_bytes: args.store_cache_bytes,
            start_check: args.store_start_check,
            scrub_rate: args.store_scrub_rate,
            ..EmbeddedStoreOptions::default()
        };
        let data = args.data.clone();
        let store = tokio::task::spawn_blocking(move || EmbeddedStore::open(&data, options))
            .await
            .context("the store failed to open")??;
        return Ok((Arc::new(store), local, None));
    };
    #[cfg(not(feature = "etcd"))]
    anyhow::bail!(
        "--store {url}: this reactor-host was built without etcd (cargo feature `etcd`, on by default)"
    );
    #[cfg(feature = "etcd")]
    open_etcd(args, url, local).await
}

/// The etcd store `--store` names, and the token the replicas share.
#[cfg(feature = "etcd")]
async fn open_etcd(
    args: &ServeArgs,
    url: &str,
    local: String,
) -> anyhow::Result<(Arc<dyn Store>, String, Option<EtcdStore>)> {
    let url = EtcdUrl::parse(url)?;
    let options = EtcdStoreOptions {
        bookmark_interval: args.bookmark_interval,
        max_object_bytes: args.max_object_bytes,
        max_txn_ops: args.etcd_max_txn_ops,
        max_request_bytes: args.etcd_max_request_bytes,
        auth: EtcdAuth {
            ca: args.etcd_ca.clone(),
            cert: args.etcd_cert.clone(),
            key: args.etcd_key.clone(),
            user: args.etcd_user.clone(),
            // Only with a user: the variable may be set for other programs.
            password: args.etcd_user.as_ref().and_then(|_| etcd_password()),
        },
        ..EtcdStoreOptions::default()
    };
    let store = EtcdStore::connect(&url, options).await?;
    let shared = share_token(&store, &local).await?;
    if shared != local {
        token::replace(&args.data, &shared)?;
    }
    Ok((Arc::new(store.clone()), shared, Some(store)))
}

/// The cluster's CA: `<data>/ca.crt` and `ca.key`, made at first start; on etcd the first
/// replica's, which later replicas adopt into their data folder.
async fn cluster_ca(
    args: &ServeArgs,
    etcd: Option<&EtcdStore>,
) -> anyhow::Result<reactor_trust::Ca> {
    let local = reactor_trust::Ca::load_or_create(&args.data)?;
    let Some(etcd) = etcd else {
        return Ok(local);
    };
    #[cfg(not(feature = "etcd"))]
    match *etcd {}
    #[cfg(feature = "etcd")]
    {
        let candidate = format!("{}{}", local.cert_pem(), local.key_pem());
        let shared = share_ca(etcd, &candidate).await?;
        if shared == candidate {
            return Ok(local);
        }
        let split = shared
            .find("-----BEGIN PRIVATE KEY-----")
            .context("the CA shared in etcd has no key")?;
        let ca = reactor_trust::Ca::from_pem(&shared[..split], &shared[split..])
            .context("the CA shared in etcd")?;
        ca.write(&args.data)?;
        Ok(ca)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    /// The limit `serve ARGS` gives a callback's writes, or why it refuses to start.
    fn limit(args: &[&str]) -> Result<usize, String> {
        let cli = Cli::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        callback_writes(&cli.serve).map_err(|e| e.to_string())
    }

    #[test]
    fn a_callbacks_limit_of_writes_is_the_flag_within_one_etcd_transaction() {
        assert_eq!(limit(&[]), Ok(1000));
        assert_eq!(limit(&["--max-callback-writes", "50000"]), Ok(50_000));
        let etcd = ["--store", "etcd://127.0.0.1:2379"];
        assert_eq!(limit(&etcd), Ok(126), "etcd's 128 operations less 2");
        let raised = [&etcd[..], &["--etcd-max-txn-ops", "10000"]].concat();
        assert_eq!(limit(&raised), Ok(1000));
        let lower = [&etcd[..], &["--max-callback-writes", "50"]].concat();
        assert_eq!(limit(&lower), Ok(50));
        let over = [&etcd[..], &["--max-callback-writes", "127"]].concat();
        let error = limit(&over).expect_err("over etcd's bound");
        assert!(
            error.contains("--max-callback-writes 127") && error.contains("at most 126"),
            "{error}"
        );
        let error = limit(&["--max-callback-writes", "0"]).expect_err("zero");
        assert!(error.contains("not a number of writes above 0"), "{error}");
    }

    /// Why `serve ARGS` refuses its etcd flags, with `password` in the environment.
    fn etcd_flags(args: &[&str], password: Option<&str>) -> Result<(), String> {
        let cli = Cli::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        check_etcd_flags(&cli.serve, password).map_err(|e| e.to_string())
    }

    #[test]
    fn etcd_flags_need_etcd_a_certificate_its_key_and_a_user_its_password() {
        let etcd = ["--store", "etcd://127.0.0.1:2379"];
        let tls = [&etcd[..], &["--etcd-ca", "ca.pem"]].concat();
        assert_eq!(etcd_flags(&tls, None), Ok(()));
        let both = [&tls[..], &["--etcd-cert", "c.pem", "--etcd-key", "k.pem"]].concat();
        assert_eq!(etcd_flags(&both, None), Ok(()));
        let cases: [(&[&str], &str); 6] = [
            (
                &["--etcd-ca", "ca.pem"],
                "--etcd-ca is for an etcd store: the store is the embedded one (add --store etcd://host:port)",
            ),
            (
                &["--etcd-user", "root"],
                "--etcd-user is for an etcd store: the store is the embedded one (add --store etcd://host:port)",
            ),
            (
                &[&tls[..], &["--etcd-cert", "c.pem"]].concat(),
                "--etcd-cert needs --etcd-key (its private key)",
            ),
            (
                &[&tls[..], &["--etcd-key", "k.pem"]].concat(),
                "--etcd-key needs --etcd-cert (its certificate)",
            ),
            (
                &[&etcd[..], &["--etcd-cert", "c.pem", "--etcd-key", "k.pem"]].concat(),
                "--etcd-cert needs --etcd-ca (the CA of etcd's server certificate: TLS)",
            ),
            (
                &[&etcd[..], &["--etcd-user", "root"]].concat(),
                "--etcd-user root needs its password in the environment variable REACTOR_ETCD_PASSWORD",
            ),
        ];
        for (args, expected) in cases {
            assert_eq!(etcd_flags(args, None), Err(expected.to_owned()), "{args:?}");
        }
        let user = [&etcd[..], &["--etcd-user", "root"]].concat();
        assert_eq!(etcd_flags(&user, Some("pw")), Ok(()));
    }
}
