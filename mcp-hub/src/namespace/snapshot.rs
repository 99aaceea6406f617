//! Immutable tool listings, one per server and discovery.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_session::ToolCatalog;
use mcp_types::Tool;

use crate::namespace::name::ServerName;

/// One server's tools as one discovery saw them (all pages, bounded by the
/// session's page and tool limits). Never changes; a new listing is a new
/// snapshot with a higher generation.
#[derive(Debug)]
pub struct ToolSnapshot {
    server: ServerName,
    generation: u64,
    tools: Tools,
}

/// Where a snapshot's tools live.
#[derive(Debug)]
enum Tools {
    /// The session's own catalogue, shared rather than copied (the usual
    /// case: every name listed once). A hub of many servers would otherwise
    /// hold every tool definition twice.
    Shared(Arc<ToolCatalog>),
    /// A copy without the later duplicates of a name.
    Own {
        tools: Vec<Tool>,
        index: HashMap<String, usize>,
    },
}

impl ToolSnapshot {
    /// A snapshot of `tools`. A name the server listed twice keeps its first
    /// definition (a server must not do that; the first is what a call by
    /// that name most plausibly means).
    pub(crate) fn new(server: ServerName, generation: u64, tools: &[Tool]) -> Self {
        let mut index = HashMap::with_capacity(tools.len());
        let mut kept = Vec::with_capacity(tools.len());
        for tool in tools {
            if !index.contains_key(&tool.name) {
                index.insert(tool.name.clone(), kept.len());
                kept.push(tool.clone());
            }
        }
        Self {
            server,
            generation,
            tools: Tools::Own { tools: kept, index },
        }
    }

    /// A snapshot of a session's catalogue, shared when no name is listed
    /// twice (the catalogue finds the first definition of a name); a name
    /// listed twice is a warning naming it.
    pub(crate) fn from_catalog(
        server: ServerName,
        generation: u64,
        catalog: Arc<ToolCatalog>,
    ) -> Self {
        let unique = catalog.tools().iter().all(|tool| {
            catalog
                .get(&tool.name)
                .is_some_and(|first| std::ptr::eq(first, tool))
        });
        if unique {
            Self {
                server,
                generation,
                tools: Tools::Shared(catalog),
            }
        } else {
            let snapshot = Self::new(server, generation, catalog.tools());
            // The server's mistake, and it hides a definition: say which
            // names (escaped, a few), so its author can find it.
            let mut listed: HashMap<&str, usize> = HashMap::new();
            for tool in catalog.tools() {
                *listed.entry(tool.name.as_str()).or_default() += 1;
            }
            let twice: Vec<String> = snapshot
                .tools()
                .iter()
                .filter(|kept| listed.get(kept.name.as_str()).is_some_and(|&n| n > 1))
                .take(5)
                .map(|t| format!("`{}`", mcp_types::text::Untrusted::new(&t.name)))
                .collect();
            tracing::warn!(
                tools = %twice.join(", "),
                "the server listed a tool name more than once; only its first definition is used"
            );
            snapshot
        }
    }

    /// The server.
    pub fn server(&self) -> &ServerName {
        &self.server
    }

    /// Counts the server's listings: each discovery takes the next number.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The tools, in the server's order.
    pub fn tools(&self) -> &[Tool] {
        match &self.tools {
            Tools::Shared(catalog) => catalog.tools(),
            Tools::Own { tools, .. } => tools,
        }
    }

    /// A tool by its local name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        match &self.tools {
            Tools::Shared(catalog) => catalog.get(name),
            Tools::Own { tools, index } => index.get(name).map(|&i| &tools[i]),
        }
    }

    /// What changed from `older` to this snapshot.
    pub fn diff(&self, older: Option<&ToolSnapshot>) -> SnapshotDiff {
        let mut diff = SnapshotDiff::default();
        let Some(older) = older else {
            diff.added = self.tools().iter().map(|t| t.name.clone()).collect();
            return diff;
        };
        for tool in self.tools() {
            match older.get(&tool.name) {
                None => diff.added.push(tool.name.clone()),
                Some(old) if old != tool => diff.changed.push(tool.name.clone()),
                Some(_) => {}
            }
        }
        for tool in older.tools() {
            if self.get(&tool.name).is_none() {
                diff.removed.push(tool.name.clone());
            }
        }
        diff
    }

    /// Whether both list the same tools with the same definitions.
    pub(crate) fn same_tools(&self, other: &ToolSnapshot) -> bool {
        self.tools() == other.tools()
    }
}

/// Tool names added, removed and changed between two snapshots.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotDiff {
    /// New tools.
    pub added: Vec<String>,
    /// Tools gone.
    pub removed: Vec<String>,
    /// Tools whose definition changed (description, schema, annotations …).
    pub changed: Vec<String>,
}

impl SnapshotDiff {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}
