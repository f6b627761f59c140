//! Nimbus on the server: items that reactors publish for agents, kept durably in the store as
//! objects of the reserved kind `NimbusItem`, owned by the object whose callback published
//! them, so agents get the current set by list + watch and an owner's delete withdraws them.
//! Agents register as objects of kind `Agent`; their reports on items are kept apart from the
//! items, in one `NimbusReport` sheet per owner and agent, and in memory in the server's
//! report book.

mod agents;
mod fanout;
mod feed;
mod items;
mod kinds;
mod orphans;
mod propagation;
mod removal;
mod report_book;
mod reporter;
mod reports;

pub use agents::{
    AgentView, MAX_HEARTBEAT_TTL, heartbeat, labels_of, list as list_agents, register,
};
pub use fanout::{Fanout, FanoutLimits};
pub use feed::{AgentItem, FeedEvent, Recipient, Snapshot};
pub use items::{
    Item, ItemTarget, NimbusError, OWNER_NAME, Owner, item_request, items_of, keys_of,
    owner_selector, publish, unpublish, unpublish_all,
};
pub use kinds::{AGENT_KIND, ITEM_KIND, REPORT_KIND};
pub use orphans::{sweep as sweep_orphans, sweep_every as sweep_orphans_every};
pub use propagation::{Propagation, propagation};
pub use removal::{
    remove as remove_agent, remove_unseen, remove_unseen_every, remove_unseen_with,
    unseen_check_interval,
};
pub use report_book::{ReportBook, ReportSink};
pub use reporter::{DEFAULT_BYTES_IN_FLIGHT, Reporter, Reservation};
pub use reports::{AgentReport, ReportState, Sheet, SheetEntry, forget_reports, sheets_of};
