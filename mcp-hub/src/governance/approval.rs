//! The host's approval hook: asked before every tool call (and every context
//! helper call from the model), after the authority allowed it.
//!
//! Tool annotations (`readOnlyHint`, `destructiveHint` …) are handed over raw
//! for the host to show or weigh; the hub itself never treats them as policy.

use mcp_transport::BoxFuture;
use mcp_types::ToolAnnotations;
use serde_json::{Map, Value};

use crate::namespace::helper::Helper;
use crate::namespace::name::ServerName;

/// The host's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Go ahead.
    Approve,
    /// Refuse; nothing is sent ([`crate::HubError::NotApproved`]).
    Deny,
}

/// What is about to be called.
#[derive(Clone, Copy, Debug)]
pub struct ApprovalRequest<'a> {
    /// The current principal's name.
    pub principal: &'a str,
    /// The server.
    pub server: &'a ServerName,
    /// The tool's local name (for a helper, the helper's local name).
    pub tool: &'a str,
    /// The name the model used, when the model asked.
    pub exposed_name: Option<&'a str>,
    /// The helper, when this is a context helper call.
    pub helper: Option<Helper>,
    /// The arguments (may hold secrets: do not log them).
    pub arguments: &'a Map<String, Value>,
    /// The server's raw annotations for the tool, if any.
    pub annotations: Option<&'a ToolAnnotations>,
}

/// Approves or denies calls. Runs on the caller's task; a hook that asks a
/// person should have its own deadline.
pub trait ApprovalHook: Send + Sync + std::fmt::Debug {
    /// Decides on one call.
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval>;
}
