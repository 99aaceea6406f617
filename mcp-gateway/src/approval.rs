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
//! [`HubError::NotApproved`]: mcp_hub::HubError::NotApproved

use std::fmt;
use std::sync::Arc;

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
        let arguments = serde_json::to_string(request.arguments).unwrap_or_default();
        let shown_name = request.exposed_name.unwrap_or(request.tool);
        let message = format!(
            "Allow the call of `{}` on server `{}`? Arguments: {}",
            Untrusted::new(shown_name),
            Untrusted::new(server),
            Untrusted::bounded(&arguments, SHOWN_ARGUMENT_CHARS),
        );
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
