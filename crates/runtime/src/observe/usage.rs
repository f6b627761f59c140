//! Per-version accounting of calls.
//!
//! Each call's time on the host's threads (the time its future was polled), its instance's
//! peak linear memory, and the host-import calls and bytes written during it, added to the
//! version's totals and to the metrics labelled by component and version.

use reactor_core::component::Usage;
use reactor_core::metrics::{
    COMPONENT_CALLS, COMPONENT_CPU, COMPONENT_HOST_CALLS, COMPONENT_MEMORY_PEAK, COMPONENT_WRITTEN,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The totals of one version.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    calls: AtomicU64,
    host_calls: AtomicU64,
    cpu_micros: AtomicU64,
    peak_memory_bytes: AtomicU64,
    written_bytes: AtomicU64,
}

/// What one call did, gathered while it runs.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CallUsage {
    pub(crate) host_calls: u64,
    pub(crate) written_bytes: u64,
}

impl Totals {
    /// Adds one call of `component` version `version` that ran `cpu`, grew its instance to
    /// `peak_memory` bytes and did `call`.
    pub(crate) fn add(
        &self,
        component: &str,
        version: &str,
        cpu: Duration,
        peak_memory: u64,
        call: CallUsage,
    ) {
        let micros = u64::try_from(cpu.as_micros()).unwrap_or(u64::MAX);
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.host_calls
            .fetch_add(call.host_calls, Ordering::Relaxed);
        self.cpu_micros.fetch_add(micros, Ordering::Relaxed);
        self.written_bytes
            .fetch_add(call.written_bytes, Ordering::Relaxed);
        let peak = self
            .peak_memory_bytes
            .fetch_max(peak_memory, Ordering::Relaxed)
            .max(peak_memory);
        let labels = [
            ("component", component.to_owned()),
            ("version", version.to_owned()),
        ];
        metrics::counter!(COMPONENT_CALLS, &labels).increment(1);
        metrics::counter!(COMPONENT_HOST_CALLS, &labels).increment(call.host_calls);
        metrics::gauge!(COMPONENT_MEMORY_PEAK, &labels).set(peak as f64);
        metrics::counter!(COMPONENT_WRITTEN, &labels).increment(call.written_bytes);
        self.cpu_metric(&labels);
    }

    /// `reactor_component_cpu_seconds` is a gauge of the total (the recorder's counters count
    /// whole units only), set from the microseconds summed.
    fn cpu_metric(&self, labels: &[(&'static str, String); 2]) {
        let seconds = self.cpu_micros.load(Ordering::Relaxed) as f64 / 1e6;
        metrics::gauge!(COMPONENT_CPU, labels).set(seconds);
    }

    pub(crate) fn snapshot(&self) -> Usage {
        Usage {
            calls: self.calls.load(Ordering::Relaxed),
            host_calls: self.host_calls.load(Ordering::Relaxed),
            cpu_micros: self.cpu_micros.load(Ordering::Relaxed),
            peak_memory_bytes: self.peak_memory_bytes.load(Ordering::Relaxed),
            written_bytes: self.written_bytes.load(Ordering::Relaxed),
        }
    }
}

/// A future whose polls are timed: the time it ran on the executor's threads.
pub(crate) struct Timed<'a, F> {
    inner: F,
    spent: &'a mut Duration,
}

impl<'a, F> Timed<'a, F> {
    pub(crate) fn new(inner: F, spent: &'a mut Duration) -> Self {
        Timed { inner, spent }
    }
}

impl<F: Future + Unpin> Future for Timed<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let started = Instant::now();
        let polled = Pin::new(&mut self.inner).poll(cx);
        *self.spent += started.elapsed();
        polled
    }
}
