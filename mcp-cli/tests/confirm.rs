//! The configuration's `confirm`: the marked tools are called only with a
//! person's yes (`mcp call --yes` here: the tests have no terminal), in
//! both forms of `mcp call`, and nothing reaches the server without it.

mod support;

use serde_json::{Value, json};
use support::*;

/// A testkit server with `delete` and `read` (both echo), recording what
/// it receives into `record`, marked with `confirm`.
fn server(sandbox: &Sandbox, confirm: Value) -> Value {
    let record = sandbox.path().join("record.jsonl");
    let script = json!({"tools": [
        {"name": "delete", "inputSchema": {"type": "object"}, "behavior": {"kind": "echo"}},
        {"name": "read", "inputSchema": {"type": "object"}, "behavior": {"kind": "echo"}}
    ]});
    json!({
        "command": testkit(),
        "args": ["--script-json", script.to_string(), "--record", record.to_str().unwrap()],
        "confirm": confirm,
    })
}

/// The `tools/call`s of `tool` the server received.
fn calls_of(sandbox: &Sandbox, tool: &str) -> usize {
    std::fs::read_to_string(sandbox.path().join("record.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == tool)
        .count()
}

fn sandbox_with(confirm: Value) -> Sandbox {
    let sandbox = Sandbox::new();
    let entry = server(&sandbox, confirm);
    sandbox.with_servers(&[("files", entry)])
}

#[test]
fn a_marked_call_without_a_yes_is_refused_before_anything_is_sent() {
    let sandbox = sandbox_with(json!(["delete"]));
    for words in [
        &["call", "files", "delete", "text=a"][..],
        &["call", "delete", "text=a"][..],
    ] {
        let (code, stdout, stderr) = sandbox.run(words);
        assert_eq!(code, 1, "{words:?}: {stdout}{stderr}");
        assert!(stderr.contains("was not confirmed"), "{stderr}");
        assert!(stderr.contains("--yes"), "{stderr}");
    }
    assert_eq!(calls_of(&sandbox, "delete"), 0);
    // An unmarked tool of the same server is called as usual.
    let (code, stdout, stderr) = sandbox.run(&["call", "files", "read", "text=fine"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("fine"), "{stdout}");
}

#[test]
fn with_yes_a_marked_call_goes_ahead_in_both_forms() {
    let sandbox = sandbox_with(json!(true));
    let (code, stdout, stderr) = sandbox.run(&["call", "files", "delete", "text=notes", "--yes"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("notes"), "{stdout}");
    let (code, stdout, stderr) = sandbox.run(&["call", "read", "text=merged", "--yes"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("merged"), "{stdout}");
    assert_eq!(calls_of(&sandbox, "delete"), 1);
    assert_eq!(calls_of(&sandbox, "read"), 1);
}

#[test]
fn the_json_error_names_the_refusal() {
    let sandbox = sandbox_with(json!(true));
    let (code, stdout, _) = sandbox.run(&["call", "files", "delete", "--json"]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(doc["error"]["kind"], "not_confirmed", "{doc}");
}

#[test]
fn trust_shows_what_is_confirmed_and_a_wrong_type_is_a_config_error() {
    let sandbox = Sandbox::new();
    let entry = server(&sandbox, json!(["delete"]));
    sandbox.write(
        ".mcp.json",
        &json!({"mcpServers": {"files": entry}}).to_string(),
    );
    let (code, stdout, stderr) = sandbox.run(&["trust", "--yes"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("asking you before every call of `delete`"),
        "{stdout}"
    );
    let mut entry = server(&sandbox, json!(true));
    entry["confirm"] = json!("yes please");
    sandbox.write(
        ".mcp.json",
        &json!({"mcpServers": {"files": entry}}).to_string(),
    );
    let (code, _, stderr) = sandbox.run(&["trust", "--yes"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("mcpServers.files.confirm"), "{stderr}");
    assert!(stderr.contains("true, false or an array"), "{stderr}");
}
