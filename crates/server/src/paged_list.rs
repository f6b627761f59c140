//! A list answered as the store reads it: a page at a time, every page from the first one's
//! snapshot, so that the server holds one page of a list of any size.

use axum::body::Body;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use futures::stream::{self, StreamExt};
use reactor_core::object::{Object, Selector};
use reactor_store::{Chunks, Page, Store, StoreError};
use std::sync::Arc;

/// Objects per page: `kubectl` asks for pages as large.
pub const PAGE: usize = 500;

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
        .chain(rest)
        .map(move |page| {
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
