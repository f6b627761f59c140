//! The types every layer of reactor-host shares, with no runtime beneath them: the object
//! document and its rules, what an apply did, agents' reports, events, guests' log lines, the
//! HTTP API's bodies, and private files.

pub mod agent_view;
pub mod applied;
pub mod backoff;
pub mod bucket;
pub mod clock;
pub mod component;
pub mod event;
pub mod feed;
pub mod listing;
pub mod log_line;
pub mod metrics;
pub mod object;
pub mod one_line;
pub mod private;
pub mod report;
pub mod watch_event;
pub mod wire;
