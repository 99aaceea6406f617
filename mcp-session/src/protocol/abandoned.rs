//! A bounded memory of request ids we gave up on.

use std::collections::{HashSet, VecDeque};

/// How many abandoned ids are remembered.
const CAPACITY: usize = 1024;

/// Ids of requests that timed out or were cancelled, so that a late answer is
/// recognised as late rather than reported as a response to an unknown id.
/// Bounded: the oldest ids are forgotten first.
#[derive(Debug, Default)]
pub struct AbandonedIds {
    order: VecDeque<i64>,
    set: HashSet<i64>,
}

impl AbandonedIds {
    /// Remembers an id.
    pub fn insert(&mut self, id: i64) {
        if self.set.insert(id) {
            self.order.push_back(id);
            if self.order.len() > CAPACITY
                && let Some(old) = self.order.pop_front()
            {
                self.set.remove(&old);
            }
        }
    }

    /// Whether the id was abandoned; forgets it (one late answer each).
    pub fn take(&mut self, id: i64) -> bool {
        if self.set.remove(&id) {
            self.order.retain(|x| *x != id);
            true
        } else {
            false
        }
    }

    /// How many ids are remembered.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}
