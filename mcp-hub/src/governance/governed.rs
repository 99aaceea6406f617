//! The one governed path every operation on a server takes, whoever asks
//! (the model through the namespace, a context helper, host code through the
//! facade, a subscription's read):
//!
//! ```text
//! gate (authority) → approve (hook) → limit (slot) → retry → audit
//! ```
//!
//! The audit wraps the whole path, so a refusal at any step is recorded like
//! the operation it stopped. Results are bounded on the frame: the server's
//! `max_content_bytes` travels in the call options down to the session.

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use mcp_session::{CallOptions, Ready, Session, SessionError};
use mcp_types::{Tool, error_codes};
use serde_json::{Map, Value};
use tokio::time::Instant;
use tracing::Instrument as _;

use crate::HubError;
use crate::error::TargetKind;
use crate::events::{AuditOutcome, AuditRecord, Operation, redact_uri};
use crate::governance::approval::{Approval, ApprovalRequest};
use crate::governance::authority::Gate;
use crate::namespace::helper::Helper;
use crate::namespace::name::ServerName;
use crate::servers::retry::{Repeatable, with_retry};
use crate::servers::server::ServerCell;
use crate::shared::HubShared;

/// Who asked.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Caller<'a> {
    /// Host code (the facade, a subscription).
    Host,
    /// The model, calling a tool through the namespace.
    Model {
        /// The name it used.
        exposed_name: &'a str,
    },
    /// The model, calling a context helper (asked for approval as the
    /// helper, whatever operation it performs).
    Helper {
        /// Which helper.
        helper: Helper,
        /// The name it used.
        exposed_name: &'a str,
        /// The helper's arguments, for the approval hook.
        arguments: &'a Map<String, Value>,
    },
}

impl Caller<'_> {
    pub(crate) fn is_model(self) -> bool {
        !matches!(self, Caller::Host)
    }
}

/// What an operation touches, for the authority.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target<'a> {
    /// The server as a whole (a listing; its items are filtered after).
    Server,
    /// A tool, by its local name. `listed` is its definition when the caller
    /// already holds it (the model's namespace); otherwise the tool must be
    /// in the server's active snapshot.
    Tool {
        name: &'a str,
        listed: Option<&'a Tool>,
    },
    /// A resource, by its exact URI.
    Resource(&'a str),
    /// A prompt, by name.
    Prompt(&'a str),
    /// A skill, by the URI of its `SKILL.md`.
    #[cfg_attr(not(feature = "skills"), allow(dead_code))]
    Skill(&'a str),
}

/// One governed operation.
#[derive(Debug)]
pub(crate) struct Step<'a> {
    /// What the audit records.
    pub(crate) operation: Operation,
    /// The protocol method, for errors.
    pub(crate) method: &'static str,
    pub(crate) caller: Caller<'a>,
    pub(crate) target: Target<'a>,
    /// Whether the server offers the operation at all (by capability);
    /// when not, it fails with [`HubError::Unsupported`] before a slot is
    /// taken, as does a server answering "method not found".
    pub(crate) supported: bool,
    /// Whether a transient failure may be retried.
    pub(crate) repeatable: Repeatable,
    /// The caller's options; the server's content limit is added.
    pub(crate) options: CallOptions,
    /// A tool call's arguments (empty otherwise): shown to the approval
    /// hook, then handed to each attempt (moved into a call that is never
    /// repeated, so megabytes are not copied).
    pub(crate) arguments: Map<String, Value>,
}

/// Runs `op` on the server's session along the governed path; `op` gets the
/// session, the call options to send with and the step's arguments (one
/// attempt per call of `op`). `otherwise` is the answer when the server does
/// not offer the operation (an empty listing); without one that fails with
/// [`HubError::Unsupported`].
pub(crate) fn governed<'a, T, F, Fut>(
    hub: &'a HubShared,
    cell: &'a ServerCell,
    step: Step<'a>,
    otherwise: Option<T>,
    op: F,
) -> impl Future<Output = Result<T, HubError>> + 'a
where
    T: 'a,
    F: FnMut(Arc<Session<Ready>>, CallOptions, Map<String, Value>) -> Fut + 'a,
    Fut: Future<Output = Result<T, SessionError>> + 'a,
{
    let audit_target = match step.target {
        Target::Server => None,
        Target::Tool { name, .. } | Target::Prompt(name) => Some(name.to_owned()),
        Target::Resource(uri) | Target::Skill(uri) => Some(redact_uri(uri)),
    };
    let operation = step.operation;
    let from_model = step.caller.is_model();
    // The requests the operation makes are spans inside this one.
    let span = tracing::debug_span!(
        "mcp.call",
        server = %cell.spec.name,
        operation = ?operation,
        from_model,
    );
    audited(
        hub,
        cell,
        operation,
        audit_target,
        from_model,
        run(hub, cell, step, otherwise, op),
    )
    .instrument(span)
}

