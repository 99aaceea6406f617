//! Shared pieces of the HTTP peer benchmark: the tool catalogue the server
//! advertises, the `blob` payload, and the figures every Rust client reports
//! (CPU time, peak RSS, percentiles).
//!
//! The catalogue is deterministic: `echo` and `blob` (the tools the workloads
//! call) and 48 catalogue tools (6 services x 8 verbs) with input schemas of
//! the size and shape real servers send (descriptions, enums, formats, nested
//! objects, arrays, `required`, `additionalProperties: false`), annotations,
//! and an output schema on the six `get_*` tools: `tools/list` is one page of
//! 50 tools, about 59 KB of JSON.

use serde_json::{Map, Value, json};

/// The text every `echo` call sends (and gets back).
pub const ECHO_TEXT: &str = "hello from the MCP peer benchmark";

const SERVICES: [(&str, &str, &str); 6] = [
    (
        "github",
        "issue",
        "an issue in a GitHub repository the user can reach",
    ),
    (
        "jira",
        "ticket",
        "a ticket in the configured Jira Cloud site",
    ),
    (
        "slack",
        "message",
        "a message in a Slack channel the bot has joined",
    ),
    ("notion", "page", "a page in the connected Notion workspace"),
    (
        "drive",
        "file",
        "a file in Google Drive owned by or shared with the user",
    ),
    (
        "calendar",
        "event",
        "an event on one of the user's Google calendars",
    ),
];

const VERBS: [&str; 8] = [
    "search", "get", "list", "create", "update", "delete", "comment", "export",
];

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn limited(description: &str, min: u64, max: u64) -> Value {
    json!({"type": "string", "description": description, "minLength": min, "maxLength": max})
}

fn choice(description: &str, values: &[&str], default: &str) -> Value {
    json!({"type": "string", "description": description, "enum": values, "default": default})
}

fn integer(description: &str, min: u64, max: u64, default: u64) -> Value {
    json!({"type": "integer", "description": description, "minimum": min, "maximum": max, "default": default})
}

fn timestamp(description: &str) -> Value {
    json!({"type": "string", "format": "date-time", "description": description})
}

fn strings(description: &str, max_items: u64) -> Value {
    json!({"type": "array", "description": description, "items": {"type": "string", "maxLength": 100}, "maxItems": max_items})
}

