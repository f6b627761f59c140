//! One page of a list: the objects of a kind in name order after a name, at most a limit,
//! all read from one snapshot of the store, so that the pages of one list agree.

use reactor_core::listing::Listing;
use reactor_core::object::{Object, Revision};

/// Which page of a list to read.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PageQuery<'a> {
    /// Only objects named after this one (the last of the page before).
    pub after: Option<&'a str>,
    /// At most this many objects (`None`: all that remain).
    pub limit: Option<usize>,
    /// The revision the first page was read at: a later page is read from the same snapshot,
    /// or refused with [`StoreError::SnapshotGone`](crate::StoreError::SnapshotGone) once the
    /// store no longer keeps it. `None`: the latest state (a first page).
    pub at: Option<Revision>,
}

/// A page of objects in name order.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub items: Vec<Object>,
    /// The revision of the snapshot the page was read from.
    pub revision: Revision,
    /// Whether objects remain after the last of this page.
    pub more: bool,
}

impl Page {
    /// The page `query` asks for out of a whole `listing` of the matching objects, for a store
    /// that reads no less than everything (the listing's own revision is the page's).
    pub fn of(listing: Listing, query: &PageQuery<'_>) -> Page {
        let mut items: Vec<Object> = listing
            .items
            .into_iter()
            .filter(|o| query.after.is_none_or(|after| o.name.as_str() > after))
            .collect();
        items.sort_by(|a, b| a.name.cmp(&b.name));
        let more = query.limit.is_some_and(|limit| items.len() > limit);
        if let Some(limit) = query.limit {
            items.truncate(limit);
        }
        Page {
            items,
            revision: listing.revision,
            more,
        }
    }

    /// The name the next page starts after, when objects remain.
    pub fn next_after(&self) -> Option<&str> {
        self.more
            .then(|| self.items.last().map(|o| o.name.as_str()))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(names: &[&str]) -> Listing {
        Listing {
            items: names
                .iter()
                .map(|n| Object {
                    kind: "Policy".into(),
                    name: (*n).into(),
                    labels: Default::default(),
                    annotations: Default::default(),
                    spec: serde_json::json!({}),
                    status: serde_json::Value::Null,
                    meta: Default::default(),
                })
                .collect(),
            revision: 7,
        }
    }

    fn names(page: &Page) -> Vec<&str> {
        page.items.iter().map(|o| o.name.as_str()).collect()
    }

    #[test]
    fn pages_follow_name_order_and_say_whether_more_remain() {
        let query = PageQuery {
            limit: Some(2),
            ..PageQuery::default()
        };
        let first = Page::of(named(&["c", "a", "d", "b"]), &query);
        assert_eq!(names(&first), ["a", "b"]);
        assert_eq!(first.next_after(), Some("b"));
        let query = PageQuery {
            after: first.next_after(),
            limit: Some(2),
            at: Some(7),
        };
        let second = Page::of(named(&["c", "a", "d", "b"]), &query);
        assert_eq!(names(&second), ["c", "d"]);
        assert_eq!(second.next_after(), None);
        assert_eq!(second.revision, 7);
        let all = Page::of(named(&["b", "a"]), &PageQuery::default());
        assert_eq!((names(&all), all.more), (vec!["a", "b"], false));
    }
}
