//! Follows the hub's events for the host: the served tools rebuilt when a
//! namespace is published or a server goes down or comes back
//! (`list_changed` only when they changed), the servers' log messages
//! labelled with their server, changed tool lists announced to the
//! operator (they wait for review), the audit trail in the logs.

use std::sync::Arc;

use mcp_hub::{Hub, HubEvent, HubEvents, MAX_LOG_EVENT_BYTES};
use mcp_types::notifications::{LoggingMessage, ToolListChanged};
use mcp_types::text::escape_line;
use mcp_types::{LoggingMessageParams, NotificationParams};
use serde_json::json;
use tokio::sync::watch;

use crate::HostLink;
use crate::surface::Served;

/// Runs until the hub's events end.
pub(crate) async fn run(
    hub: Arc<Hub>,
    mut events: HubEvents,
    served: Arc<Served>,
    link: HostLink,
    reviews: watch::Sender<u64>,
) {
    while let Some(event) = events.next().await {
        if matches!(
            event,
            HubEvent::SnapshotPending { .. } | HubEvent::SnapshotAdopted { .. }
        ) {
            reviews.send_modify(|n| *n += 1);
        }
        let changed = match event {
            HubEvent::Ready { server, .. } => {
                served.set_down(server.as_str(), false);
                served.refresh(&hub)
            }
            // The status of a server that died can still read `ready` when
            // its failure is reported.
            HubEvent::Failed { server, .. } => {
                served.set_down(server.as_str(), true);
                served.refresh(&hub)
            }
            // These the status says (and the events queued at start replay
            // them, when they are old news).
            HubEvent::Starting { .. }
            | HubEvent::Restarting { .. }
            | HubEvent::Stopped { .. }
            | HubEvent::Namespace { .. }
            | HubEvent::SnapshotAdopted { .. } => served.refresh(&hub),
            HubEvent::SnapshotPending {
                server,
                generation,
                diff,
            } => {
                let names = |v: &[String]| escape_line(&v.join(", ")).into_owned();
                tracing::warn!(
                    server = %server,
                    generation,
                    added = %names(&diff.added),
                    removed = %names(&diff.removed),
                    changed = %names(&diff.changed),
                    "a changed tool list waits for review; the host is served the approved one"
                );
                false
            }
            HubEvent::RepeatedFailures {
                server,
                consecutive,
            } => {
                tracing::warn!(server = %server, consecutive, "the server keeps failing");
                false
            }
            HubEvent::ServerLog {
                server,
                level,
                logger,
                data,
                bytes,
            } => {
                let hosts = link.log_listeners(level);
                if !hosts.is_empty() {
                    let label = match logger {
                        Some(logger) => format!("{server}/{logger}"),
                        None => server.to_string(),
                    };
                    let data = data.unwrap_or_else(|| {
                        json!(format!(
                            "(a message of {bytes} bytes, over {MAX_LOG_EVENT_BYTES}, was left out)"
                        ))
                    });
                    let params = LoggingMessageParams {
                        level,
                        logger: Some(label),
                        data,
                        meta: None,
                        extra: Default::default(),
                    };
                    for handle in hosts {
                        if let Err(e) = handle.notify::<LoggingMessage>(params.clone()).await {
                            tracing::debug!(error = %e, "a server's log message was not passed on");
                        }
                    }
                }
                false
            }
            event @ HubEvent::TaskStatus { .. } => {
                crate::legacy_tasks::status(&link, &served, event).await;
                false
            }
            HubEvent::Audit(record) => {
                tracing::debug!(target: "mcp_gateway::audit", ?record, "governed operation");
                false
            }
            _ => false,
        };
        if changed {
            // Every host connection that can hear it.
            for handle in link.listeners() {
                match handle
                    .notify::<ToolListChanged>(NotificationParams::default())
                    .await
                {
                    Ok(delivered) => {
                        tracing::debug!(?delivered, "a host was told the tool list changed")
                    }
                    Err(e) => tracing::debug!(error = %e, "list_changed was not sent"),
                }
            }
        }
    }
}
