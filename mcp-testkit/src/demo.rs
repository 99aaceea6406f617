//! Ready-made scripts for the CLI's `mcp demo`: three servers that all
//! expose a `search` tool, one per protocol era mix, with canned data.
//!
//! | demo | eras | tools |
//! |---|---|---|
//! | [`notes`] | dual (all five versions) | `search`, `create` |
//! | [`files`] | legacy only (2025-06-18 and older) | `read`, `search` |
//! | [`github`] | 2026-07-28 only | `list_issues`, `open_pr`, `search` |
//!
//! And one for the library's examples: [`weather`] (dual-era; `forecast`
//! with progress, `summarize` asking the client's model, prompt `plan_trip`).

use serde_json::{Map, Value, json};

use crate::behavior::Behavior;
use crate::script::Script;

/// The servers of `mcp demo`, all exposing `search`. [`by_name`] and
/// `mcp-testkit-server --demo` also know `weather`.
pub const DEMO_NAMES: [&str; 3] = ["notes", "files", "github"];

/// The demo script called `name`, if there is one.
pub fn by_name(name: &str) -> Option<Script> {
    match name {
        "notes" => Some(notes()),
        "files" => Some(files()),
        "github" => Some(github()),
        "weather" => Some(weather()),
        _ => None,
    }
}

/// A weather server for the library's examples, dual-era: `forecast {city}`
/// (three progress notifications when asked for progress), `summarize`
/// (asks the client's model through sampling and answers with its reply),
/// and the prompt `plan_trip {city}`.
pub fn weather() -> Script {
    let city = json!({
        "type": "object",
        "properties": {"city": {"type": "string", "description": "A city name"}},
        "required": ["city"],
    });
    Script::dual()
        .server_info("demo-weather", "1.0.0")
        .tool_json(
            json!({
                "name": "forecast",
                "description": "Today's forecast for a city.",
                "inputSchema": city,
                "annotations": {"readOnlyHint": true},
            }),
            Behavior::TextWithProgress {
                text: "Sunny in {city}, 21 °C.".into(),
                steps: 3,
            },
        )
        .tool_json(
            json!({
                "name": "summarize",
                "description": "Summarises today's weather with the client's own model.",
                "inputSchema": {"type": "object"},
            }),
            Behavior::AskClient {
                method: "sampling/createMessage".into(),
                params: json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise: sunny, 21 °C."}}],
                    "maxTokens": 50,
                }),
            },
        )
        .prompt(
            crate::specs::PromptSpec::new("plan_trip")
                .argument("city", true)
                .message("user", "Plan a day out in {city}."),
        )
}

/// A personal notes server, dual-era.
pub fn notes() -> Script {
    let notes = vec![
        json!({"id": "n1", "title": "Release checklist", "text": "Tag the release, publish crates, announce in #releases.", "tags": "work"}),
        json!({"id": "n2", "title": "MCP reading list", "text": "Lifecycle, versioning, server/discover and multi round-trip requests.", "tags": "mcp"}),
        json!({"id": "n3", "title": "Groceries", "text": "Coffee beans, oat milk, lemons.", "tags": "home"}),
        json!({"id": "n4", "title": "Search ideas", "text": "Rank notes by title match before body match.", "tags": "work"}),
    ];
    Script::dual()
        .server_info("demo-notes", "1.0.0")
        .instructions("Personal notes. Use `search` before `create` to avoid duplicates.")
        .tool_json(
            json!({
                "name": "search",
                "title": "Search notes",
                "description": "Full-text search over the user's notes. Returns matching notes with their ids.",
                "inputSchema": search_schema("Words to look for in note titles and bodies"),
                "annotations": {"readOnlyHint": true, "openWorldHint": false},
            }),
            Behavior::Search { items: notes },
        )
        .tool_json(
            json!({
                "name": "create",
                "title": "Create note",
                "description": "Creates a note with a title and body text.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string", "description": "Title of the note"},
                        "text": {"type": "string", "description": "Body of the note"},
                    },
                    "required": ["title", "text"],
                },
                "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false},
            }),
            Behavior::Text {
                text: "Created note \"{title}\" (id n5).".into(),
            },
        )
}