async fn run<T, F, Fut>(
    hub: &HubShared,
    cell: &ServerCell,
    step: Step<'_>,
    otherwise: Option<T>,
    mut op: F,
) -> Result<T, HubError>
where
    F: FnMut(Arc<Session<Ready>>, CallOptions, Map<String, Value>) -> Fut,
    Fut: Future<Output = Result<T, SessionError>>,
{
    let server = &cell.spec.name;
    // 1. The authority, for the current principal.
    let principal = hub.principal();
    let gate = Gate::new(&hub.authority, &principal, server.as_str());
    let annotations = match step.target {
        Target::Server => {
            gate.server()
                .map_err(denied(server, TargetKind::Server, server.as_str()))?;
            None
        }
        Target::Resource(uri) => {
            gate.resource(uri)
                .map_err(denied(server, TargetKind::Resource, uri))?;
            None
        }
        Target::Prompt(name) => {
            gate.prompt(name)
                .map_err(denied(server, TargetKind::Prompt, name))?;
            None
        }
        Target::Skill(uri) => {
            gate.skill(uri)
                .map_err(denied(server, TargetKind::Skill, uri))?;
            None
        }
        Target::Tool { name, listed, .. } => {
            gate.tool(name)
                .map_err(denied(server, TargetKind::Tool, name))?;
            match listed {
                Some(tool) => tool.annotations.clone(),
                // Host code may call only tools the server listed (the
                // published surface is the snapshot ∩ the authority). Boxed:
                // rare, and large enough to weigh on every call in flight.
                None => Box::pin(listed_annotations(hub, cell, name)).await?,
            }
        }
    };
    if !step.supported {
        return otherwise.ok_or_else(|| unsupported(server, step.method));
    }
    // 2. The host's approval: every tool call, every helper call.
    let request = match (step.caller, step.target) {
        (
            Caller::Helper {
                helper,
                exposed_name,
                arguments,
            },
            _,
        ) => Some(ApprovalRequest {
            principal: principal.name(),
            server,
            tool: helper.local_name(),
            exposed_name: Some(exposed_name),
            helper: Some(helper),
            arguments,
            annotations: None,
        }),
        (caller, Target::Tool { name, .. }) => Some(ApprovalRequest {
            principal: principal.name(),
            server,
            tool: name,
            exposed_name: match caller {
                Caller::Model { exposed_name } => Some(exposed_name),
                _ => None,
            },
            helper: None,
            arguments: &step.arguments,
            annotations: annotations.as_ref(),
        }),
        _ => None,
    };
    if let Some(request) = request {
        approve(hub, request).await?;
    }
    // 3. A concurrency slot; fail fast when the server is down.
    cell.session()?;
    let _slot = cell.limiter.acquire(server).await?;
    let session = cell.session()?;
    // 4. Retries of transient failures, where the operation may repeat.
    let options = step
        .options
        .max_result_bytes(cell.spec.max_content_bytes.bytes());
    let repeatable = step.repeatable;
    let mut arguments = Some(step.arguments);
    let result = with_retry(&cell.spec.retry, repeatable, &hub.jitter, || {
        let args = match repeatable {
            Repeatable::Once => arguments.take().unwrap_or_default(),
            _ => arguments.clone().unwrap_or_default(),
        };
        op(Arc::clone(&session), options.clone(), args)
    })
    .await;
    match result {
        Ok(value) => Ok(value),
        Err(e) if e.code() == Some(error_codes::METHOD_NOT_FOUND) && !is_tool(step.target) => {
            otherwise.ok_or_else(|| unsupported(server, step.method))
        }
        Err(e) => Err(session_error(hub, server, step.method, e)),
    }
}

fn is_tool(target: Target<'_>) -> bool {
    matches!(target, Target::Tool { .. })
}

