//! The latest report of every agent on every item, held in memory once per server: followed
//! from the `NimbusReport` sheets (so reports recorded by any replica, or before a restart,
//! arrive) and handed over by this server's reporter as soon as they are durable, without
//! waiting for the store to send them back. Each change of a report is offered once to the
//! sink (the engine, which hands it to the publishing reactor's `on-agent-status`).

use super::kinds::REPORT_KIND;
use super::reports::{AgentReport, Sheet};
use parking_lot::Mutex;
use reactor_core::object::{Object, ObjectKey, Revision};
use reactor_store::{EventType, Listing, Store, WatchEvent};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Weak};
use tokio::sync::watch;

mod owned;

pub use owned::Mark;
use owned::Owned;

/// Where changed reports go: the component that published the item, and the item's owner.
pub trait ReportSink: Send + Sync + 'static {
    fn offer_report(&self, component: &str, owner: ObjectKey, report: AgentReport);
}

/// The server's reports. Cheap to clone; it stops following the store when the last clone
/// is dropped.
#[derive(Clone)]
pub struct ReportBook {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ReportBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReportBook").finish_non_exhaustive()
    }
}

struct Shared {
    book: Mutex<Book>,
    sink: Mutex<Option<Weak<dyn ReportSink>>>,
    /// Whether the first listing is in.
    listed: watch::Sender<bool>,
}

#[derive(Default)]
struct Book {
    /// Each sheet by its store name: the revision it was last written at, and whose it is.
    sheets: HashMap<String, Held>,
    /// The reports by owner, then agent, then item.
    owners: HashMap<ObjectKey, Owned>,
    /// The revision the store's watch has reached: a sheet handed over directly at or
    /// below it is old news (the watch delivered it, or something later).
    watched: Revision,
}

struct Held {
    revision: Revision,
    owner: ObjectKey,
    agent: String,
}

/// A report to offer: the publishing component, the item's owner and the report.
type Offer = (String, ObjectKey, AgentReport);

impl ReportBook {
    /// Starts following the sheets of `store` (needs a tokio runtime).
    pub fn start(store: Arc<dyn Store>) -> Self {
        let (listed, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            book: Mutex::new(Book::default()),
            sink: Mutex::new(None),
            listed,
        });
        tokio::spawn(reactor_store::follow(
            Arc::downgrade(&shared),
            store,
            REPORT_KIND,
            "agents' reports",
        ));
        ReportBook { shared }
    }

    /// From now on every changed report goes to `sink`; every report held now goes there
    /// at once (a report recorded just before a restart still reaches its reactor).
    pub fn set_sink(&self, sink: Weak<dyn ReportSink>) {
        let offers: Vec<Offer> = {
            let book = self.shared.book.lock();
            let mut offers = Vec::new();
            for (owner, owned) in &book.owners {
                offers.extend(owned.reports().map(|r| offer(owned, owner, r)));
            }
            offers
        };
        *self.shared.sink.lock() = Some(sink);
        self.shared.offer(offers);
    }

    /// Waits for the first listing of the sheets.
    pub async fn synced(&self) {
        let mut listed = self.shared.listed.subscribe();
        let _ = listed.wait_for(|listed| *listed).await;
    }

    /// A sheet this server just wrote (`revision` is the store's): its changes are offered
    /// now rather than when the watch brings it back.
    pub fn absorb(&self, name: &str, revision: Revision, sheet: Sheet) {
        let offers = {
            let mut book = self.shared.book.lock();
            if revision <= book.watched {
                return;
            }
            book.put(name, revision, sheet)
        };
        self.shared.offer(offers);
    }

    /// Every agent's sheet on `owner`, by agent.
    pub fn sheets_of(&self, owner: &ObjectKey) -> BTreeMap<String, Sheet> {
        let book = self.shared.book.lock();
        let Some(owned) = book.owners.get(owner) else {
            return BTreeMap::new();
        };
        owned
            .agents()
            .map(|agent| {
                let sheet = Sheet {
                    owner_kind: owner.kind().to_owned(),
                    owner_name: owner.name().to_owned(),
                    component: owned.component.clone(),
                    agent: agent.to_owned(),
                    items: owned.sheet(agent).unwrap_or_default(),
                };
                (agent.to_owned(), sheet)
            })
            .collect()
    }

    /// Every report on the items of `owner`, with the component that published them.
    pub fn reports_of(&self, owner: &ObjectKey) -> Option<(String, Vec<AgentReport>)> {
        let book = self.shared.book.lock();
        let owned = book.owners.get(owner)?;
        Some((owned.component.clone(), owned.reports().collect()))
    }

    /// The reports on `owner`'s items whose key starts with `prefix`: every agent's, or
    /// only `agent`'s (at the cost of that agent's reports alone).
    pub fn reports_under(
        &self,
        owner: &ObjectKey,
        agent: Option<&str>,
        prefix: &str,
    ) -> Vec<AgentReport> {
        let book = self.shared.book.lock();
        (book.owners.get(owner)).map_or_else(Vec::new, |owned| owned.reports_under(agent, prefix))
    }

    /// Whether some owner's sheet of `agent` holds a report on the item `key`.
    pub fn holds(&self, agent: &str, key: &str) -> bool {
        let book = self.shared.book.lock();
        book.owners.values().any(|owned| owned.holds(agent, key))
    }

    /// Calls `f` with every report held (agent, item key, what it says), without copying
    /// any.
    pub fn for_each(&self, mut f: impl FnMut(&str, &str, Mark)) {
        let book = self.shared.book.lock();
        for owned in book.owners.values() {
            owned.for_each(&mut f);
        }
    }
}

