//! Nimbus on the server: items that reactors publish for agents, kept durably in the store as
//! objects of the reserved kind `NimbusItem`, owned by the object whose callback published
//! them, so agents get the current set by list + watch and an owner's delete withdraws them.
//! Agents register as objects of kind `Agent` and report on items into the items' status.

mod agents;
mod feed;
mod items;
mod propagation;
mod reporter;
mod reports;

pub use agents::{AGENT_KIND, AgentView, heartbeat, labels_of, list as list_agents, register};
pub use feed::{AgentItem, FeedEvent, Recipient, Snapshot, follow, snapshot};
pub use items::{
    Item, ItemTarget, NimbusError, Owner, item_request, items_of, owner_selector, publish,
    unpublish, unpublish_all,
};
pub use propagation::{Propagation, propagation};
pub use reporter::Reporter;
pub use reports::{
    AgentReport, REPORT_KIND, ReportState, Sheet, SheetEntry, agent_selector, by_agent,
    record as record_reports, sheets_of,
};

/// The kind under which items are stored.
pub const ITEM_KIND: &str = "NimbusItem";
