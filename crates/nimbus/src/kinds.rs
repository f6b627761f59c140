//! The reserved kinds under which Nimbus keeps its state in the store (all of them in
//! [`reactor_core::object::RESERVED_KINDS`]).

/// Items that reactors publish for agents.
pub const ITEM_KIND: &str = "NimbusItem";

/// Agents' reports on items: one sheet per owner and agent.
pub const REPORT_KIND: &str = "NimbusReport";

/// Registered agents, with their labels and liveness.
pub const AGENT_KIND: &str = "Agent";
