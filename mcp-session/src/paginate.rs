//! The one pagination guard every list helper uses: a page bound, an item
//! bound, and refusal of a cursor seen before.

use std::collections::HashSet;

use crate::SessionError;

/// Tracks one listing across pages.
#[derive(Debug)]
pub struct Paginator {
    method: &'static str,
    max_pages: usize,
    max_items: usize,
    pages: usize,
    items: usize,
    seen: HashSet<String>,
}

impl Paginator {
    /// A guard for listing `method` with these bounds.
    pub fn new(method: &'static str, max_pages: usize, max_items: usize) -> Self {
        Self {
            method,
            max_pages,
            max_items,
            pages: 0,
            items: 0,
            seen: HashSet::new(),
        }
    }

    /// Counts the items of a page just received.
    pub fn add_items(&mut self, n: usize) -> Result<(), SessionError> {
        self.pages += 1;
        self.items = self.items.saturating_add(n);
        if self.items > self.max_items {
            return Err(SessionError::TooManyItems {
                method: self.method.to_owned(),
                limit: self.max_items,
            });
        }
        Ok(())
    }

    /// Given the page's `nextCursor`, the cursor to ask for next, or `None`
    /// when the listing is complete.
    pub fn next(&mut self, cursor: Option<String>) -> Result<Option<String>, SessionError> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        if self.pages >= self.max_pages {
            return Err(SessionError::TooManyPages {
                method: self.method.to_owned(),
                limit: self.max_pages,
            });
        }
        if !self.seen.insert(cursor.clone()) {
            return Err(SessionError::CursorCycle {
                method: self.method.to_owned(),
            });
        }
        Ok(Some(cursor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_on_a_repeated_cursor() {
        let mut p = Paginator::new("tools/list", 10, 100);
        p.add_items(1).unwrap();
        assert_eq!(p.next(Some("a".into())).unwrap(), Some("a".into()));
        p.add_items(1).unwrap();
        assert_eq!(p.next(Some("b".into())).unwrap(), Some("b".into()));
        p.add_items(1).unwrap();
        assert!(matches!(
            p.next(Some("a".into())),
            Err(SessionError::CursorCycle { .. })
        ));
    }

    #[test]
    fn stops_at_the_page_bound() {
        let mut p = Paginator::new("tools/list", 3, 100);
        for i in 0..2 {
            p.add_items(1).unwrap();
            assert!(p.next(Some(format!("c{i}"))).unwrap().is_some());
        }
        p.add_items(1).unwrap();
        assert!(matches!(
            p.next(Some("c9".into())),
            Err(SessionError::TooManyPages { limit: 3, .. })
        ));
    }

    #[test]
    fn stops_at_the_item_bound_and_ends_without_cursor() {
        let mut p = Paginator::new("tools/list", 10, 5);
        p.add_items(5).unwrap();
        assert_eq!(p.next(None).unwrap(), None);
        assert!(matches!(
            p.add_items(1),
            Err(SessionError::TooManyItems { limit: 5, .. })
        ));
    }
}