/// A read-only project files server, legacy-only (like many servers today).
pub fn files() -> Script {
    let mut contents = Map::new();
    contents.insert(
        "README.md".into(),
        "# demo-project\n\nA tiny project used by the mcp demo.\n".into(),
    );
    contents.insert(
        "src/main.rs".into(),
        "fn main() {\n    println!(\"hello from the demo\");\n}\n".into(),
    );
    contents.insert(
        "Cargo.toml".into(),
        "[package]\nname = \"demo-project\"\nversion = \"0.1.0\"\nedition = \"2024\"\n".into(),
    );
    let index = vec![
        json!({"path": "README.md", "snippet": "A tiny project used by the mcp demo."}),
        json!({"path": "src/main.rs", "snippet": "println!(\"hello from the demo\");"}),
        json!({"path": "Cargo.toml", "snippet": "name = \"demo-project\""}),
    ];
    Script::legacy()
        .versions(["2024-11-05", "2025-03-26", "2025-06-18"])
        .server_info("demo-files", "0.4.2")
        .tool_json(
            json!({
                "name": "read",
                "description": "Reads a text file of the project, by path relative to the project root.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"path": {"type": "string", "description": "Relative path, e.g. src/main.rs"}},
                    "required": ["path"],
                },
                "annotations": {"readOnlyHint": true},
            }),
            Behavior::Lookup {
                key: "path".into(),
                entries: contents,
            },
        )
        .tool_json(
            json!({
                "name": "search",
                "description": "Searches file names and contents of the project.",
                "inputSchema": search_schema("Text to look for in paths and file contents"),
                "annotations": {"readOnlyHint": true},
            }),
            Behavior::Search { items: index },
        )
}

/// A GitHub-like server, 2026-07-28 only.
pub fn github() -> Script {
    let issues = vec![
        json!({"number": 42, "title": "search returns stale results", "state": "open", "labels": "bug"}),
        json!({"number": 57, "title": "Support the 2026-07-28 protocol", "state": "open", "labels": "enhancement"}),
        json!({"number": 12, "title": "Document the config file", "state": "closed", "labels": "docs"}),
    ];
    let search_items = vec![
        json!({"title": "example/demo-project#42", "snippet": "search returns stale results (open issue)"}),
        json!({"title": "example/demo-project#57", "snippet": "Support the 2026-07-28 protocol (open issue)"}),
        json!({"title": "example/demo-project: src/search.rs", "snippet": "fn search(index: &Index, query: &str)"}),
    ];
    Script::modern()
        .server_info("demo-github", "2.1.0")
        .instructions("Repository example/demo-project. Issues and pull requests are canned.")
        .tool_json(
            json!({
                "name": "list_issues",
                "title": "List issues",
                "description": "Lists issues of the repository.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"state": {"type": "string", "enum": ["open", "closed", "all"], "default": "open"}},
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {"issues": {"type": "array", "items": {"type": "object"}}},
                    "required": ["issues"],
                },
                "annotations": {"readOnlyHint": true, "openWorldHint": true},
            }),
            Behavior::Structured {
                value: json!({"issues": issues}),
            },
        )
        .tool_json(
            json!({
                "name": "open_pr",
                "title": "Open pull request",
                "description": "Opens a pull request from a branch into main.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string"},
                        "branch": {"type": "string", "description": "Source branch"},
                        "body": {"type": "string"},
                    },
                    "required": ["title", "branch"],
                },
                "annotations": {"readOnlyHint": false, "destructiveHint": false, "openWorldHint": true},
            }),
            Behavior::Text {
                text: "Opened pull request #58 \"{title}\" from {branch} into main.".into(),
            },
        )
        .tool_json(
            json!({
                "name": "search",
                "title": "Search GitHub",
                "description": "Searches issues, pull requests and code of the repository.",
                "inputSchema": search_schema("GitHub search query"),
                "annotations": {"readOnlyHint": true, "openWorldHint": true},
            }),
            Behavior::Search {
                items: search_items,
            },
        )
}

fn search_schema(query_description: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": query_description},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Most results to return"},
        },
        "required": ["query"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_demo_is_valid_and_exposes_search() {
        for name in DEMO_NAMES {
            let script = by_name(name).unwrap();
            script.validate().unwrap();
            assert!(
                script.visible_tool("search", 0).is_some(),
                "{name} has no search"
            );
        }
        by_name("weather").unwrap().validate().unwrap();
        assert!(by_name("nope").is_none());
    }
}
