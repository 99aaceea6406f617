//! The tools of one listing with their validators: what the session checks
//! arguments and structured results against, and the 2026 parameter headers
//! of each tool. A validator is compiled at most once per listing (on first
//! use) and never per call. A schema that cannot be compiled (for example
//! one whose `$ref` points elsewhere: nothing is ever fetched) disables the
//! check for that tool instead of blocking it. Without the `validation`
//! feature nothing is compiled and every check is skipped.

use std::sync::OnceLock;

use mcp_types::Tool;
use mcp_types::headers::{self as param_headers, ParamHeader};
use mcp_types::text::Untrusted;
use serde_json::Value;

use crate::validation::{Check, compile};

/// The tools of one listing, with their validators.
///
/// A validator is compiled on the first call that needs it and kept for the
/// life of the listing: at most once per tool per listing, never per call,
/// and never for tools that are only listed. Without the crate's
/// `validation` feature no validator is ever compiled.
#[derive(Debug)]
pub struct ToolCatalog {
    tools: Vec<Tool>,
    /// Positions in `tools`, sorted by name, one per name (the first listed
    /// wins): a lookup by binary search without a second copy of every name.
    index: Vec<u32>,
    /// Validators, compiled on first use (boxed: most tools are never called,
    /// and a hub holds hundreds of catalogues).
    input: Vec<OnceLock<Option<Box<Check>>>>,
    output: Vec<OnceLock<Option<Box<Check>>>>,
    /// 2026 over HTTP: the `x-mcp-header` parameters of each tool (empty
    /// otherwise).
    params: Vec<Vec<ParamHeader>>,
    /// Tools left out of the listing, with why.
    rejected: Vec<(String, String)>,
}

impl ToolCatalog {
    pub(crate) fn build(mut tools: Vec<Tool>, http_headers: bool) -> Self {
        let mut params = Vec::new();
        let mut rejected = Vec::new();
        if http_headers {
            // 2026 over HTTP: a tool whose `x-mcp-header` annotations break the
            // rules is left out of the listing (the spec's MUST), with a
            // warning naming the tool and the reason.
            tools.retain(|tool| {
                match param_headers::param_headers_of(&tool.input_schema) {
                    Ok(headers) => {
                        params.push(headers);
                        true
                    }
                    Err(problems) => {
                        // The location is made of the server's property
                        // names: escaped and bounded here.
                        let why = problems
                            .iter()
                            .map(|p| format!("{p} (at {})", Untrusted::new(p.location())))
                            .collect::<Vec<_>>()
                            .join("; ");
                        tracing::warn!(tool = %Untrusted::new(&tool.name), reason = %why, "tool left out: invalid x-mcp-header");
                        rejected.push((tool.name.clone(), why));
                        false
                    }
                }
            });
        }
        tools.shrink_to_fit();
        // Bounded by `max_tools`, far below u32::MAX.
        let mut index: Vec<u32> = (0..tools.len())
            .filter_map(|i| u32::try_from(i).ok())
            .collect();
        // Stable: among equal names the first listed stays first.
        index.sort_by(|&a, &b| tools[a as usize].name.cmp(&tools[b as usize].name));
        index.dedup_by(|b, a| tools[*a as usize].name == tools[*b as usize].name);
        let input = tools.iter().map(|_| OnceLock::new()).collect();
        let output = tools.iter().map(|_| OnceLock::new()).collect();
        Self {
            tools,
            index,
            input,
            output,
            params,
            rejected,
        }
    }

    /// Tools the server listed that were left out, with the reason (2026
    /// over HTTP: invalid `x-mcp-header` annotations). The name is as the
    /// server listed it; the reason is ours, with the schema locations it
    /// quotes escaped.
    pub fn rejected(&self) -> &[(String, String)] {
        &self.rejected
    }

    /// The position of the tool called `name` (the first listed, when a
    /// server lists a name twice).
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        let found = self
            .index
            .binary_search_by(|&i| self.tools[i as usize].name.as_str().cmp(name))
            .ok()?;
        Some(self.index[found] as usize)
    }

    /// The `Mcp-Param-*` headers for a call of the tool at `at` (from
    /// [`ToolCatalog::position`]) with `arguments`.
    pub(crate) fn param_header_values(
        &self,
        at: usize,
        arguments: &Value,
    ) -> Vec<(String, String)> {
        self.params
            .get(at)
            .map(|headers| param_headers::param_header_values(headers, arguments))
            .unwrap_or_default()
    }

    /// The tools, in the server's order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// A tool by name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.position(name).map(|i| &self.tools[i])
    }

    #[cfg(test)]
    fn input_validator(&self, name: &str) -> Option<&Check> {
        self.input_validator_at(self.position(name)?)
    }

    /// The input validator of the tool at `at` (from
    /// [`ToolCatalog::position`]): a call looks its tool up once, not once
    /// per check (each step of the search reads a name from another heap
    /// block, cold on the first call of a large fleet).
    pub(crate) fn input_validator_at(&self, at: usize) -> Option<&Check> {
        self.input
            .get(at)?
            .get_or_init(|| compile(Some(&self.tools[at].input_schema)))
            .as_deref()
    }

    /// The output validator of the tool at `at`, as
    /// [`ToolCatalog::input_validator_at`].
    pub(crate) fn output_validator_at(&self, at: usize) -> Option<&Check> {
        self.output
            .get(at)?
            .get_or_init(|| compile(self.tools[at].output_schema.as_ref()))
            .as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::JsonSchemaDoc;

    fn tool(name: &str, description: &str) -> Tool {
        let mut tool = Tool::new(
            name,
            JsonSchemaDoc::from_json(r#"{"type":"object","required":["n"]}"#).unwrap(),
        );
        tool.description = Some(description.to_owned());
        tool
    }

    #[test]
    fn lookup_by_name_finds_every_tool_and_the_first_of_a_repeated_name() {
        let names = ["zeta", "alpha", "mid", "alpha", "beta", "a", "zz"];
        let tools = names
            .iter()
            .enumerate()
            .map(|(i, n)| tool(n, &format!("#{i}")))
            .collect();
        let catalog = ToolCatalog::build(tools, false);
        assert_eq!(
            catalog.tools().len(),
            names.len(),
            "the listing keeps every tool"
        );
        for (i, name) in names.iter().enumerate() {
            let found = catalog.get(name).expect("listed");
            assert_eq!(found.name, *name);
            if *name != "alpha" {
                assert_eq!(found.description.as_deref(), Some(format!("#{i}").as_str()));
            }
        }
        assert_eq!(
            catalog.get("alpha").unwrap().description.as_deref(),
            Some("#1")
        );
        assert!(catalog.get("alph").is_none());
        assert!(catalog.get("").is_none());
        assert!(catalog.get("zzz").is_none());
        // Validators are reached through the same lookup.
        #[cfg(feature = "validation")]
        {
            use crate::validation::failures;
            let validator = catalog.input_validator("mid").expect("compiled");
            assert!(failures(validator, &serde_json::json!({"n": 1})).is_empty());
            assert!(!failures(validator, &serde_json::json!({})).is_empty());
        }
        #[cfg(not(feature = "validation"))]
        assert!(catalog.input_validator("mid").is_none(), "nothing compiled");
        assert!(catalog.input_validator("nope").is_none());
        assert!(
            catalog
                .param_header_values(
                    catalog.position("mid").expect("listed"),
                    &serde_json::json!({})
                )
                .is_empty()
        );
    }
}
