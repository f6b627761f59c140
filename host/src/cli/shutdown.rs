//! Stopping on SIGTERM or SIGINT: what `serve` and `agent` wait for, handled from their start.
//!
//! A process that is a container's PID 1 gets no default action for SIGTERM (the kernel
//! ignores it), so `podman stop` waited its 10 s and killed the agents. Both commands listen
//! for the two signals before anything else and stop cleanly on either.

/// Why the signals cannot be listened for.
#[derive(Debug, thiserror::Error)]
pub enum ShutdownError {
    #[error("cannot listen for {signal}")]
    Listen {
        signal: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// The stop signals, listened for from [`Shutdown::listen`] on: one that arrives before
/// [`Shutdown::requested`] is awaited is kept, not lost.
#[derive(Debug)]
pub struct Shutdown {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl Shutdown {
    /// Listens for SIGTERM and SIGINT from now on (their default action no longer applies).
    pub fn listen() -> Result<Self, ShutdownError> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let listen = |kind, name| {
                signal(kind).map_err(|source| ShutdownError::Listen {
                    signal: name,
                    source,
                })
            };
            Ok(Self {
                term: listen(SignalKind::terminate(), "SIGTERM")?,
                interrupt: listen(SignalKind::interrupt(), "SIGINT")?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// Waits for a stop signal; answers its name, for the log.
    pub async fn requested(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.interrupt.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
