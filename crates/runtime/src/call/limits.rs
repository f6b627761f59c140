//! Per-instance resource limits.
//!
//! A memory cap that stops the guest when it is reached, and enough instances and tables for
//! large (componentize-py, -js) components.

use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};

/// Core instances, tables and memories one component instance may create. Components
/// built by componentize-py and componentize-js need more than 10 core instances.
const MAX_INSTANCES: usize = 1_000;
const MAX_TABLES: usize = 1_000;
const MAX_MEMORIES: usize = 100;
/// Elements of one table.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

/// [`StoreLimits`] plus a record of whether the memory cap was hit, so that a trap it
/// caused is reported as the cap and not as a guest bug.
pub(crate) struct Limiter {
    limits: StoreLimits,
    memory_bytes: u64,
    pub(crate) hit_memory_cap: bool,
    /// The largest linear memory the instance grew to, in bytes.
    pub(crate) peak_memory: u64,
}

impl Limiter {
    pub(crate) fn new(memory_bytes: u64) -> Self {
        let limits = StoreLimitsBuilder::new()
            .memory_size(usize::try_from(memory_bytes).unwrap_or(usize::MAX))
            .table_elements(MAX_TABLE_ELEMENTS)
            .instances(MAX_INSTANCES)
            .tables(MAX_TABLES)
            .memories(MAX_MEMORIES)
            .trap_on_grow_failure(true)
            .build();
        Limiter {
            limits,
            memory_bytes,
            hit_memory_cap: false,
            peak_memory: 0,
        }
    }

    pub(crate) fn memory_bytes(&self) -> u64 {
        self.memory_bytes
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let grown = self.limits.memory_growing(current, desired, maximum);
        if matches!(grown, Ok(true)) {
            self.peak_memory = self.peak_memory.max(desired as u64);
        } else {
            self.hit_memory_cap = true;
        }
        grown
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}
