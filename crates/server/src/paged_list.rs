//! A list answered as the store reads it: a page at a time, every page from the first one's
//! snapshot, so that the server holds one page of a list of any size, for a bounded time.

use axum::body::Body;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use futures::stream::{self, Stream, StreamExt};
use parking_lot::Mutex;
use reactor_core::object::{Object, Selector};
use reactor_store::{Chunks, Page, Store, StoreError};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// Objects per page: `kubectl` asks for pages as large.
pub const PAGE: usize = 500;

/// How long a list's answer may take once its first page is read (the apiserver's request
/// timeout). Then the store's snapshot is let go, whether or not the client reads on: a
/// client that stops reading holds it no longer (an embedded store cannot reuse the pages
/// freed after a snapshot still read).
pub const LIST_DEADLINE: Duration = Duration::from_secs(60);

/// Why a list's answer ended before its last page.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The store could not read a page.
    #[error("the store could not read the list's next page: {0}")]
    Store(#[from] StoreError),
    /// The answer was not read whole within [`LIST_DEADLINE`].
    #[error("the list was not read whole within {0:?}: ended")]
    Deadline(Duration),
}

/// The first page of the objects of `kind` that `selector` matches, and the pages after it.
pub async fn first_page(
    store: &Arc<dyn Store>,
    kind: &str,
    selector: &Selector,
) -> Result<(Page, Chunks), StoreError> {
    let mut pages = store.clone().list_chunks(kind, selector, PAGE);
    let first = pages.next().await.unwrap_or_else(|| {
        Err(StoreError::Backend(format!(
            "the list of kind {kind} ended before its first page"
        )))
    })?;
    Ok((first, pages))
}

/// How a list's answer is written around its objects.
pub struct Envelope<W> {
    /// The bytes before the first object (the list's fields, then the items array opened),
    /// given the revision the list reflects.
    pub head: Vec<u8>,
    /// The bytes after the last object (the array closed, the rest of the fields).
    pub tail: Vec<u8>,
    /// Writes one object as an element of the items array.
    pub item: W,
}

/// A JSON answer written a page at a time as `rest` comes after `first`. A page the store
/// cannot read ends the body unfinished: the client sees a broken answer, never a shorter
/// list.
pub fn respond<W>(kind: String, first: Page, rest: Chunks, envelope: Envelope<W>) -> Response
where
    W: Fn(&Object, &mut Vec<u8>) -> serde_json::Result<()> + Send + 'static,
{
    let Envelope { head, tail, item } = envelope;
    let mut head = Some(head);
    let mut tail = Some(tail);
    let mut written = false;
    let body = stream::once(async move { Ok(first) })
        .chain(Deadlined::new(rest, LIST_DEADLINE))
        .map(move |page: Result<Page, ListError>| {
            let page = page.map_err(|e| {
                tracing::warn!(kind = %kind, error = %e, "a list ended before its last page");
                std::io::Error::other(e)
            })?;
            let mut out = head.take().unwrap_or_default();
            for object in &page.items {
                if written {
                    out.push(b',');
                }
                item(object, &mut out)?;
                written = true;
            }
            if !page.more {
                out.extend(tail.take().unwrap_or_default());
            }
            Ok::<_, std::io::Error>(out)
        });
    (
        [(CONTENT_TYPE, "application/json")],
        Body::from_stream(body),
    )
        .into_response()
}

/// The pages after a list's first, dropped — with the store's snapshot they hold — when
/// `deadline` has passed, whether or not the answer is read meanwhile; read after that, an
/// error ends them.
struct Deadlined {
    rest: Arc<Mutex<Option<Chunks>>>,
    deadline: Duration,
    timer: tokio::task::AbortHandle,
    ended: bool,
}

impl Deadlined {
    fn new(rest: Chunks, deadline: Duration) -> Self {
        let rest = Arc::new(Mutex::new(Some(rest)));
        let held = Arc::downgrade(&rest);
        let timer = tokio::spawn(async move {
            tokio::time::sleep(deadline).await;
            let taken = held.upgrade().and_then(|rest| rest.lock().take());
            if taken.is_some() {
                tracing::warn!(
                    ?deadline,
                    "a list was not read whole within its deadline: ended"
                );
            }
        })
        .abort_handle();
        Deadlined {
            rest,
            deadline,
            timer,
            ended: false,
        }
    }
}

impl Stream for Deadlined {
    type Item = Result<Page, ListError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let polled = (self.rest.lock().as_mut()).map(|pages| pages.poll_next_unpin(cx));
        match polled {
            None => {
                self.ended = true;
                Poll::Ready(Some(Err(ListError::Deadline(self.deadline))))
            }
            Some(Poll::Ready(None)) => {
                self.ended = true;
                self.rest.lock().take();
                Poll::Ready(None)
            }
            Some(polled) => polled.map(|page| page.map(|page| page.map_err(ListError::from))),
        }
    }
}

impl Drop for Deadlined {
    fn drop(&mut self) {
        self.timer.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Stands for a store's snapshot: `held` is true while it lives.
    struct Snapshot(Arc<AtomicBool>);

    impl Drop for Snapshot {
        fn drop(&mut self) {
            self.0.store(false, Ordering::SeqCst);
        }
    }

    fn page(name: &str) -> Page {
        Page {
            items: vec![Object {
                kind: "Probe".into(),
                name: name.into(),
                labels: Default::default(),
                annotations: Default::default(),
                spec: serde_json::Value::Null,
                status: serde_json::Value::Null,
                meta: Default::default(),
            }],
            revision: 7,
            more: true,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_list_not_read_whole_within_its_deadline_lets_its_snapshot_go_and_ends_broken() {
        let held = Arc::new(AtomicBool::new(true));
        let snapshot = Snapshot(held.clone());
        // The pages after the first: one read, the next still being read, from the snapshot.
        let rest: Chunks = stream::iter([Ok(page("b"))])
            .chain(stream::pending())
            .map(move |read| {
                let _from = &snapshot;
                read
            })
            .boxed();
        let envelope = Envelope {
            head: b"[".to_vec(),
            tail: b"]".to_vec(),
            item: |object: &Object, out: &mut Vec<u8>| serde_json::to_writer(out, &object.name),
        };
        let response = respond("Probe".into(), page("a"), rest, envelope);
        let mut body = response.into_body().into_data_stream();
        let first = body.next().await.expect("a first page").expect("read");
        assert_eq!(&first[..], br#"["a""#);

        // The client stops reading: the snapshot is held until the deadline, not after it.
        tokio::time::sleep(LIST_DEADLINE - Duration::from_secs(1)).await;
        assert!(held.load(Ordering::SeqCst), "held before the deadline");
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(
            !held.load(Ordering::SeqCst),
            "let go at the deadline, though the client read nothing meanwhile"
        );

        // Read on, the answer ends broken: never a shorter list that looks whole.
        let next = body.next().await.expect("an end");
        let error = next.expect_err("broken, not the page after");
        assert!(
            error.to_string().contains("not read whole within 60s"),
            "{error}"
        );
        assert!(body.next().await.is_none());
    }
}