impl Shared {
    fn offer(&self, offers: Vec<Offer>) {
        if offers.is_empty() {
            return;
        }
        let Some(sink) = self.sink.lock().as_ref().and_then(Weak::upgrade) else {
            return;
        };
        for (component, owner, report) in offers {
            sink.offer_report(&component, owner, report);
        }
    }
}

impl reactor_store::Follower for Shared {
    fn listed(&self, listing: Listing) {
        let offers = {
            let mut book = self.book.lock();
            book.watched = listing.revision;
            // Only what changed since the last listing (nothing, the first time); a sheet
            // the listing no longer has is forgotten.
            let mut listed = HashSet::new();
            let mut offers = Vec::new();
            for object in listing.items {
                if let Some((name, revision, sheet)) = decode(object) {
                    offers.extend(book.replace(&name, revision, sheet));
                    listed.insert(name);
                }
            }
            let gone: Vec<String> = (book.sheets.keys())
                .filter(|name| !listed.contains(*name))
                .cloned()
                .collect();
            for name in gone {
                book.remove(&name);
            }
            offers
        };
        self.listed.send_replace(true);
        self.offer(offers);
    }

    fn changed(&self, event: WatchEvent) {
        let offers = {
            let mut book = self.book.lock();
            book.watched = book.watched.max(event.revision);
            match (event.event_type, event.object) {
                (EventType::Deleted, Some(object)) => {
                    book.remove(&object.name);
                    Vec::new()
                }
                // What this server wrote comes back here too: old news, known without
                // copying or decoding the sheet.
                (EventType::Created | EventType::Updated, Some(object))
                    if book.holds(&object.name, object.meta.revision) =>
                {
                    Vec::new()
                }
                (EventType::Created | EventType::Updated, Some(object)) => {
                    match decode(std::sync::Arc::unwrap_or_clone(object)) {
                        Some((name, revision, sheet)) => book.put(&name, revision, sheet),
                        None => Vec::new(),
                    }
                }
                _ => Vec::new(),
            }
        };
        self.offer(offers);
    }
}

/// The sheet an object holds, with its store name and revision.
fn decode(object: Object) -> Option<(String, Revision, Sheet)> {
    let revision = object.meta.revision;
    let sheet = Sheet::from_value(object.spec)?;
    Some((object.name, revision, sheet))
}

impl Book {
    /// Whether the book holds sheet `name` at `revision` or a later one.
    fn holds(&self, name: &str, revision: Revision) -> bool {
        (self.sheets.get(name)).is_some_and(|held| held.revision >= revision)
    }

    /// Takes `sheet` written at `revision` unless the book holds it at that revision or a
    /// later one; answers the reports that changed.
    fn put(&mut self, name: &str, revision: Revision, sheet: Sheet) -> Vec<Offer> {
        if self.holds(name, revision) {
            return Vec::new();
        }
        self.replace(name, revision, sheet)
    }

    /// Sets `sheet`; answers the reports that changed, an entry gone from the sheet as
    /// `removed` (the item left that agent).
    fn replace(&mut self, name: &str, revision: Revision, sheet: Sheet) -> Vec<Offer> {
        let owner = ObjectKey::new(&sheet.owner_kind, &sheet.owner_name);
        let owned = self.owners.entry(owner.clone()).or_default();
        owned.component = sheet.component;
        let changed = owned.replace(&sheet.agent, &sheet.items);
        let offers = changed
            .into_iter()
            .map(|r| offer(owned, &owner, r))
            .collect();
        let held = Held {
            revision,
            owner,
            agent: sheet.agent,
        };
        self.sheets.insert(name.to_owned(), held);
        offers
    }

    /// Forgets a deleted sheet (its owner's items are gone: nobody is told).
    fn remove(&mut self, name: &str) {
        let Some(held) = self.sheets.remove(name) else {
            return;
        };
        if let Some(owned) = self.owners.get_mut(&held.owner) {
            owned.remove(&held.agent);
            if owned.is_empty() {
                self.owners.remove(&held.owner);
            }
        }
    }
}

/// `report` on one of `owner`'s items, offered to the component that published it.
fn offer(owned: &Owned, owner: &ObjectKey, report: AgentReport) -> Offer {
    (owned.component.clone(), owner.clone(), report)
}

#[cfg(test)]
mod tests;
