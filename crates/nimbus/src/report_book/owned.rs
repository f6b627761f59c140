//! One owner's reports from every agent, held compactly: each item key once per owner, each
//! report in a slot of 24 bytes (a message, which few reports carry, beside it).

use crate::reports::{AgentReport, ReportState, SheetEntry};
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

/// The reports on one owner's items, by agent.
#[derive(Default)]
pub(super) struct Owned {
    /// The component that published the owner's items.
    pub component: String,
    /// Each item key some agent reported on, to its slot.
    slots: BTreeMap<Arc<str>, u32>,
    /// Each slot's key and how many agents hold a report in it; a slot none holds is free.
    keys: Vec<(Arc<str>, u32)>,
    free: Vec<u32>,
    agents: BTreeMap<String, Reports>,
}

/// What one report says, without its key, agent or message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub state: ReportState,
    /// The version of the item's value the report is about.
    pub revision: u64,
}

/// One agent's reports on the owner's items.
#[derive(Default)]
struct Reports {
    /// By slot, sorted.
    marks: Vec<(u32, Mark)>,
    /// The messages of the reports that carry one, by slot.
    messages: HashMap<u32, Box<str>>,
}

impl Reports {
    fn get(&self, slot: u32) -> Option<Mark> {
        let at = self.marks.binary_search_by_key(&slot, |(s, _)| *s).ok()?;
        Some(self.marks[at].1)
    }

    fn message(&self, slot: u32) -> Option<&str> {
        self.messages.get(&slot).map(|m| &**m)
    }

    fn entry(&self, slot: u32) -> Option<SheetEntry> {
        Some(self.entry_of(slot, self.get(slot)?))
    }

    /// The entry of the report `mark` held in `slot` (no search for the mark).
    fn entry_of(&self, slot: u32, mark: Mark) -> SheetEntry {
        SheetEntry {
            state: mark.state,
            message: self.message(slot).map(str::to_owned),
            revision: mark.revision,
        }
    }
}

