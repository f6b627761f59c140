//! TLS's cost: the same runs against `serve` on HTTPS (its default) and on plain HTTP
//! (`--insecure-http`), in one run — Policies applied through the API until reconciled, and
//! Nimbus items to feed clients — and agents joining with their own credentials against the
//! same agents presenting one shared token.

use crate::fan_out::feeds_fan_out;
use crate::native_policy::policies;
use crate::publish::policy_server_on;
use crate::report::{Scenario, Target};
use crate::scenarios::Rows;
use crate::server::Transport;
use reactor_host::api::Client;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Policies per apply request.
const BATCH: usize = 100;
const DEADLINE: Duration = Duration::from_secs(600);
/// Nimbus items every joining agent receives in its first snapshot.
const SNAPSHOT_ITEMS: usize = 100;
/// Each transport's run is repeated, alternating, and its median kept: a 2-core machine's
/// noise is larger than the difference measured.
const ROUNDS: usize = 3;

/// The median of each transport's [`ROUNDS`] runs of `run`, alternating (plain first).
async fn alternating<F, Fut>(mut run: F) -> anyhow::Result<(Duration, Duration)>
where
    F: FnMut(Transport) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Duration>>,
{
    let (mut plain, mut tls) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        plain.push(run(Transport::Plain).await?);
        tls.push(run(Transport::Tls).await?);
    }
    plain.sort();
    tls.sort();
    Ok((plain[ROUNDS / 2], tls[ROUNDS / 2]))
}

/// Applies `count` Policies through the API of a fresh `serve` on `transport`, in batches of
/// [`BATCH`], and follows a watch of the kind until policy-rust reconciled each one.
async fn apply_to_status(
    transport: Transport,
    policy: &Path,
    count: usize,
) -> anyhow::Result<Duration> {
    let dir = tempfile::tempdir()?;
    let (_server, client) = policy_server_on(transport, dir.path(), policy).await?;
    let from = client.list("Policy", None).await?.revision;
    let mut events = Box::pin(client.watch(Some("Policy"), from).await?);
    let started = Instant::now();
    for batch in policies(count).chunks(BATCH) {
        client.apply(batch.to_vec()).await?;
    }
    crate::replicas::reconciled(&mut events, count, started).await
}