fn unsupported(server: &ServerName, operation: &'static str) -> HubError {
    HubError::Unsupported {
        server: server.clone(),
        operation,
    }
}

/// The annotations of a tool the server listed (discovering it first on a
/// lazy server); a tool it did not list is unknown.
async fn listed_annotations(
    hub: &HubShared,
    cell: &ServerCell,
    name: &str,
) -> Result<Option<mcp_types::ToolAnnotations>, HubError> {
    hub.discover_cell(cell).await?;
    let snapshot = cell.state().active.clone();
    let tool =
        snapshot
            .as_ref()
            .and_then(|s| s.get(name))
            .ok_or_else(|| HubError::UnknownTool {
                name: name.to_owned(),
            })?;
    Ok(tool.annotations.clone())
}

/// Asks the host's approval hook, if there is one.
async fn approve(hub: &HubShared, request: ApprovalRequest<'_>) -> Result<(), HubError> {
    let Some(hook) = &hub.approval else {
        return Ok(());
    };
    match hook.approve(request).await {
        Approval::Approve => Ok(()),
        Approval::Deny => Err(HubError::NotApproved {
            server: request.server.clone(),
            tool: request.tool.to_owned(),
        }),
    }
}

/// Runs `op` and records its audit entry: how it ended, or
/// [`AuditOutcome::Cancelled`] if its future is dropped before that.
pub(crate) fn audited<'a, T>(
    hub: &'a HubShared,
    cell: &'a ServerCell,
    operation: Operation,
    target: Option<String>,
    from_model: bool,
    op: impl Future<Output = Result<T, HubError>> + 'a,
) -> impl Future<Output = Result<T, HubError>> + 'a {
    // A combinator, not an `async fn`: an `async fn` keeps its argument `op`
    // and, while awaiting it, a second copy, which doubled the size of every
    // hub call's future. The entry lives in the closure, so dropping the
    // future drops it unwritten, and its `Drop` writes the cancellation.
    let mut entry = AuditEntry {
        hub,
        cell,
        operation,
        target,
        from_model,
        began: Instant::now(),
        written: false,
    };
    op.map(move |result| {
        entry.write(match &result {
            Ok(_) => AuditOutcome::Succeeded,
            Err(e @ (HubError::Denied { .. } | HubError::NotApproved { .. })) => {
                AuditOutcome::Refused(e.kind())
            }
            Err(e) => AuditOutcome::Failed(e.kind()),
        });
        result
    })
}

/// One operation's audit record, written exactly once.
struct AuditEntry<'a> {
    hub: &'a HubShared,
    cell: &'a ServerCell,
    operation: Operation,
    target: Option<String>,
    from_model: bool,
    began: Instant,
    written: bool,
}

impl AuditEntry<'_> {
    fn write(&mut self, outcome: AuditOutcome) {
        self.written = true;
        self.hub.events.audit(AuditRecord {
            principal: self.hub.principal().name().to_owned(),
            server: self.cell.spec.name.clone(),
            operation: self.operation,
            target: self.target.take(),
            from_model: self.from_model,
            outcome,
            elapsed: self.began.elapsed(),
        });
    }
}

impl Drop for AuditEntry<'_> {
    fn drop(&mut self) {
        // Not while a panic unwinds through the operation: it was not
        // cancelled, and a sink panicking now would abort the process.
        if !self.written && !std::thread::panicking() {
            self.write(AuditOutcome::Cancelled);
        }
    }
}

/// The refusal of `name` on `server` for a reason the authority gave.
pub(crate) fn denied(
    server: &ServerName,
    kind: TargetKind,
    name: &str,
) -> impl Fn(crate::DenyReason) -> HubError {
    let server = server.clone();
    let name = name.to_owned();
    move |reason| HubError::Denied {
        server: server.clone(),
        kind,
        name: name.clone(),
        reason,
    }
}

/// A session error on `server`, or [`HubError::ShuttingDown`] when the hub
/// is closing the session under the request.
pub(crate) fn session_error(
    hub: &HubShared,
    server: &ServerName,
    method: &'static str,
    e: SessionError,
) -> HubError {
    if e.is_dead() && hub.is_shutting_down() {
        HubError::ShuttingDown
    } else {
        HubError::from_session(server, method, e)
    }
}
