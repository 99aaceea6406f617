//! Calls the operator marked for confirmation are put to the host's user:
//! a [`HostApproval`] is the hub's [`ApprovalHook`] that asks the host of
//! the call, by a form elicitation with no fields (accept = go ahead), and
//! denies when that host cannot be asked.
//!
//! The host asked is the one a server's own elicitation would go to (the
//! crate docs' attribution rule): the host whose tool call is in flight.
//! Denied (the user declined or cancelled, the host declared no
//! elicitation, its connection carries no requests, it did not answer in
//! time), the call is refused with [`HubError::NotApproved`] and nothing
//! reaches the server.
//!
//! A 2026-07-28 host cannot be sent a request: its round of a marked call
//! runs inside a [`RoundApproval`] scope, where the hook asks nothing and
//! only notes the question, and the gateway puts it to the host as an
//! `input_required` round of its own (see `rounds.rs`). The host's accept
//! comes back sealed; the round that follows (and every later round of the
//! same call) runs with the approval granted for exactly that server and
//! tool.
//!
//! [`HubError::NotApproved`]: mcp_hub::HubError::NotApproved

use std::fmt;
use std::sync::{Arc, Mutex};

use mcp_hub::{Approval, ApprovalHook, ApprovalRequest};
use mcp_transport::BoxFuture;
use mcp_types::requests::Elicit;
use mcp_types::text::Untrusted;
use mcp_types::{
    ElicitAction, ElicitFormParams, ElicitParams, Meta, RequestedSchema, SchemaProperties,
};

use crate::HostLink;
use crate::host::SERVER_META;

/// Characters of a call's arguments shown in the question (their JSON);
/// longer ones are cut, saying how much was left out.
const SHOWN_ARGUMENT_CHARS: usize = 1024;

/// Which calls need the host's confirmation: `(server, local tool name)`.
type Marked = dyn Fn(&str, &str) -> bool + Send + Sync;

tokio::task_local! {
    /// The approval state of a 2026-07-28 host's round, for the hook that
    /// runs on the round's task.
    static ROUND: Arc<RoundApproval>;
}

/// A marked call's question, noted instead of asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Question {
    /// The server.
    pub(crate) server: String,
    /// The tool's local name on it.
    pub(crate) tool: String,
    /// What the host's user is asked (escaped).
    pub(crate) message: String,
}

/// How the approval hook treats one 2026-07-28 round (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct RoundApproval {
    /// The host's user accepted calls of this `(server, tool)` (the route
    /// the sealed state pins).
    granted: Option<(String, String)>,
    /// The question a marked call would have asked.
    wanted: Mutex<Option<Question>>,
}

impl RoundApproval {
    /// A round whose user accepted calls of `granted` (`None`: nothing yet).
    pub(crate) fn new(granted: Option<(String, String)>) -> Arc<Self> {
        Arc::new(Self {
            granted,
            wanted: Mutex::new(None),
        })
    }

    /// Runs `round` with this approval state for the hook.
    pub(crate) async fn scope<F: Future>(self: &Arc<Self>, round: F) -> F::Output {
        ROUND.scope(Arc::clone(self), round).await
    }

    /// The question the hook noted (and denied the call for), if any.
    pub(crate) fn question(&self) -> Option<Question> {
        self.wanted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// The question put to the host's user about `request`.
fn question_text(request: &ApprovalRequest<'_>) -> String {
    let arguments = serde_json::to_string(request.arguments).unwrap_or_default();
    let shown_name = request.exposed_name.unwrap_or(request.tool);
    format!(
        "Allow the call of `{}` on server `{}`? Arguments: {}",
        Untrusted::new(shown_name),
        Untrusted::new(request.server.as_str()),
        Untrusted::bounded(&arguments, SHOWN_ARGUMENT_CHARS),
    )
}

/// The hub's approval hook for a gateway: calls of the tools `marked`
/// selects are confirmed by the host's user (see the module docs); every
/// other call is approved at once.
///
/// ```no_run
/// # fn demo(link: mcp_gateway::HostLink) {
/// use std::sync::Arc;
/// use mcp_gateway::HostApproval;
/// let hook = HostApproval::new(link, |server, tool| server == "files" && tool == "delete");
/// let builder = mcp_hub::Hub::builder(Default::default()).approval(Arc::new(hook));
/// # }
/// ```
pub struct HostApproval {
    link: HostLink,
    marked: Arc<Marked>,
}

impl HostApproval {
    /// A hook asking through `link` for the calls `marked(server, tool)`
    /// selects (the tool's local name on its server).
    pub fn new(
        link: HostLink,
        marked: impl Fn(&str, &str) -> bool + Send + Sync + 'static,
    ) -> Self {
        Self {
            link,
            marked: Arc::new(marked),
        }
    }
}

impl fmt::Debug for HostApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostApproval").finish_non_exhaustive()
    }
}

impl ApprovalHook for HostApproval {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            let server = request.server.as_str();
            if !(self.marked)(server, request.tool) {
                return Approval::Approve;
            }
            if let Ok(round) = ROUND.try_with(Arc::clone) {
                let granted = round
                    .granted
                    .as_ref()
                    .is_some_and(|(s, t)| s == server && t == request.tool);
                if granted {
                    return Approval::Approve;
                }
                *round
                    .wanted
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Question {
                    server: server.to_owned(),
                    tool: request.tool.to_owned(),
                    message: question_text(&request),
                });
                return Approval::Deny;
            }
            match self.ask(&request).await {
                Ok(true) => Approval::Approve,
                Ok(false) => {
                    tracing::info!(server, "the host's user did not confirm a marked call");
                    Approval::Deny
                }
                Err(why) => {
                    tracing::info!(server, why, "a marked call could not be confirmed");
                    Approval::Deny
                }
            }
        })
    }
}

impl HostApproval {
    /// Asks the call's host; `Ok(accepted)`, or why it could not be asked.
    async fn ask(&self, request: &ApprovalRequest<'_>) -> Result<bool, String> {
        let server = request.server.as_str();
        let target = self
            .link
            .target(server)
            .map_err(|refused| refused.to_string())?;
        let message = question_text(request);
        let mut meta = Meta::new();
        meta.insert(SERVER_META, serde_json::Value::from(server));
        let params = ElicitParams::Form(ElicitFormParams {
            message,
            requested_schema: RequestedSchema {
                properties: SchemaProperties::default(),
                ..RequestedSchema::default()
            },
            meta: Some(meta),
            ..ElicitFormParams::default()
        });
        let (handle, related) = target;
        let answer = handle
            .request_for::<Elicit>(related, params, self.link.request_timeout())
            .await
            .map_err(|e| e.to_string())?;
        Ok(answer.action == ElicitAction::Accept)
    }
}