fn object(properties: Vec<(&str, Value)>, required: &[&str]) -> Value {
    let mut props = Map::new();
    for (name, schema) in properties {
        props.insert(name.to_owned(), schema);
    }
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

fn identifier(noun: &str) -> Value {
    json!({
        "type": "string",
        "description": format!("Identifier of the {noun}, as the search and list tools return it."),
        "pattern": "^[A-Za-z0-9_.:-]{1,128}$"
    })
}

fn input_schema(verb: &str, noun: &str) -> Value {
    match verb {
        "search" => object(
            vec![
                (
                    "query",
                    limited(
                        "Search terms; quote a phrase, prefix a word with '-' to leave it out.",
                        1,
                        1024,
                    ),
                ),
                (
                    "limit",
                    integer("How many results to return at most.", 1, 100, 20),
                ),
                (
                    "cursor",
                    string("The cursor a previous page returned, to get the next page."),
                ),
                (
                    "sort",
                    choice(
                        "Order of the results.",
                        &["relevance", "created", "updated", "comments"],
                        "relevance",
                    ),
                ),
                (
                    "direction",
                    choice("Ascending or descending.", &["asc", "desc"], "desc"),
                ),
                (
                    "filters",
                    object(
                        vec![
                            (
                                "labels",
                                strings("Only results carrying every one of these labels.", 20),
                            ),
                            (
                                "state",
                                choice(
                                    "Which states to include.",
                                    &["open", "closed", "all"],
                                    "open",
                                ),
                            ),
                            (
                                "owner",
                                string("Login or e-mail address of the owner or assignee."),
                            ),
                            (
                                "created_after",
                                timestamp("Only results created at or after this time."),
                            ),
                            (
                                "created_before",
                                timestamp("Only results created before this time."),
                            ),
                        ],
                        &[],
                    ),
                ),
            ],
            &["query"],
        ),
        "get" => object(
            vec![
                ("id", identifier(noun)),
                (
                    "expand",
                    json!({"type": "array", "description": "Related records to include in the answer.", "uniqueItems": true,
                           "items": {"type": "string", "enum": ["comments", "attachments", "history", "watchers", "links"]}}),
                ),
                (
                    "revision",
                    json!({"type": "integer", "minimum": 1, "description": "Return this earlier revision instead of the current one."}),
                ),
            ],
            &["id"],
        ),
        "list" => object(
            vec![
                (
                    "container",
                    string("Repository, project, channel, folder or calendar to list."),
                ),
                ("page", integer("Page number, from 1.", 1, 10_000, 1)),
                ("per_page", integer("Results per page.", 1, 100, 30)),
                (
                    "updated_since",
                    timestamp("Only records changed at or after this time (ISO 8601)."),
                ),
                (
                    "direction",
                    choice("Newest first or oldest first.", &["asc", "desc"], "desc"),
                ),
            ],
            &["container"],
        ),
        "create" => object(
            vec![
                (
                    "container",
                    string("Where to create it: repository, project, channel, folder or calendar."),
                ),
                ("title", limited("A short summary, shown in lists.", 1, 256)),
                ("body", limited("The full text, in Markdown.", 0, 65_536)),
                (
                    "labels",
                    strings("Labels to attach; unknown labels are refused.", 20),
                ),
                (
                    "assignees",
                    strings("Logins or e-mail addresses to assign.", 10),
                ),
                (
                    "priority",
                    choice(
                        "How urgent it is.",
                        &["low", "medium", "high", "urgent"],
                        "medium",
                    ),
                ),
                (
                    "due",
                    json!({"type": "string", "format": "date", "description": "Due date, YYYY-MM-DD."}),
                ),
                (
                    "metadata",
                    json!({"type": "object", "description": "Free-form string pairs stored with the record.", "additionalProperties": {"type": "string"}}),
                ),
            ],
            &["container", "title"],
        ),
        "update" => object(
            vec![
                ("id", identifier(noun)),
                (
                    "changes",
                    json!({"type": "object", "minProperties": 1, "additionalProperties": false,
                           "description": "The fields to change; fields not named keep their values.",
                           "properties": {
                               "title": {"type": "string", "minLength": 1, "maxLength": 256},
                               "body": {"type": "string", "maxLength": 65536},
                               "state": {"type": "string", "enum": ["open", "in_progress", "blocked", "closed"]},
                               "labels": {"type": "array", "items": {"type": "string"}},
                               "priority": {"type": "string", "enum": ["low", "medium", "high", "urgent"]}}}),
                ),
                (
                    "if_match",
                    string("Version tag the record must still have; the update fails otherwise."),
                ),
                (
                    "notify",
                    json!({"type": "boolean", "default": true, "description": "Tell the watchers about the change."}),
                ),
            ],
            &["id", "changes"],
        ),
        "delete" => object(
            vec![
                ("id", identifier(noun)),
                ("reason", limited("Why, for the audit log.", 0, 512)),
                (
                    "force",
                    json!({"type": "boolean", "default": false, "description": "Delete even when other records refer to it."}),
                ),
            ],
            &["id"],
        ),
        "comment" => object(
            vec![
                ("id", identifier(noun)),
                (
                    "body",
                    limited(
                        "The comment, in Markdown; @-mentions notify people.",
                        1,
                        65_536,
                    ),
                ),
                (
                    "in_reply_to",
                    string("The comment this one answers, if any."),
                ),
                ("mentions", strings("People to notify explicitly.", 50)),
                (
                    "visibility",
                    choice(
                        "Who can read the comment.",
                        &["public", "internal"],
                        "public",
                    ),
                ),
            ],
            &["id", "body"],
        ),
        _ => object(
            vec![
                ("container", string("What to export from.")),
                (
                    "format",
                    choice(
                        "File format of the export.",
                        &["json", "csv", "markdown", "html"],
                        "json",
                    ),
                ),
                (
                    "fields",
                    strings("Columns to include; all of them when left out.", 100),
                ),
                (
                    "window",
                    object(
                        vec![
                            ("from", timestamp("Start of the window.")),
                            ("to", timestamp("End of the window.")),
                        ],
                        &["from"],
                    ),
                ),
                (
                    "max_rows",
                    integer("At most this many rows.", 1, 100_000, 10_000),
                ),
            ],
            &["container"],
        ),
    }
}

fn description(verb: &str, noun: &str, what: &str) -> String {
    match verb {
        "search" => format!(
            "Full-text search for {what}. Understands the service's query syntax, filters by \
             label, state and owner, and pages with a cursor. Returns at most `limit` {noun}s \
             in the order `sort` asks for."
        ),
        "get" => format!(
            "Fetch one {noun} by its identifier: {what}. Can expand related records inline."
        ),
        "list" => format!("List {what}, newest first, one page at a time."),
        "create" => format!(
            "Create {what}. The body is Markdown. Labels or assignees that do not exist are \
             refused with a validation error naming them."
        ),
        "update" => format!("Change fields of {what}. Only the fields named in `changes` change."),
        "delete" => format!("Delete {what} for good. This cannot be undone."),
        "comment" => format!("Add a comment to {what}, or answer an earlier comment."),
        _ => format!(
            "Export {what} that match a filter, in the chosen format, for analysis elsewhere."
        ),
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

fn catalogue_tool(service: &str, noun: &str, what: &str, verb: &str) -> Value {
    let title = format!("{} {} {noun}", capitalized(service), capitalized(verb));
    let read_only = matches!(verb, "search" | "get" | "list" | "export");
    let mut tool = json!({
        "name": format!("{service}_{verb}_{noun}"),
        "title": title,
        "description": description(verb, noun, what),
        "inputSchema": input_schema(verb, noun),
        "annotations": {
            "title": title,
            "readOnlyHint": read_only,
            "destructiveHint": verb == "delete",
            "idempotentHint": read_only,
            "openWorldHint": true
        }
    });
    if verb == "get" {
        tool["outputSchema"] = object(
            vec![
                ("id", json!({"type": "string"})),
                ("title", json!({"type": "string"})),
                ("state", json!({"type": "string"})),
                ("url", json!({"type": "string", "format": "uri"})),
                (
                    "created_at",
                    json!({"type": "string", "format": "date-time"}),
                ),
                (
                    "updated_at",
                    json!({"type": "string", "format": "date-time"}),
                ),
                (
                    "author",
                    json!({"type": "object", "properties": {"login": {"type": "string"}, "name": {"type": "string"}}, "required": ["login"]}),
                ),
                (
                    "labels",
                    json!({"type": "array", "items": {"type": "string"}}),
                ),
            ],
            &["id", "title", "state", "url"],
        );
    }
    tool
}

/// The 50 tools, as the objects of `tools/list`'s `tools` array.
pub fn tool_catalog() -> Vec<Value> {
    let mut tools = vec![
        json!({
            "name": "echo",
            "title": "Echo",
            "description": "Returns its `text` argument unchanged, as one text block.",
            "inputSchema": object(vec![("text", string("The text to send back."))], &["text"]),
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
        }),
        json!({
            "name": "blob",
            "title": "Blob",
            "description": "Returns `kb` KiB of ASCII text in lines of 80 characters, as one text block.",
            "inputSchema": object(vec![("kb", json!({"type": "integer", "minimum": 0, "maximum": 65536, "description": "Size of the text in KiB."}))], &["kb"]),
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
        }),
    ];
    for (service, noun, what) in SERVICES {
        for verb in VERBS {
            tools.push(catalogue_tool(service, noun, what, verb));
        }
    }
    tools
}

/// Exactly `kb * 1024` bytes of ASCII: lines of 79 characters and a newline
/// (so every JSON encoder has escapes to write, as with real file contents).
pub fn blob_text(kb: usize) -> String {
    const LINE: &str =
        "Sphinx of black quartz, judge my vow; the five boxing wizards jump quickly. 0123";
    let n = kb * 1024;
    let mut out = String::with_capacity(n);
    while out.len() < n {
        let take = (n - out.len()).min(80);
        if take == 80 {
            out.push_str(&LINE[..79]);
            out.push('\n');
        } else {
            out.push_str(&LINE[..take]);
        }
    }
    out
}

/// This process's CPU time (user + system), in seconds.
pub fn cpu_time_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer it is given,
    // which points at a live local.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Peak resident set size (VmHWM), in KiB.
pub fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The `p`th percentile (nearest rank) of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Sorts the latencies and records `p50_us` and `p99_us`.
pub fn record_latencies(out: &mut Map<String, Value>, lat: &mut [f64]) {
    lat.sort_by(f64::total_cmp);
    out.insert("p50_us".into(), percentile(lat, 50.0).into());
    out.insert("p99_us".into(), percentile(lat, 99.0).into());
}

/// An environment variable parsed, or the default.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_fifty_tools_of_about_55_kb() {
        let tools = tool_catalog();
        assert_eq!(tools.len(), 50);
        let size = serde_json::to_string(&json!({"tools": tools}))
            .unwrap()
            .len();
        assert!((50_000..60_000).contains(&size), "{size} bytes");
    }

    #[test]
    fn blob_is_exact() {
        assert_eq!(blob_text(1024).len(), 1024 * 1024);
        assert_eq!(blob_text(1).lines().next().unwrap().len(), 79);
    }
}
