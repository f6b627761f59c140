//! Guest stdout and stderr, line by line, into `tracing` under the component's name.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// Longest line kept before it is logged unfinished.
const MAX_LINE: usize = 8 * 1024;

/// Which stream a guest wrote to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// A WASI output stream that logs each line the guest writes.
#[derive(Clone)]
pub(crate) struct TracingOutput {
    component: Arc<str>,
    stream: Stream,
}

impl TracingOutput {
    pub(crate) fn new(component: Arc<str>, stream: Stream) -> Self {
        TracingOutput { component, stream }
    }
}

impl IsTerminal for TracingOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for TracingOutput {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(LineWriter {
            out: self.clone(),
            line: Vec::new(),
        })
    }
}

/// Buffers a partial line until its newline arrives.
struct LineWriter {
    out: TracingOutput,
    line: Vec<u8>,
}

impl LineWriter {
    fn emit(&mut self) {
        if self.line.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.line);
        let text = text.trim_end_matches(['\r', '\n']);
        let component = &*self.out.component;
        if !crate::observe::log_limit::admit(component) {
            self.line.clear();
            return;
        }
        let stream = match self.out.stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        crate::observe::log_ring::record(component, stream, text);
        match self.out.stream {
            Stream::Stdout => {
                tracing::info!(target: "guest", component, stream = "stdout", "{text}")
            }
            Stream::Stderr => {
                tracing::warn!(target: "guest", component, stream = "stderr", "{text}")
            }
        }
        self.line.clear();
    }
}

impl AsyncWrite for LineWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        for &byte in buf {
            self.line.push(byte);
            if byte == b'\n' || self.line.len() >= MAX_LINE {
                self.emit();
            }
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.emit();
        Poll::Ready(Ok(()))
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        self.emit();
    }
}
