//! Beside the stages, agents' reports back to the reactors: relayed per owner, handed over
//! in rounds (`on-agent-status`), and the owners of agents gone rolled up again.

pub(crate) mod agents_gone;
pub(crate) mod relay;
pub(crate) mod rounds;
