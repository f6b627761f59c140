//! The credentials the store keeps, followed into memory: a request is authenticated without
//! a store read, and a revoked credential's open streams end as the revocation arrives.

use reactor_core::listing::Listing;
use reactor_core::watch_event::{EventType, WatchEvent};
use reactor_store::Store;
use reactor_trust::{CREDENTIAL_KIND, CredentialSpec};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How long a request waits for the first listing of the credentials after a start.
const FIRST_LISTING: Duration = Duration::from_secs(10);

/// How long a request with a credential not known yet waits for the store's watch to bring
/// it: one made a moment ago (by this server or another replica) is usable at once, with no
/// store read per unknown token.
const NEWLY_MADE: Duration = Duration::from_secs(2);

struct Entry {
    spec: CredentialSpec,
    /// Told `true` when the credential is revoked or deleted.
    revoked: watch::Sender<bool>,
}

/// Every stored credential by id.
pub struct Credentials {
    entries: parking_lot::RwLock<HashMap<String, Entry>>,
    listed: watch::Sender<bool>,
    /// Bumped on every change the watch brings.
    changes: watch::Sender<u64>,
}

impl Credentials {
    /// Follows the store's credentials for as long as the answer lives.
    pub fn follow(store: Arc<dyn Store>) -> Arc<Credentials> {
        let credentials = Arc::new(Credentials {
            entries: Default::default(),
            listed: watch::Sender::new(false),
            changes: watch::Sender::new(0),
        });
        tokio::spawn(reactor_store::follow(
            Arc::downgrade(&credentials),
            store,
            CREDENTIAL_KIND,
            "the credentials",
        ));
        credentials
    }

    /// The credential `id` and a receiver told when it is revoked; waits for the first
    /// listing after a start, and up to 2 s more for an id not known yet (one made a moment
    /// ago, which the watch has not brought yet).
    pub async fn lookup(&self, id: &str) -> Option<(CredentialSpec, watch::Receiver<bool>)> {
        let mut listed = self.listed.subscribe();
        let _ = tokio::time::timeout(FIRST_LISTING, listed.wait_for(|l| *l)).await;
        let mut changes = self.changes.subscribe();
        let found = |changes: &mut watch::Receiver<u64>| {
            changes.borrow_and_update();
            let entries = self.entries.read();
            let entry = entries.get(id)?;
            Some((entry.spec.clone(), entry.revoked.subscribe()))
        };
        if let Some(found) = found(&mut changes) {
            return Some(found);
        }
        let deadline = tokio::time::Instant::now() + NEWLY_MADE;
        while tokio::time::timeout_at(deadline, changes.changed())
            .await
            .is_ok_and(|changed| changed.is_ok())
        {
            if let Some(found) = found(&mut changes) {
                return Some(found);
            }
        }
        None
    }

    /// Every credential (ids and what each is; the hashes are never shown).
    pub fn all(&self) -> Vec<(String, CredentialSpec)> {
        let entries = self.entries.read();
        let mut all: Vec<_> = entries
            .iter()
            .map(|(id, e)| (id.clone(), e.spec.clone()))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    fn put(entries: &mut HashMap<String, Entry>, id: String, spec: CredentialSpec) {
        let revoked = matches!(spec, CredentialSpec::Revoked { .. });
        match entries.get_mut(&id) {
            Some(entry) => {
                entry.spec = spec;
                if revoked {
                    entry.revoked.send_replace(true);
                }
            }
            None => {
                entries.insert(
                    id,
                    Entry {
                        spec,
                        revoked: watch::Sender::new(revoked),
                    },
                );
            }
        }
    }
}

fn parse(object: &reactor_core::object::Object) -> Option<CredentialSpec> {
    match serde_json::from_value(object.spec.clone()) {
        Ok(spec) => Some(spec),
        Err(e) => {
            tracing::warn!(credential = %object.name, "ignoring a credential the server cannot read: {e}");
            None
        }
    }
}

impl reactor_store::Follower for Credentials {
    fn listed(&self, listing: Listing) {
        let mut entries = self.entries.write();
        let mut seen = std::collections::HashSet::new();
        for object in &listing.items {
            if let Some(spec) = parse(object) {
                seen.insert(object.name.clone());
                Self::put(&mut entries, object.name.clone(), spec);
            }
        }
        entries.retain(|id, entry| {
            let keep = seen.contains(id);
            if !keep {
                entry.revoked.send_replace(true);
            }
            keep
        });
        drop(entries);
        self.listed.send_replace(true);
        self.changes.send_modify(|n| *n += 1);
    }

    fn changed(&self, event: WatchEvent) {
        let Some(object) = event.object else { return };
        let mut entries = self.entries.write();
        match event.event_type {
            EventType::Created | EventType::Updated => {
                if let Some(spec) = parse(&object) {
                    Self::put(&mut entries, object.name.clone(), spec);
                }
            }
            EventType::Deleted => {
                if let Some(entry) = entries.remove(&object.name) {
                    entry.revoked.send_replace(true);
                }
            }
            EventType::Bookmark => {}
        }
        drop(entries);
        self.changes.send_modify(|n| *n += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reactor_store::Follower;
    use reactor_trust::Role;

    fn made(id: &str) -> WatchEvent {
        let spec = CredentialSpec::User {
            user: "reader".into(),
            role: Role::View,
            hash: "h".into(),
        };
        let object: reactor_core::object::Object = serde_json::from_value(serde_json::json!({
            "kind": CREDENTIAL_KIND, "name": id, "spec": spec,
        }))
        .expect("an object");
        serde_json::from_value(
            serde_json::json!({"type": "created", "revision": 1, "object": object}),
        )
        .expect("an event")
    }

    #[tokio::test(start_paused = true)]
    async fn a_credential_made_a_moment_ago_is_found_and_an_unknown_one_refused_after_the_wait() {
        let credentials = Arc::new(Credentials {
            entries: Default::default(),
            listed: watch::Sender::new(true),
            changes: watch::Sender::new(0),
        });
        let started = tokio::time::Instant::now();
        assert!(credentials.lookup("unknown").await.is_none());
        assert_eq!(
            started.elapsed(),
            NEWLY_MADE,
            "refused after the wait, no longer"
        );

        let waiting = tokio::spawn({
            let credentials = credentials.clone();
            async move { credentials.lookup("new").await.map(|(spec, _)| spec) }
        });
        tokio::time::sleep(NEWLY_MADE / 4).await;
        credentials.changed(made("other"));
        tokio::time::sleep(NEWLY_MADE / 4).await;
        credentials.changed(made("new"));
        let found = waiting.await.expect("the lookup");
        assert!(
            matches!(found, Some(CredentialSpec::User { .. })),
            "{found:?}"
        );
    }
}
