//! A whole list handed out a page at a time, every page at one revision: read so by a backend
//! that keeps snapshots, a list of any size is never whole in memory.

use crate::{Page, PageQuery, Store, StoreError};
use futures::stream::{self, BoxStream, StreamExt};
use reactor_core::object::{Revision, Selector};
use std::sync::Arc;

/// The pages of one list in name order, each of at most the size asked for; the last has
/// `more` false. An error ends the list.
pub type Chunks = BoxStream<'static, Result<Page, StoreError>>;

/// The pages of the objects of `kind` that `selector` matches, out of one whole
/// [`Store::list`]: for a backend that cannot read a later page at an earlier revision.
pub fn of_whole_list<S: Store + ?Sized>(
    store: Arc<S>,
    kind: &str,
    selector: &Selector,
    chunk: usize,
) -> Chunks {
    let (kind, selector, chunk) = (kind.to_owned(), selector.clone(), chunk.max(1));
    stream::once(async move { store.list(&kind, &selector).await })
        .flat_map(move |listed| {
            let pages: Vec<Result<Page, StoreError>> = match listed {
                Err(e) => vec![Err(e)],
                Ok(mut listing) => {
                    listing.items.sort_by(|a, b| a.name.cmp(&b.name));
                    let revision = listing.revision;
                    let mut pages = Vec::new();
                    let mut items = listing.items.into_iter().peekable();
                    loop {
                        let page: Vec<_> = items.by_ref().take(chunk).collect();
                        let more = items.peek().is_some();
                        pages.push(Ok(Page {
                            items: page,
                            revision,
                            more,
                        }));
                        if !more {
                            break pages;
                        }
                    }
                }
            };
            stream::iter(pages)
        })
        .boxed()
}

/// Where a list read in pages stands.
enum Next {
    First,
    After { name: String, at: Revision },
    Done,
}

/// The pages of the objects of `kind` that `selector` matches, read through
/// [`Store::list_page`]: the first at the latest state, every later one at the first's
/// revision ([`StoreError::SnapshotGone`] once the store no longer keeps it).
pub fn through_pages<S: Store + ?Sized>(
    store: Arc<S>,
    kind: &str,
    selector: &Selector,
    chunk: usize,
) -> Chunks {
    let (kind, selector, chunk) = (kind.to_owned(), selector.clone(), chunk.max(1));
    stream::unfold(Next::First, move |next| {
        let (store, kind, selector) = (store.clone(), kind.clone(), selector.clone());
        async move {
            let (after, at) = match next {
                Next::Done => return None,
                Next::First => (None, None),
                Next::After { name, at } => (Some(name), Some(at)),
            };
            let query = PageQuery {
                after: after.as_deref(),
                limit: Some(chunk),
                at,
            };
            let page = match store.list_page(&kind, &selector, query).await {
                Ok(page) if at.is_some_and(|at| at != page.revision) => {
                    Err(StoreError::SnapshotGone {
                        revision: at.unwrap_or_default(),
                    })
                }
                read => read,
            };
            let then = match &page {
                Ok(page) => page.next_after().map_or(Next::Done, |name| Next::After {
                    name: name.to_owned(),
                    at: page.revision,
                }),
                Err(_) => Next::Done,
            };
            Some((page, then))
        }
    })
    .boxed()
}
