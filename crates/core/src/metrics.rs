//! The catalog of the server's metrics: every family's name (all under `reactor_`), type and
//! help text, in one place; emitters name a family by its constant here.

/// What a family counts or measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Counter,
    Gauge,
    Histogram,
}

/// One metric family as `/metrics` shows it.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub name: &'static str,
    pub kind: Type,
    pub help: &'static str,
}

macro_rules! catalog {
    ($(#[$doc:meta])* $list:ident: $($constant:ident = $name:literal, $kind:ident, $help:literal;)*) => {
        $(
            #[doc = $help]
            pub const $constant: &str = $name;
        )*
        $(#[$doc])*
        pub const $list: &[Family] = &[$(Family { name: $name, kind: Type::$kind, help: $help }),*];
    };
}

catalog! {
    /// The families the recorder keeps, as the code records them.
    FAMILIES:
    HTTP_REQUESTS = "reactor_http_requests_total", Counter,
        "HTTP requests answered, by method, route and status.";
    RECONCILE = "reactor_reconcile_total", Counter,
        "Reconciles run, by component and result (success, requeue, error, permanent); those with callback on-agent-status are agents' report rounds.";
    RECONCILE_ERRORS = "reactor_reconcile_errors_total", Counter,
        "Reconciles that failed or failed for good, by component (and callback, for on-agent-status).";
    RECONCILE_TIME = "reactor_reconcile_time_seconds", Histogram,
        "Time a reconcile's callback took, by component (and callback, for on-agent-status).";
    RECONCILE_COMMIT_CONFLICTS = "reactor_reconcile_commit_conflicts_total", Counter,
        "Reconcile commits that lost a race and were retried, by component (and callback, for on-agent-status).";
    RECONCILE_COMMIT_WRITES = "reactor_reconcile_commit_writes", Histogram,
        "Writes in one callback's commit, by component (and callback, for on-agent-status).";
    COLLECTED = "reactor_collected_total", Counter,
        "Objects deleted because their owner was gone, by component.";
    WORKQUEUE_DEPTH = "reactor_workqueue_depth", Gauge,
        "Keys ready in a work queue, by queue.";
    WORKQUEUE_SLOW_DEPTH = "reactor_workqueue_slow_depth", Gauge,
        "Keys of a work queue held back as slow, by queue.";
    WORKQUEUE_QUEUE_DURATION = "reactor_workqueue_queue_duration_seconds", Histogram,
        "How long a key waited in a work queue before a worker took it, by queue (controller-runtime's workqueue_queue_duration_seconds).";
    WORKQUEUE_RETRIES = "reactor_workqueue_retries_total", Counter,
        "Keys put back into a work queue after a backoff, by queue.";
    REFLECTOR_RELISTS = "reactor_reflector_relists_total", Counter,
        "Times a reflector listed its kind again, by kind.";
    COMPONENT_LOADS = "reactor_component_loads_total", Counter,
        "Component versions loaded, by component.";
    COMPONENT_LOAD_FAILURES = "reactor_component_load_failures_total", Counter,
        "Component loads that failed, by component.";
    COMPONENT_COMPILES = "reactor_component_compiles_total", Counter,
        "Components compiled to native code, by component.";
    COMPONENT_CACHE_HITS = "reactor_component_cache_hits_total", Counter,
        "Components loaded from the compile cache, by component.";
    COMPONENT_TRAPS = "reactor_component_traps_total", Counter,
        "Guest calls that trapped, ran past their deadline or hit the memory cap, by component.";
    COMPONENT_CALLS = "reactor_component_calls_total", Counter,
        "Calls into a component, by component and version.";
    COMPONENT_HOST_CALLS = "reactor_component_host_calls_total", Counter,
        "Calls a component made to the store and nimbus imports, by component and version.";
    COMPONENT_CPU = "reactor_component_cpu_seconds", Gauge,
        "Total time a component's calls ran on the host's threads since the version loaded (waits not counted), by component and version.";
    COMPONENT_MEMORY_PEAK = "reactor_component_memory_peak_bytes", Gauge,
        "The largest linear memory an instance of a component grew to, by component and version.";
    COMPONENT_WRITTEN = "reactor_component_written_bytes_total", Counter,
        "Bytes a component wrote (objects applied, statuses set, items published), by component and version.";
    COMPONENT_DENIED_CALLS = "reactor_component_denied_calls_total", Counter,
        "Host-import calls refused because the component's declared permissions do not allow them, by component and import.";
    GUEST_LOG_DROPPED = "reactor_guest_log_dropped_total", Counter,
        "Guest log lines dropped over the rate limit, by component.";
    STORE_REVISION = "reactor_store_revision", Gauge,
        "The store's newest revision.";
    STORE_COMMITS = "reactor_store_commits_total", Counter,
        "Commits of the embedded store.";
    STORE_COMMIT_FAILURES = "reactor_store_commit_failures_total", Counter,
        "Commits of the embedded store that failed.";
    STORE_COMMIT_BATCH_SIZE = "reactor_store_commit_batch_size", Histogram,
        "Writes grouped into one commit of the embedded store.";
    STORE_DAMAGE_FOUND = "reactor_store_damage_found_total", Counter,
        "Problems the embedded store's checks found.";
    STORE_DAMAGED = "reactor_store_damaged", Gauge,
        "1 once the embedded store found damage, else 0.";
    STORE_SCRUB_PASSES = "reactor_store_scrub_passes_total", Counter,
        "Passes of the embedded store's background scrub.";
    STORE_ETCD_WATCH_RESUMES = "reactor_store_etcd_watch_resumes_total", Counter,
        "etcd watches resumed after they broke.";
    STORE_ETCD_WRITE_RETRIES = "reactor_store_etcd_write_retries_total", Counter,
        "etcd transactions retried after a concurrent write.";
    REPLICA_LEASES_LOST = "reactor_replica_leases_lost_total", Counter,
        "Times this replica lost its etcd lease (and its shards).";
    REPLICA_SHARDS_OWNED = "reactor_replica_shards_owned", Gauge,
        "Shards this replica owns.";
}

catalog! {
    /// The families read from the server's state at each scrape, never kept: a component or
    /// an agent that is gone leaves no series behind.
    SCRAPED:
    BUILD_INFO = "reactor_build_info", Gauge,
        "1, with the server's version.";
    COMPONENT_STATE = "reactor_component_state", Gauge,
        "1 for each component, with its state (ready, failed, loading, ignored).";
    COMPONENT_ROLLED_BACK = "reactor_component_rolled_back", Gauge,
        "1 for a component whose newest version was rolled back, else 0.";
    COMPONENT_COMPILING = "reactor_component_compiling", Gauge,
        "1 for a component whose new version is being compiled (the serving one serves meanwhile), else 0.";
    COMPONENT_WAITING_APPROVAL = "reactor_component_waiting_approval", Gauge,
        "1 for a component whose new version waits for an admin's approval of its wider permissions, else 0.";
    ROLLOUT_PHASE = "reactor_component_rollout_phase", Gauge,
        "1 for each component's last rollout, with the version rolled out and its phase (canary, rolling, done, rolled-back).";
    ROLLOUT_OBJECTS = "reactor_component_rollout_objects", Gauge,
        "Objects of a component's last rollout, by state (rolled: reconciled by the new version so far; total: to reconcile).";
    SHADOW_OBJECTS = "reactor_component_shadow_objects", Gauge,
        "Objects a component's shadow version was compared on, by state (matched, differed, needed: to match before it is promoted).";
    AGENTS = "reactor_agents", Gauge,
        "Agents registered, by state (connected, disconnected).";
    AGENT_ITEMS = "reactor_agent_items", Gauge,
        "Items meant for an agent, by agent and state (applied, pending, failed).";
}

/// The buckets of the time histograms (seconds): controller-runtime's for reconcile time.
pub const TIME_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// The buckets of the size histograms (writes in a commit).
pub const SIZE_BUCKETS: &[f64] = &[
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 4096.0,
];

/// Tells the recorder installed every family's help text.
pub fn describe() {
    for family in FAMILIES {
        match family.kind {
            Type::Counter => metrics::describe_counter!(family.name, family.help),
            Type::Gauge => metrics::describe_gauge!(family.name, family.help),
            Type::Histogram => metrics::describe_histogram!(family.name, family.help),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_prefixed_unique_and_typed_by_its_suffix() {
        let all: Vec<&Family> = FAMILIES.iter().chain(SCRAPED).collect();
        let mut names: Vec<&str> = all.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len(), "a name twice");
        for family in all {
            assert!(family.name.starts_with("reactor_"), "{}", family.name);
            assert_eq!(
                family.name.ends_with("_total"),
                family.kind == Type::Counter,
                "{}: counters, and only they, end in _total",
                family.name
            );
            assert!(family.help.ends_with('.'), "{}", family.name);
        }
    }
}