/// `agents` agents connect at once to a TLS server and each takes its snapshot of
/// [`SNAPSHOT_ITEMS`] items: each with a join token (`agent --join`'s path: the CA fetched
/// and checked against the pin, the token exchanged for the agent's own credential, kept in
/// its data folder), then registering and reading with that credential; or, the baseline,
/// each presenting the admin's token. Every agent has its own client, so its own TLS
/// connection. Answers (joined, shared token).
async fn agents_connect(policy: &Path, agents: usize) -> anyhow::Result<(Duration, Duration)> {
    let dir = tempfile::tempdir()?;
    let (server, admin) = policy_server_on(Transport::Tls, dir.path(), policy).await?;
    admin
        .apply(crate::publish::policies(SNAPSHOT_ITEMS, |_| {
            "fan".to_owned()
        }))
        .await?;
    let labels = BTreeMap::from([("role".to_owned(), "fan".to_owned())]);
    // Wait until the items are published: a first agent's snapshot holds them all.
    let probe = "probe";
    admin.register_agent(probe, labels.clone()).await?;
    let started = Instant::now();
    while admin.agent_items(probe).await?.items.len() < SNAPSHOT_ITEMS {
        anyhow::ensure!(started.elapsed() < DEADLINE, "items not published");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut tokens = Vec::with_capacity(agents);
    for i in 0..agents {
        let id = format!("joiner-{i}");
        let made = admin
            .create_join_token(&id, labels.clone(), None, Vec::new())
            .await?;
        tokens.push((id, made.token));
    }

    let started = Instant::now();
    let joins = tokens.into_iter().map(|(id, token)| {
        let data = dir.path().join(&id);
        let base = server.base().to_owned();
        async move {
            let credential = reactor_host::agent::join::join(&data, &base, &id, &token).await?;
            let own = Client::with_ca(&base, Some(credential.token), credential.ca_pem.as_deref())?;
            snapshot(&own, &id, credential.labels).await
        }
    });
    futures::future::try_join_all(joins).await?;
    let joined = started.elapsed();

    let started = Instant::now();
    let shared = (0..agents).map(|i| {
        let id = format!("shared-{i}");
        let labels = labels.clone();
        let client = server.client();
        async move { snapshot(&client?, &id, labels).await }
    });
    futures::future::try_join_all(shared).await?;
    Ok((joined, started.elapsed()))
}

/// What an agent does as it connects: registers, then reads its items.
async fn snapshot(
    client: &Client,
    id: &str,
    labels: BTreeMap<String, String>,
) -> anyhow::Result<()> {
    client.register_agent(id, labels).await?;
    let items = client.agent_items(id).await?.items.len();
    anyhow::ensure!(
        items == SNAPSHOT_ITEMS,
        "{id} got {items} of {SNAPSHOT_ITEMS} items"
    );
    Ok(())
}

/// The rows: each TLS run against the same on plain HTTP, and the joins.
pub async fn rows(
    components: &Path,
    objects: usize,
    items: usize,
    clients: usize,
    joining: usize,
) -> anyhow::Result<Rows> {
    let policy = components.join("policy-rust.wasm");
    let (plain, tls) = alternating(|t| apply_to_status(t, &policy, objects)).await?;
    eprintln!("  apply → status: plain {plain:?}, TLS {tls:?}");
    let per_s = |took: Duration| objects as f64 / took.as_secs_f64();
    let (feeds_plain, feeds_tls) = alternating(|t| {
        let policy = policy.clone();
        async move { Ok(feeds_fan_out(t, &policy, items, clients).await?.0) }
    })
    .await?;
    eprintln!("  feeds: plain {feeds_plain:?}, TLS {feeds_tls:?}");
    let (joined, shared) = agents_connect(&policy, joining).await?;
    eprintln!("  {joining} agents: joined {joined:?}, shared token {shared:?}");
    let same = format!(
        "one release `reactor-host serve` (embedded store, policy-rust) per run, fresh each time, the median of {ROUNDS} runs of each transport, alternating; the same run on HTTPS (the default: the CA and certificate `serve` makes, rustls with ring, TLS 1.3) and on plain HTTP (`--insecure-http`); the bench's clients are reqwest with rustls"
    );
    Ok((
        vec![
            Scenario::measured(
                "tls",
                &format!(
                    "{objects} Policies through the API, apply → status: objects/s on TLS against plain HTTP"
                ),
                per_s(tls),
                ("plain HTTP, same run", Some(per_s(plain))),
                (Target::RatioAtLeast(0.9), "costs ≤ 10 %"),
                &format!(
                    "applied in batches of {BATCH} by one client; done when a watch of the kind (same transport) has seen every Policy's status say policy-rust reconciled generation 1. TLS {:.2} s, plain {:.2} s. {same}",
                    tls.as_secs_f64(),
                    plain.as_secs_f64()
                ),
            ),
            Scenario::measured(
                "tls",
                &format!(
                    "{items} items × {clients} feed clients: s to converge on TLS against plain HTTP"
                ),
                feeds_tls.as_secs_f64(),
                ("plain HTTP, same run", Some(feeds_plain.as_secs_f64())),
                (Target::RatioAtMost(1.1), "costs ≤ 10 %"),
                &format!(
                    "the fan-out scenario's feed-clients run (first write → every client of `/v1/nimbus/watch`, each on its own connection, saw every item) on each transport. {same}"
                ),
            ),
            Scenario::measured(
                "tls",
                &format!(
                    "{joining} agents connect and take their snapshot: s, each joining with its own token, against each presenting one shared token"
                ),
                joined.as_secs_f64(),
                (
                    "the shared admin token, same run",
                    Some(shared.as_secs_f64()),
                ),
                (Target::None, "reported"),
                &format!(
                    "all at once, each its own client and TLS connection: fetch the CA and check it against the join token's pin, exchange the token for the agent's credential (one store transaction: the token goes, the credential comes; a certificate for its API issued), keep both in its data folder (0600, synced), then register and read its {SNAPSHOT_ITEMS} items as itself; the baseline registers and reads the same with the admin's token. {same}"
                ),
            ),
        ],
        Vec::new(),
    ))
}