impl Owned {
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }

    /// Sets `agent`'s reports to `items`; answers the reports that changed, an entry gone
    /// from `items` as `removed` (the item left that agent).
    pub fn replace(
        &mut self,
        agent: &str,
        items: &BTreeMap<String, SheetEntry>,
    ) -> Vec<AgentReport> {
        let old = self.agents.remove(agent).unwrap_or_default();
        let mut new = Reports::default();
        let mut changed = Vec::new();
        for (key, entry) in items {
            let slot = self.slot(key);
            let mark = Mark {
                state: entry.state,
                revision: entry.revision,
            };
            new.marks.push((slot, mark));
            if let Some(message) = &entry.message {
                new.messages.insert(slot, message.as_str().into());
            }
            let same = old.get(slot) == Some(mark) && old.message(slot) == entry.message.as_deref();
            if !same {
                changed.push(entry.report(key, agent));
            }
        }
        new.marks.sort_unstable_by_key(|(slot, _)| *slot);
        for &(slot, _) in &new.marks {
            self.keys[slot as usize].1 += 1;
        }
        for &(slot, mark) in &old.marks {
            if new.get(slot).is_none() {
                changed.push(AgentReport {
                    key: self.keys[slot as usize].0.to_string(),
                    agent: agent.to_owned(),
                    state: ReportState::Removed,
                    message: None,
                    revision: mark.revision,
                });
            }
        }
        self.release(&old);
        new.marks.shrink_to_fit();
        self.agents.insert(agent.to_owned(), new);
        changed
    }

    /// Forgets `agent`'s reports.
    pub fn remove(&mut self, agent: &str) {
        if let Some(old) = self.agents.remove(agent) {
            self.release(&old);
        }
    }

    /// `agent`'s reports as the entries of its sheet.
    pub fn sheet(&self, agent: &str) -> Option<BTreeMap<String, SheetEntry>> {
        let reports = self.agents.get(agent)?;
        let entries = (reports.marks.iter()).map(|&(slot, mark)| {
            let key = self.keys[slot as usize].0.to_string();
            (key, reports.entry_of(slot, mark))
        });
        Some(entries.collect())
    }

    /// Whether `agent` holds a report on the item `key`.
    pub fn holds(&self, agent: &str, key: &str) -> bool {
        let Some(&slot) = self.slots.get(key) else {
            return false;
        };
        (self.agents.get(agent)).is_some_and(|reports| reports.get(slot).is_some())
    }

    /// The agents with a sheet on this owner.
    pub fn agents(&self) -> impl Iterator<Item = &str> {
        self.agents.keys().map(String::as_str)
    }

    /// The reports on items whose key starts with `prefix`: every agent's, or only
    /// `agent`'s; by agent, then key.
    pub fn reports_under(&self, agent: Option<&str>, prefix: &str) -> Vec<AgentReport> {
        let under: Vec<(&str, u32)> = self
            .slots
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(|(key, _)| key.starts_with(prefix))
            .map(|(key, slot)| (&**key, *slot))
            .collect();
        let mut reports = Vec::new();
        for (name, held) in self.agents_named(agent) {
            for &(key, slot) in &under {
                if let Some(entry) = held.entry(slot) {
                    reports.push(entry.report(key, name));
                }
            }
        }
        reports
    }

    /// Every report held, by agent.
    pub fn reports(&self) -> impl Iterator<Item = AgentReport> + '_ {
        self.agents.iter().flat_map(move |(agent, held)| {
            held.marks.iter().map(move |&(slot, mark)| {
                let entry = held.entry_of(slot, mark);
                entry.report(&self.keys[slot as usize].0, agent)
            })
        })
    }

    /// Calls `f` with every report held (agent, item key, what it says), copying none.
    pub fn for_each(&self, f: &mut impl FnMut(&str, &str, Mark)) {
        for (agent, held) in &self.agents {
            for &(slot, mark) in &held.marks {
                f(agent, &self.keys[slot as usize].0, mark);
            }
        }
    }

    fn agents_named<'a>(
        &'a self,
        agent: Option<&'a str>,
    ) -> Box<dyn Iterator<Item = (&'a str, &'a Reports)> + 'a> {
        match agent {
            Some(agent) => Box::new(
                self.agents
                    .get_key_value(agent)
                    .map(|(a, r)| (&**a, r))
                    .into_iter(),
            ),
            None => Box::new(self.agents.iter().map(|(a, r)| (&**a, r))),
        }
    }

    /// The slot of `key`, taken from the free ones if it has none.
    fn slot(&mut self, key: &str) -> u32 {
        if let Some(&slot) = self.slots.get(key) {
            return slot;
        }
        let key: Arc<str> = key.into();
        let slot = match self.free.pop() {
            Some(slot) => {
                self.keys[slot as usize] = (key.clone(), 0);
                slot
            }
            None => {
                self.keys.push((key.clone(), 0));
                // An owner's items are far fewer than 2^32 (each is a stored object).
                (self.keys.len() - 1) as u32
            }
        };
        self.slots.insert(key, slot);
        slot
    }

    /// Lets go of the slots `old` held; a slot no agent holds any more is freed.
    fn release(&mut self, old: &Reports) {
        for &(slot, _) in &old.marks {
            let (key, holders) = &mut self.keys[slot as usize];
            *holders -= 1;
            if *holders == 0 {
                self.slots.remove(&**key);
                self.free.push(slot);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(state: ReportState, revision: u64, message: Option<&str>) -> SheetEntry {
        SheetEntry {
            state,
            message: message.map(str::to_owned),
            revision,
        }
    }

    fn sheet(entries: &[(&str, SheetEntry)]) -> BTreeMap<String, SheetEntry> {
        (entries.iter())
            .map(|(key, entry)| ((*key).to_owned(), entry.clone()))
            .collect()
    }

    fn said(changed: &[AgentReport]) -> Vec<(&str, &str, ReportState, u64)> {
        let mut said: Vec<_> = (changed.iter())
            .map(|r| (r.key.as_str(), r.agent.as_str(), r.state, r.revision))
            .collect();
        said.sort_unstable_by_key(|&(key, agent, _, _)| (key, agent));
        said
    }

    #[test]
    fn a_replaced_sheet_answers_what_changed_and_what_left_the_agent() {
        let mut owned = Owned::default();
        let first = sheet(&[
            ("a", entry(ReportState::Applied, 1, None)),
            ("b", entry(ReportState::Pending, 1, None)),
        ]);
        let changed = owned.replace("edge-1", &first);
        assert_eq!(
            said(&changed),
            [
                ("a", "edge-1", ReportState::Applied, 1),
                ("b", "edge-1", ReportState::Pending, 1)
            ]
        );
        // The same sheet again changes nothing.
        assert!(owned.replace("edge-1", &first).is_empty());
        // b applied, a gone, c new: a is answered as removed at its last revision.
        let second = sheet(&[
            ("b", entry(ReportState::Applied, 1, None)),
            ("c", entry(ReportState::Failed, 2, Some("no route"))),
        ]);
        let changed = owned.replace("edge-1", &second);
        assert_eq!(
            said(&changed),
            [
                ("a", "edge-1", ReportState::Removed, 1),
                ("b", "edge-1", ReportState::Applied, 1),
                ("c", "edge-1", ReportState::Failed, 2)
            ]
        );
        assert_eq!(owned.sheet("edge-1"), Some(second));
        // Only the message changed: that is a change.
        let third = sheet(&[
            ("b", entry(ReportState::Applied, 1, None)),
            ("c", entry(ReportState::Failed, 2, Some("no link"))),
        ]);
        let changed = owned.replace("edge-1", &third);
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].message.as_deref(), Some("no link"));
    }

    #[test]
    fn agents_share_an_item_until_the_last_lets_go_and_its_slot_is_taken_again() {
        let mut owned = Owned::default();
        let both = sheet(&[("a", entry(ReportState::Applied, 1, None))]);
        owned.replace("edge-1", &both);
        owned.replace("edge-2", &both);
        assert_eq!(owned.slots.len(), 1, "one slot for a key two agents hold");
        owned.remove("edge-1");
        assert_eq!(owned.sheet("edge-2"), Some(both.clone()));
        assert_eq!(owned.sheet("edge-1"), None);
        owned.replace("edge-2", &BTreeMap::new());
        assert!(owned.slots.is_empty(), "a key nobody holds keeps no slot");
        // A new key takes the freed slot and reads back as itself.
        let other = sheet(&[("z", entry(ReportState::Pending, 3, None))]);
        owned.replace("edge-1", &other);
        assert_eq!(owned.keys.len(), 1);
        assert_eq!(owned.sheet("edge-1"), Some(other));
        assert_eq!(owned.sheet("edge-2"), Some(BTreeMap::new()));
    }

    #[test]
    fn reports_under_a_prefix_are_by_agent_then_key() {
        let mut owned = Owned::default();
        // Inserted out of key order, so slots are not in key order.
        owned.replace(
            "edge-2",
            &sheet(&[
                ("r/2", entry(ReportState::Applied, 1, None)),
                ("s/1", entry(ReportState::Applied, 1, None)),
            ]),
        );
        owned.replace(
            "edge-1",
            &sheet(&[
                ("r/1", entry(ReportState::Failed, 1, Some("x"))),
                ("r/2", entry(ReportState::Applied, 1, None)),
            ]),
        );
        let keys = |reports: Vec<AgentReport>| -> Vec<(String, String)> {
            reports.into_iter().map(|r| (r.agent, r.key)).collect()
        };
        let pair = |a: &str, k: &str| (a.to_owned(), k.to_owned());
        assert_eq!(
            keys(owned.reports_under(None, "r/")),
            [
                pair("edge-1", "r/1"),
                pair("edge-1", "r/2"),
                pair("edge-2", "r/2")
            ]
        );
        assert_eq!(
            keys(owned.reports_under(Some("edge-2"), "")),
            [pair("edge-2", "r/2"), pair("edge-2", "s/1")]
        );
        assert!(owned.reports_under(Some("edge-3"), "").is_empty());
        let failed = owned.reports_under(Some("edge-1"), "r/1");
        assert_eq!(failed[0].message.as_deref(), Some("x"));
        let mut seen = 0;
        owned.for_each(&mut |_, _, _| seen += 1);
        assert_eq!(seen, 4);
        assert_eq!(owned.reports().count(), 4);
    }
}
