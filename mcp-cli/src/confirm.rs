//! Calls the configuration marks with `confirm` (a server's tools, all or
//! some) are made only once a person said yes: `mcp call` asks at the
//! terminal before anything starts (or takes `--yes` for its one call),
//! `mcp serve` asks the host's user by elicitation
//! ([`mcp_gateway::HostApproval`]), and every other command refuses them. The hub's approval hook
//! ([`ConfirmCalls`]) is the one place that lets a marked call through, so
//! a path that forgot to ask cannot call one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use mcp_hub::{Approval, ApprovalHook, ApprovalRequest};
use mcp_transport::BoxFuture;

use crate::config::ServerEntry;

/// Which of a server's tools are confirmed before each call (`confirm`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Confirm {
    /// None (no `confirm`, or `false`).
    #[default]
    Never,
    /// Every tool (`true`).
    All,
    /// These tools, by their names on the server.
    Tools(BTreeSet<String>),
}

impl Confirm {
    /// Whether a call of the server's tool `tool` needs a yes.
    pub(crate) fn covers(&self, tool: &str) -> bool {
        match self {
            Confirm::Never => false,
            Confirm::All => true,
            Confirm::Tools(tools) => tools.contains(tool),
        }
    }
}

/// The marked tools of the configured servers.
#[derive(Clone, Debug, Default)]
pub(crate) struct Marked(Arc<BTreeMap<String, Confirm>>);

impl Marked {
    /// The `confirm` settings of `entries`.
    pub(crate) fn of<'a>(entries: impl IntoIterator<Item = &'a ServerEntry>) -> Self {
        Self(Arc::new(
            entries
                .into_iter()
                .filter(|e| e.confirm != Confirm::Never)
                .map(|e| (e.name.clone(), e.confirm.clone()))
                .collect(),
        ))
    }

    /// Whether no call needs a yes.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a call of `tool` on `server` needs a yes.
    pub(crate) fn covers(&self, server: &str, tool: &str) -> bool {
        self.0.get(server).is_some_and(|c| c.covers(tool))
    }
}

/// The yeses a command has, each said (at the terminal, or with `mcp call
/// --yes`) for one call. Shared by the command and its hub's hook.
#[derive(Clone, Debug, Default)]
pub(crate) struct Yeses {
    /// `(server, tool)` said yes to, each good for one call.
    once: Arc<Mutex<Vec<(String, String)>>>,
}

impl Yeses {
    /// A person said yes to one call of `tool` on `server`.
    pub(crate) fn grant_once(&self, server: &str, tool: &str) {
        lock(&self.once).push((server.to_owned(), tool.to_owned()));
    }

    /// Takes a yes for this call, if there is one.
    fn take(&self, server: &str, tool: &str) -> bool {
        let mut once = lock(&self.once);
        match once.iter().position(|(s, t)| s == server && t == tool) {
            Some(at) => {
                once.swap_remove(at);
                true
            }
            None => false,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The hub's approval hook of a command: unmarked calls go ahead; a marked
/// one only with a yes (see [`Yeses`]).
#[derive(Debug)]
pub(crate) struct ConfirmCalls {
    marked: Marked,
    yeses: Yeses,
}

impl ConfirmCalls {
    /// The hook for `entries`, when any of them marks a tool.
    pub(crate) fn for_entries<'a>(
        entries: impl IntoIterator<Item = &'a ServerEntry>,
        yeses: Yeses,
    ) -> Option<Arc<dyn ApprovalHook>> {
        let marked = Marked::of(entries);
        (!marked.is_empty())
            .then(|| Arc::new(ConfirmCalls { marked, yeses }) as Arc<dyn ApprovalHook>)
    }
}

impl ApprovalHook for ConfirmCalls {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        let server = request.server.as_str();
        let approval =
            if !self.marked.covers(server, request.tool) || self.yeses.take(server, request.tool) {
                Approval::Approve
            } else {
                Approval::Deny
            };
        Box::pin(std::future::ready(approval))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_yes_said_once_is_good_for_one_call_of_that_tool_only() {
        let yeses = Yeses::default();
        yeses.grant_once("files", "delete");
        assert!(!yeses.take("files", "move"));
        assert!(!yeses.take("other", "delete"));
        assert!(yeses.take("files", "delete"));
        assert!(!yeses.take("files", "delete"));
    }

    #[test]
    fn confirm_covers_all_some_or_none_of_the_tools() {
        assert!(Confirm::All.covers("x"));
        assert!(!Confirm::Never.covers("x"));
        let some = Confirm::Tools(["delete".to_owned()].into());
        assert!(some.covers("delete"));
        assert!(!some.covers("read"));
    }
}
