//! The tools the host is served: the hub's namespace (already governed)
//! less the tools of servers that are down, with their exposed names. It
//! is rebuilt when the hub publishes a namespace or a server goes down or
//! comes back, and replaced (a new generation, and `list_changed` for the
//! host) only when what the host would see differs.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use mcp_hub::{Hub, ServerStatusKind};
use mcp_types::{ErrorObject, ListToolsResult, Tool, error_codes};

/// One version of the served tools.
#[derive(Debug, Default)]
pub(crate) struct Surface {
    /// Ours, counted from 1; a cursor names the one it pages.
    pub(crate) generation: u64,
    pub(crate) tools: Vec<Tool>,
}

/// What the host's requests and the event pump share.
#[derive(Debug, Default)]
pub(crate) struct Served {
    surface: RwLock<Arc<Surface>>,
    /// Servers the events said are down (a status can still read `ready`
    /// for a moment after a death is reported).
    down: Mutex<HashSet<String>>,
    /// The hosts' resource subscriptions.
    pub(crate) subscriptions: crate::subscribe::Subscriptions,
    /// Which host each 2025-11-25 task belongs to, for its status
    /// notifications (`legacy_tasks.rs`).
    pub(crate) watchers: crate::legacy_tasks::Watchers,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Served {
    pub(crate) fn surface(&self) -> Arc<Surface> {
        Arc::clone(&self.surface.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Marks `server` down or up (from the hub's events).
    pub(crate) fn set_down(&self, server: &str, down: bool) {
        let mut set = lock(&self.down);
        if down {
            set.insert(server.to_owned());
        } else {
            set.remove(server);
        }
    }

    /// Whether `server` is up: ready by its status and not reported down.
    pub(crate) fn is_up(&self, hub: &Hub, server: &str) -> bool {
        !lock(&self.down).contains(server)
            && hub
                .status(server)
                .is_ok_and(|s| s.kind == ServerStatusKind::Ready)
    }

    /// Rebuilds the served tools from the hub; returns whether they changed
    /// (then a new generation is in place). A tool keeps its
    /// `execution.taskSupport` only when its server takes 2025-11-25
    /// task-augmented calls (`legacy_tasks.rs`).
    pub(crate) fn refresh(&self, hub: &Hub) -> bool {
        let namespace = hub.namespace();
        let mut tasking: HashMap<String, bool> = HashMap::new();
        let tools: Vec<Tool> = namespace
            .tools()
            .iter()
            .filter(|t| self.is_up(hub, t.server().as_str()))
            .map(|t| {
                let mut tool = t.tool().clone();
                tool.name = t.name().to_owned();
                let server = t.server().as_str();
                let takes_tasks = *tasking
                    .entry(server.to_owned())
                    .or_insert_with(|| hub.offers_legacy_tasks(server));
                if !takes_tasks || t.is_helper() {
                    crate::legacy_tasks::strip_task_support(&mut tool);
                }
                tool
            })
            .collect();
        let mut current = self.surface.write().unwrap_or_else(|e| e.into_inner());
        if current.generation > 0 && current.tools == tools {
            return false;
        }
        *current = Arc::new(Surface {
            generation: current.generation + 1,
            tools,
        });
        true
    }
}

/// One page of `surface`'s tools after `cursor` (`GENERATION.OFFSET`).
pub(crate) fn page(
    surface: &Surface,
    cursor: Option<&str>,
    size: usize,
) -> Result<ListToolsResult, ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(text) => {
            let parsed = text
                .split_once('.')
                .and_then(|(g, o)| Some((g.parse::<u64>().ok()?, o.parse::<usize>().ok()?)));
            match parsed {
                Some((generation, offset))
                    if generation == surface.generation && offset <= surface.tools.len() =>
                {
                    offset
                }
                Some((_, _)) => {
                    return Err(ErrorObject::new(
                        error_codes::INVALID_PARAMS,
                        "the tool list changed since this cursor was given; list from the start",
                    ));
                }
                None => {
                    return Err(ErrorObject::new(
                        error_codes::INVALID_PARAMS,
                        "not a cursor of this server",
                    ));
                }
            }
        }
    };
    let end = (start + size).min(surface.tools.len());
    Ok(ListToolsResult {
        tools: surface.tools[start..end].to_vec(),
        next_cursor: (end < surface.tools.len()).then(|| format!("{}.{end}", surface.generation)),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::JsonSchemaDoc;

    fn surface(n: usize, generation: u64) -> Surface {
        let schema = JsonSchemaDoc::from_json(r#"{"type":"object"}"#).unwrap();
        Surface {
            generation,
            tools: (0..n)
                .map(|i| Tool::new(format!("t{i}"), schema.clone()))
                .collect(),
        }
    }

    #[test]
    fn pages_follow_their_cursor_and_a_stale_or_foreign_cursor_is_refused() {
        let s = surface(5, 3);
        let first = page(&s, None, 2).unwrap();
        assert_eq!(first.tools.len(), 2);
        assert_eq!(first.next_cursor.as_deref(), Some("3.2"));
        let last = page(&s, Some("3.4"), 2).unwrap();
        assert_eq!(last.tools[0].name, "t4");
        assert_eq!(last.next_cursor, None);
        let stale = page(&s, Some("2.2"), 2).unwrap_err();
        assert_eq!(stale.code, error_codes::INVALID_PARAMS);
        assert!(stale.message.contains("changed"));
        assert!(page(&s, Some("3.9"), 2).is_err());
        assert!(page(&s, Some("abc"), 2).is_err());
    }
}
