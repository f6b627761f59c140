//! Fixtures shared by reactor-host's integration tests and its benchmarks (never shipped).

pub mod kv;
