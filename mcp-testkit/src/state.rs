//! Per-connection protocol state that requests change and behaviours read:
//! the legacy log level and resource subscriptions, the list change counts,
//! and the open 2026-07-28 `subscriptions/listen` streams.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::specs::ListKind;

/// The syslog levels, lowest first (RFC 5424 order, as MCP uses them).
pub(crate) const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// A level's rank (0 = debug), or `None` for an unknown level.
pub(crate) fn log_rank(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

/// Mutable state of one connection.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Legacy `logging/setLevel`, as a rank.
    pub(crate) log_level: Option<usize>,
    /// Legacy `resources/subscribe` URIs.
    pub(crate) resource_subscriptions: BTreeSet<String>,
    tools_changes: u32,
    prompts_changes: u32,
    resources_changes: u32,
    /// Open listen streams, oldest first.
    pub(crate) listens: Vec<Listen>,
    /// Legacy: the client capabilities `initialize` declared.
    pub(crate) client_capabilities: Option<serde_json::Map<String, serde_json::Value>>,
}

impl State {
    /// How many times `kind` changed.
    pub(crate) fn changes(&self, kind: ListKind) -> u32 {
        match kind {
            ListKind::Tools => self.tools_changes,
            ListKind::Prompts => self.prompts_changes,
            ListKind::Resources => self.resources_changes,
        }
    }

    /// Counts one change of `kind`.
    pub(crate) fn bump(&mut self, kind: ListKind) {
        let count = match kind {
            ListKind::Tools => &mut self.tools_changes,
            ListKind::Prompts => &mut self.prompts_changes,
            ListKind::Resources => &mut self.resources_changes,
        };
        *count = count.saturating_add(1);
    }
}

/// One open `subscriptions/listen` stream.
#[derive(Debug, Clone)]
pub(crate) struct Listen {
    /// The listen request's id (the subscription id).
    pub(crate) id: Value,
    /// `wire::id_key` of `id`.
    pub(crate) key: String,
    /// The filter the server acknowledged.
    pub(crate) accepted: Map<String, Value>,
}

impl Listen {
    pub(crate) fn wants_list(&self, kind: ListKind) -> bool {
        self.accepted.get(kind.filter_field()) == Some(&Value::Bool(true))
    }

    pub(crate) fn wants_resource(&self, uri: &str) -> bool {
        self.listed("resourceSubscriptions", uri)
    }

    pub(crate) fn wants_task(&self, task_id: &str) -> bool {
        self.listed("taskIds", task_id)
    }

    fn listed(&self, field: &str, wanted: &str) -> bool {
        self.accepted
            .get(field)
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().any(|i| i.as_str() == Some(wanted)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_rank_in_syslog_order() {
        assert_eq!(log_rank("debug"), Some(0));
        assert!(log_rank("error") > log_rank("warning"));
        assert_eq!(log_rank("emergency"), Some(7));
        assert_eq!(log_rank("verbose"), None);
    }

    #[test]
    fn changes_are_counted_per_list() {
        let mut state = State::default();
        state.bump(ListKind::Prompts);
        state.bump(ListKind::Prompts);
        assert_eq!(state.changes(ListKind::Prompts), 2);
        assert_eq!(state.changes(ListKind::Tools), 0);
    }
}
