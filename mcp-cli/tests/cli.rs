//! The `mcp` binary end to end: every command, exit code and configuration
//! error, against the built-in demo servers (`mcp __serve-demo NAME`), the
//! testkit's stdio server (`mcp-testkit-server --script-json …`) and its
//! in-process HTTP server. Human and `--json` output are snapshots (timings,
//! versions and paths redacted).

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

fn schema_object() -> Value {
    json!({"type": "object"})
}

/// A server with resources, templates, prompts and tools that misbehave.
fn rich_script() -> Value {
    json!({
        "server_info": {"name": "rich", "version": "3.1.4"},
        "instructions": "Rich test server.",
        "tools": [
            {"name": "add", "description": "Adds two numbers.",
             "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
             "behavior": {"kind": "add"}},
            {"name": "echo", "description": "Echoes text.",
             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
             "behavior": {"kind": "echo"}},
            {"name": "fails", "description": "Reports a tool error.", "inputSchema": schema_object(),
             "behavior": {"kind": "tool_error", "text": "disk full"}},
            {"name": "refuses", "description": "Answers with a JSON-RPC error.", "inputSchema": schema_object(),
             "behavior": {"kind": "error", "code": -32603, "message": "the database is locked"}},
            {"name": "hangs", "description": "Never answers.", "inputSchema": schema_object(),
             "behavior": {"kind": "hang"}},
            {"name": "crashes", "description": "Exits.", "inputSchema": schema_object(),
             "behavior": {"kind": "crash", "code": 3}},
            {"name": "slow", "description": "Reports progress.", "inputSchema": schema_object(),
             "behavior": {"kind": "sleep", "ms": 200, "progress_steps": 2}},
            {"name": "shape", "description": "Structured only.", "inputSchema": schema_object(),
             "behavior": {"kind": "structured", "value": {"n": 1}}}
        ],
        "resources": [
            {"uri": "mem://readme", "name": "readme", "mimeType": "text/plain", "text": "hello from a resource"}
        ],
        "resource_templates": [
            {"uriTemplate": "mem://notes/{id}", "name": "note", "text": "note {id}"}
        ],
        "prompts": [
            {"name": "greet", "description": "Greets someone.",
             "arguments": [{"name": "who", "required": true}, {"name": "mood"}],
             "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello to {who}."}}]}
        ]
    })
}

// ---------------------------------------------------------------- demo

#[test]
fn demo_walks_through_the_main_job_quickly() {
    let sandbox = Sandbox::new();
    let began = Instant::now();
    let (code, stdout, stderr) = sandbox.run(&["demo"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "demo took {:?}",
        began.elapsed()
    );
    for expected in [
        "notes   ready   2026-07-28 (modern)",
        "files   ready   2025-06-18 (legacy)",
        "github  ready   2026-07-28 (modern)",
        "notes/search, files/search, github/search",
        "refused: `search` is ambiguous",
        "routed to server github, tool `search`",
        "files/search failed: server `files` is not available",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in\n{stdout}"
        );
    }
    insta::assert_snapshot!("demo", stdout);
}

// ---------------------------------------------------------------- inspect

#[test]
fn inspect_shows_negotiation_info_and_every_catalogue() {
    let sandbox =
        Sandbox::new().with_servers(&[("rich", script(rich_script())), ("files", demo("files"))]);
    let (code, stdout, stderr) = sandbox.run(&["inspect", "rich"]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("inspect_rich", stdout);

    // A legacy server without resources or prompts: empty catalogues, no error.
    let (code, stdout, _) = sandbox.run(&["inspect", "files", "--json"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["era"], "legacy");
    assert_eq!(doc["protocolVersion"], "2025-06-18");
    assert_eq!(doc["resources"]["items"], json!([]));
    assert_eq!(doc["prompts"]["items"], json!([]));
    insta::assert_json_snapshot!("inspect_files_json", doc);
}

#[test]
fn inspect_pages_with_cursors() {
    let mut rich = rich_script();
    rich["page_size"] = json!(3);
    let sandbox = Sandbox::new().with_servers(&[("rich", script(rich))]);
    let (code, stdout, _) = sandbox.run(&["inspect", "rich", "--catalog", "tools"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Tools (3 on this page)"), "{stdout}");
    assert!(
        stdout.contains("next page: mcp inspect rich --catalog tools --cursor page-1"),
        "{stdout}"
    );
    assert!(!stdout.contains("Resources"), "{stdout}");
    let (code, stdout, _) = sandbox.run(&[
        "inspect",
        "rich",
        "--catalog",
        "tools",
        "--cursor",
        "page-1",
        "--json",
    ]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = doc["tools"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["refuses", "hangs", "crashes"]);
    assert_eq!(doc["tools"]["nextCursor"], "page-2");
    assert!(doc.get("resources").is_none());
}

#[test]
fn inspect_a_one_off_stdio_server_without_configuration() {
    let sandbox = Sandbox::new();
    let (code, stdout, stderr) = sandbox.run(&[
        "inspect",
        "--json",
        "--catalog",
        "tools",
        "--",
        MCP,
        "__serve-demo",
        "github",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["serverInfo"]["name"], "demo-github");
    assert_eq!(doc["tools"]["items"].as_array().unwrap().len(), 3);
}

// ---------------------------------------------------------------- call

#[test]
fn call_coerces_values_by_the_input_schema() {
    let sandbox = Sandbox::new().with_servers(&[("rich", script(rich_script()))]);
    let (code, stdout, stderr) = sandbox.run(&["call", "rich", "add", "a=2", "b=3.5"]);
    assert_eq!((code, stdout.as_str()), (0, "5.5\n"), "{stderr}");
    // `echo` takes a string: `42` stays text.
    let (code, stdout, _) = sandbox.run(&["call", "rich", "echo", "text=42"]);
    assert_eq!((code, stdout.as_str()), (0, "42\n"));
    let (code, stdout, _) = sandbox.run(&[
        "call",
        "rich",
        "add",
        "--args",
        r#"{"a": 1}"#,
        "b=1",
        "--json",
    ]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    insta::assert_json_snapshot!("call_add_json", doc);
}

#[test]
fn call_refuses_bad_arguments_before_sending() {
    let sandbox = Sandbox::new().with_servers(&[("rich", script(rich_script()))]);
    let (code, _, stderr) = sandbox.run(&["call", "rich", "add", "a=two", "b=1"]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "mcp: error: argument `a`: the tool's inputSchema expects a number\n"
    );
    let (code, _, stderr) = sandbox.run(&["call", "rich", "add", "a=1"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("\"b\" is a required property"), "{stderr}");
    let (code, _, stderr) = sandbox.run(&["call", "rich", "add", "a"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("expected KEY=VALUE or KEY:=JSON"),
        "{stderr}"
    );
    let (code, _, stderr) = sandbox.run(&["call", "rich", "nope"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("no tool named `nope`"), "{stderr}");
    let (code, _, _) = sandbox.run(&["call", "rich"]);
    assert_eq!(code, 1);
}

#[test]
fn call_exit_codes_for_tool_errors_protocol_errors_time_outs_and_deaths() {
    let sandbox = Sandbox::new().with_servers(&[("rich", script(rich_script()))]);
    let (code, stdout, stderr) = sandbox.run(&["call", "rich", "fails"]);
    assert_eq!(code, 5);
    assert_eq!(stdout, "");
    insta::assert_snapshot!("call_tool_error_stderr", stderr);
    let (code, stdout, _) = sandbox.run(&["call", "rich", "fails", "--json"]);
    assert_eq!(code, 5);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["isError"], true);

    let (code, _, stderr) = sandbox.run(&["call", "rich", "refuses"]);
    assert_eq!(code, 4);
    insta::assert_snapshot!("call_server_error_stderr", stderr);
    let (code, stdout, _) = sandbox.run(&["call", "rich", "refuses", "--json"]);
    assert_eq!(code, 4);
    insta::assert_json_snapshot!(
        "call_server_error_json",
        serde_json::from_str::<Value>(&stdout).unwrap()
    );

    let began = Instant::now();
    let (code, _, stderr) = sandbox.run(&["call", "rich", "hangs", "--timeout", "1"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("got no answer within"), "{stderr}");
    assert!(
        stderr.contains("hint: a tool that takes longer needs `--timeout SECONDS`"),
        "{stderr}"
    );
    assert!(began.elapsed() < Duration::from_secs(20));

    let (code, _, stderr) = sandbox.run(&["call", "rich", "crashes"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("died while `tools/call` was in flight"),
        "{stderr}"
    );
}

#[test]
fn call_shows_progress_on_stderr_and_structured_results() {
    let sandbox = Sandbox::new().with_servers(&[("rich", script(rich_script()))]);
    let (code, stdout, stderr) = sandbox.run(&["call", "rich", "slow"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("progress: 1/2 (50%)"), "{stderr}");
    assert!(stderr.contains("progress: 2/2 (100%)"), "{stderr}");
    assert!(!stdout.contains("progress"), "{stdout}");
    let (code, stdout, _) = sandbox.run(&["call", "rich", "shape"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("\"n\""), "{stdout}");
}

#[test]
fn a_server_that_cannot_start_is_exit_2_with_its_reason() {
    let sandbox = Sandbox::new().with_servers(&[
        ("missing", json!({"command": "/nonexistent/mcp-server"})),
        ("quits", script(json!({"exit_after_initialize": true, "versions": ["2025-06-18"], "on_probe": {"kind": "silence"}}))),
    ]);
    let (code, stdout, stderr) = sandbox.run(&["inspect", "missing"]);
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    insta::assert_snapshot!("start_failure_stderr", stderr);
    let (code, stdout, _) = sandbox.run(&["inspect", "missing", "--json"]);
    assert_eq!(code, 2);
    insta::assert_json_snapshot!(
        "start_failure_json",
        serde_json::from_str::<Value>(&stdout).unwrap()
    );
    let (code, _, stderr) = sandbox.run(&["call", "quits", "echo", "text=x"]);
    assert_eq!(code, 2, "{stderr}");
}

/// Runs `args` (a `--json` command that fails) and returns its exit code and
/// the `error` object it printed.
fn json_error(sandbox: &Sandbox, args: &[&str]) -> (i32, Value) {
    let (code, stdout, stderr) = sandbox.run(args);
    let doc: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e}): {stdout}\n{stderr}"));
    assert_eq!(doc["error"]["exitCode"], code, "{args:?}: {doc}");
    (code, doc["error"].clone())
}

#[test]
fn errors_name_their_cause_in_json_and_the_exit_code_follows_it() {
    let mut allowed = script(rich_script());
    allowed["allow"] = json!({"tools": ["add"]});
    let sandbox = Sandbox::new().with_servers(&[
        ("rich", script(rich_script())),
        ("allowed", allowed),
        ("missing", json!({"command": "/nonexistent/mcp-server"})),
    ]);
    let cases: &[(&[&str], i32, &str)] = &[
        // The user's request: refused before anything is sent.
        (&["call", "rich", "nope", "--json"], 1, "input"),
        (
            &["call", "rich", "add", "a=two", "b=1", "--json"],
            1,
            "input",
        ),
        (&["call", "rich", "add", "a=1", "--json"], 1, "input"),
        // The configuration's allow-list.
        (
            &["call", "allowed", "echo", "text=x", "--json"],
            1,
            "policy",
        ),
        // A server program that does not exist could not be started.
        (&["inspect", "missing", "--json"], 2, "connection"),
        (&["call", "missing", "echo", "--json"], 2, "connection"),
        // A server that dies under the call.
        (&["call", "rich", "crashes", "--json"], 2, "connection"),
        // A server that answers with a JSON-RPC error, or not in time.
        (&["call", "rich", "refuses", "--json"], 4, "server"),
        (
            &["call", "rich", "hangs", "--timeout", "1", "--json"],
            4,
            "server",
        ),
    ];
    for &(args, code, cause) in cases {
        let (got, error) = json_error(&sandbox, args);
        assert_eq!(
            (got, error["cause"].as_str()),
            (code, Some(cause)),
            "{args:?}: {error}"
        );
    }
}

#[test]
fn allow_lists_and_content_limits_from_the_configuration() {
    let mut limited = script(json!({"tools": [
        {"name": "big", "inputSchema": schema_object(), "behavior": {"kind": "blob", "kb": 8}},
        {"name": "echo", "inputSchema": schema_object(), "behavior": {"kind": "echo"}}
    ]}));
    limited["max_content_bytes"] = json!(2048);
    let mut allowed = script(rich_script());
    allowed["allow"] = json!({"tools": ["add"], "prompts": []});
    let sandbox = Sandbox::new().with_servers(&[("limited", limited), ("allowed", allowed)]);
    let (code, _, stderr) = sandbox.run(&["call", "limited", "big"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("over its limit of 2048 bytes"), "{stderr}");
    let (code, stdout, _) = sandbox.run(&["inspect", "allowed", "--json"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["tools"]["items"].as_array().unwrap().len(), 1);
    assert_eq!(doc["prompts"]["items"], json!([]));
    let (code, _, stderr) = sandbox.run(&["call", "allowed", "echo", "text=x"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("denied"), "{stderr}");
}

#[test]
fn verbose_logs_go_to_stderr_and_stdout_stays_json() {
    let sandbox = Sandbox::new().with_servers(&[("notes", demo("notes"))]);
    let (code, stdout, stderr) = sandbox.run(&["-vv", "inspect", "notes", "--json"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).expect("stdout is one JSON document");
    assert_eq!(doc["server"], "notes");
    assert!(
        stderr.contains("DEBUG") || stderr.contains("INFO"),
        "{stderr}"
    );
    let (_, _, quiet) = sandbox.run(&["inspect", "notes", "--json"]);
    assert_eq!(quiet, "");
}

#[test]
fn a_warning_and_a_stderr_line_name_their_server() {
    // `odd` answers first with an id that was never sent (a protocol
    // violation the session warns about), then properly; `loud` writes a
    // line to stderr before it serves. With two servers, only the span
    // says which one.
    let odd = json!({"tools": [{"name": "odd", "inputSchema": schema_object(),
                                "behavior": {"kind": "wrong_id"}}]});
    let loud = json!({
        "command": "/bin/sh",
        "args": ["-c", "echo loud-line >&2; exec \"$0\" --script-json \"$1\"",
                 testkit(), rich_script().to_string()]
    });
    let sandbox = Sandbox::new().with_servers(&[("quiet", script(odd)), ("loud", loud)]);
    let (code, stdout, stderr) = sandbox.run(&["call", "quiet", "odd"]);
    assert_eq!((code, stdout.as_str()), (0, "ok\n"), "{stderr}");
    let warning = stderr
        .lines()
        .find(|l| l.contains("WARN") && l.contains("UnknownResponseId"))
        .unwrap_or_else(|| panic!("no warning: {stderr}"));
    assert!(warning.contains("mcp.server{server=quiet}"), "{warning}");

    let (code, _, stderr) = sandbox.run(&["-v", "tools"]);
    assert_eq!(code, 0, "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("loud-line"))
        .unwrap_or_else(|| panic!("no stderr line: {stderr}"));
    assert!(line.contains("mcp.server{server=loud}"), "{line}");
}

/// A server that lists one name twice (its mistake): the first definition
/// is used, and a warning names the tool, escaped, and the server.
#[test]
fn a_tool_name_listed_twice_is_a_warning_naming_it() {
    // A minimal stdio server in Python: initialize, a listing with `echo`
    // twice (the second hidden behind the first), and a call.
    let server = r#"
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    tool = lambda d: {"name": "ec\u202eho", "description": d, "inputSchema": {"type": "object"}}
    result = {
        "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "twice", "version": "1"}},
        "tools/list": {"tools": [tool("first"), tool("second")]},
        "tools/call": {"content": [{"type": "text", "text": "called"}]},
    }.get(m["method"], {})
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}), flush=True)
"#;
    let sandbox = Sandbox::new().with_servers(&[(
        "twice",
        json!({"command": "python3", "args": ["-c", server]}),
    )]);
    let (code, stdout, stderr) = sandbox.run(&["tools"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("first"), "{stdout}");
    assert!(!stdout.contains("second"), "{stdout}");
    let warning = stderr
        .lines()
        .find(|l| l.contains("WARN") && l.contains("more than once"))
        .unwrap_or_else(|| panic!("no warning: {stderr}"));
    assert!(warning.contains("mcp.server{server=twice}"), "{warning}");
    assert!(warning.contains(r"ec\u{202e}ho"), "{warning}");
    assert!(!warning.contains('\u{202e}'), "{warning}");
}

#[test]
fn a_server_that_logs_to_stdout_and_dies_is_shown_with_that_line() {
    let sandbox = Sandbox::new().with_servers(&[(
        "chatty",
        json!({"command": "/bin/sh",
               "args": ["-c", "echo 'Server listening \u{1b}[32mOK'; exit 1"]}),
    )]);
    let (code, _, stderr) = sandbox.run(&["call", "chatty", "x"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "  it sent a line that is not JSON-RPC (over stdio, only protocol messages may go to stdout; logs belong on stderr):\n  | Server listening \\u{1b}[32mOK\n"
        ),
        "{stderr}"
    );
    let (_, stdout, _) = sandbox.run(&["call", "chatty", "x", "--json"]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        doc["error"]["unparsedLine"],
        "Server listening \u{1b}[32mOK"
    );
    let (code, _, stderr) = sandbox.run(&["tools"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("  | Server listening"), "{stderr}");
}

// ---------------------------------------------------------------- read, prompt

#[test]
fn read_a_resource_and_a_templated_one() {
    let sandbox =
        Sandbox::new().with_servers(&[("rich", script(rich_script())), ("files", demo("files"))]);
    let (code, stdout, stderr) = sandbox.run(&["read", "rich", "mem://readme"]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "hello from a resource\n"),
        "{stderr}"
    );
    let (code, stdout, _) = sandbox.run(&["read", "rich", "mem://notes/7", "--json"]);
    assert_eq!(code, 0);
    insta::assert_json_snapshot!(
        "read_template_json",
        serde_json::from_str::<Value>(&stdout).unwrap()
    );
    let (code, _, stderr) = sandbox.run(&["read", "rich", "mem://nothing"]);
    assert_eq!(code, 4, "{stderr}");
    // A server without resources: the read fails explicitly.
    let (code, _, stderr) = sandbox.run(&["read", "files", "file:///README.md"]);
    assert_eq!(code, 4);
    assert!(
        stderr.contains("does not support `resources/read`"),
        "{stderr}"
    );
}

#[test]
fn prompt_with_arguments() {
    let sandbox = Sandbox::new().with_servers(&[("rich", script(rich_script()))]);
    let (code, stdout, stderr) = sandbox.run(&["prompt", "rich", "greet", "--arg", "who=Ada"]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("prompt_human", stdout);
    // Arguments as words, as `mcp call` takes a tool's: the same prompt.
    let (code, words, stderr) = sandbox.run(&["prompt", "rich", "greet", "who=Ada"]);
    assert_eq!((code, words.as_str()), (0, stdout.as_str()), "{stderr}");
    let (code, _, stderr) = sandbox.run(&["prompt", "rich", "greet", "who=Ada", "--arg", "who=Bo"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("argument `who`: given more than once"),
        "{stderr}"
    );
    let (code, stdout, _) = sandbox.run(&["prompt", "rich", "greet", "--arg", "who=Ada", "--json"]);
    assert_eq!(code, 0);
    insta::assert_json_snapshot!(
        "prompt_json",
        serde_json::from_str::<Value>(&stdout).unwrap()
    );
    // A required argument missing is refused before anything is sent.
    let (code, _, stderr) = sandbox.run(&["prompt", "rich", "greet"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("argument `who`: the prompt requires it"),
        "{stderr}"
    );
    let (code, _, stderr) = sandbox.run(&["prompt", "rich", "greet", "--arg", "who"]);
    assert_eq!(code, 1, "{stderr}");
    let (code, _, stderr) = sandbox.run(&["prompt", "rich", "greet", "who"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.ends_with("argument `who`: expected KEY=VALUE\n"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------- tools

fn demo_servers() -> Vec<(&'static str, Value)> {
    vec![
        ("notes", demo("notes")),
        ("files", demo("files")),
        ("github", demo("github")),
    ]
}

#[test]
fn tools_merges_the_namespace_of_every_server() {
    let sandbox = Sandbox::new().with_servers(&demo_servers());
    let (code, stdout, stderr) = sandbox.run(&["tools"]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("tools_table", stdout);
    let (code, stdout, _) = sandbox.run(&["tools", "--format", "json"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["ambiguous"][0]["name"], "search");
    insta::assert_json_snapshot!("tools_json", doc);
}

#[test]
fn tools_exports_provider_formats_with_safe_names() {
    let sandbox = Sandbox::new().with_servers(&demo_servers());
    let (code, stdout, _) = sandbox.run(&["tools", "--format", "anthropic"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.iter().all(|n| n
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')),
        "{names:?}"
    );
    assert!(doc[0].get("input_schema").is_some());
    let (code, stdout, _) = sandbox.run(&["tools", "--format", "openai"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc[0]["type"], "function");
    assert!(doc[0]["function"].get("parameters").is_some());
}

#[test]
fn tools_policies_reject_and_first() {
    let sandbox = Sandbox::new().with_servers(&demo_servers());
    let (code, stdout, _) = sandbox.run(&["tools", "--policy", "reject"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("server files is refused: its tool `search` collides with notes"),
        "{stdout}"
    );
    let (code, stdout, _) = sandbox.run(&["tools", "--policy", "first"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("`search` of files is reachable only qualified: notes keeps the bare name"),
        "{stdout}"
    );
}

#[test]
fn tools_reports_a_failed_server_and_exits_2() {
    let sandbox = Sandbox::new().with_servers(&[
        ("notes", demo("notes")),
        ("gone", json!({"command": "/nonexistent/x"})),
    ]);
    let (code, stdout, stderr) = sandbox.run(&["tools"]);
    assert_eq!(code, 2);
    assert!(stdout.contains("gone    failed"), "{stdout}");
    assert!(
        stdout.contains("notes/search") || stdout.contains("search"),
        "{stdout}"
    );
    assert!(stderr.contains("server `gone` did not start"), "{stderr}");
    let (code, stdout, _) = sandbox.run(&["tools", "--format", "json"]);
    assert_eq!(code, 2);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["servers"][1]["status"], "failed");
    assert_eq!(doc["servers"][1]["error"]["exitCode"], 2);
    assert_eq!(doc["servers"][1]["error"]["cause"], "connection");
}

// ---------------------------------------------------------------- configuration

#[test]
fn configuration_errors_name_file_path_and_expectation() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"mcpServers": {"a": {"command": "x", "colour": "red"}}}"#,
            "unknown_key",
        ),
        (r#"{"mcpServers": {"a": {"command": ["x"]}}}"#, "wrong_type"),
        (
            r#"{"mcpServers": {"bad name": {"command": "x"}}}"#,
            "invalid_name",
        ),
        (
            r#"{"mcpServers": {"a": {"url": "https://me:secret@example.com/mcp"}}}"#,
            "credentials_in_url",
        ),
        (
            r#"{"mcpServers": {"a": {"url": "https://example.com/mcp", "headers": {"Bad Header": "x"}}}}"#,
            "invalid_header",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "request_timeout_ms": -1}}}"#,
            "out_of_range",
        ),
        (
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}",
            "syntax",
        ),
    ];
    let mut report = String::new();
    for (text, label) in cases {
        let sandbox = Sandbox::new();
        sandbox.write(".mcp.json", text);
        let (code, stdout, stderr) = sandbox.run(&["inspect", "a"]);
        assert_eq!(code, 1, "{label}: {stderr}");
        assert_eq!(stdout, "");
        assert!(stderr.contains(".mcp.json"), "{label}: {stderr}");
        report.push_str(&format!("{label}:\n{stderr}\n"));
    }
    assert!(!report.contains("secret"), "{report}");
    insta::assert_snapshot!("config_errors", report);
}

#[test]
fn missing_variables_are_named_and_set_ones_expanded() {
    let sandbox = Sandbox::new().with_servers(&[
        (
            "notes",
            json!({"command": MCP, "args": ["__serve-demo", "${DEMO_NAME}"]}),
        ),
        (
            "fallback",
            json!({"command": MCP, "args": ["__serve-demo", "${DEMO_UNSET:-files}"]}),
        ),
    ]);
    let out = sandbox
        .mcp()
        .args(["inspect", "notes"])
        .env_remove("DEMO_NAME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = sandbox.normalise(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        stderr,
        "mcp: error: configuration error in .mcp.json: at `mcpServers.notes.args[1]`: environment variable `DEMO_NAME` is not set\n"
    );
    let out = sandbox
        .mcp()
        .args(["inspect", "notes", "--json"])
        .env("DEMO_NAME", "notes")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["serverInfo"]["name"], "demo-notes");
    let (code, stdout, _) = sandbox.run(&["inspect", "fallback", "--json"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("demo-files"));
}

#[test]
fn configuration_is_found_in_order_and_missing_is_exit_1() {
    let sandbox = Sandbox::new();
    let (code, _, stderr) = sandbox.run(&["tools"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("no configuration found (looked at .mcp.json, [DIR]/xdg/mcp/config.json)"),
        "{stderr}"
    );
    // The XDG file is used when there is no project file.
    std::fs::create_dir_all(sandbox.path().join("xdg/mcp")).unwrap();
    sandbox.write(
        "xdg/mcp/config.json",
        &json!({"mcpServers": {"x": demo("notes")}}).to_string(),
    );
    let (code, stdout, _) = sandbox.run(&["inspect", "x", "--json", "--catalog", "prompts"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("demo-notes"));
    // --config wins.
    sandbox.write(
        "other.json",
        &json!({"mcpServers": {"x": demo("github")}}).to_string(),
    );
    let (code, stdout, _) = sandbox.run(&[
        "--config",
        "other.json",
        "inspect",
        "x",
        "--json",
        "--catalog",
        "prompts",
    ]);
    assert_eq!(code, 0);
    assert!(stdout.contains("demo-github"));
    let (code, _, stderr) = sandbox.run(&["--config", "nope.json", "tools"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("cannot read configuration file nope.json"),
        "{stderr}"
    );
    let (code, _, stderr) = sandbox.run(&["inspect", "y"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("no server named `y`"), "{stderr}");
}

// ---------------------------------------------------------------- add

#[test]
fn add_writes_entries_and_refuses_secrets() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".mcp.json",
        r#"{"$schema": "x", "mcpServers": {"zeta": {"command": "z"}}}"#,
    );
    // Approved before: the user's own additions keep it approved.
    sandbox.trust();
    let (code, stdout, stderr) = sandbox.run(&[
        "add",
        "local",
        "--env-inherit",
        "NOTES_DB",
        "--",
        "notes-server",
        "--port",
        "1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "added server `local` in .mcp.json\n");
    let (code, _, stderr) = sandbox.run(&[
        "add",
        "remote",
        "--url",
        "https://api.example.com/mcp",
        "--transport",
        "sse",
        "--token-env",
        "API_TOKEN",
        "--token-header",
        "X-Api-Key",
        "--token-prefix",
        "Token ",
    ]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("add_file", sandbox.read(".mcp.json"));

    let refusals: &[(&[&str], &str)] = &[
        (
            &[
                "add",
                "t",
                "--url",
                "https://e.com/mcp",
                "--token-env",
                "ghp_abcdefABCDEF0123456789",
            ],
            "token value",
        ),
        (
            &["add", "t", "--url", "https://user:pw@e.com/mcp"],
            "credentials",
        ),
        (
            &["add", "t", "--url", "https://e.com/mcp?api_key=abc123"],
            "credentials in query",
        ),
        (
            &[
                "add",
                "t",
                "--url",
                "https://e.com/mcp",
                "--token-env",
                "T",
                "--token-header",
                "Bad Header",
            ],
            "header",
        ),
        (&["add", "t", "--url", "http://e.com/mcp"], "plain http"),
        (&["add", "bad name", "--", "x"], "name"),
        (&["add", "local", "--", "other"], "taken"),
        (&["add", "t"], "no target"),
    ];
    let mut report = String::new();
    for (args, label) in refusals {
        let (code, _, stderr) = sandbox.run(args);
        assert_eq!(code, 1, "{label}: {stderr}");
        report.push_str(&format!("{label}: {stderr}"));
    }
    for secret in ["ghp_abcdefABCDEF0123456789", "pw@", "abc123"] {
        assert!(!report.contains(secret), "{secret} echoed: {report}");
    }
    insta::assert_snapshot!("add_refusals", report);

    let (code, stdout, _) = sandbox.run(&[
        "add",
        "local",
        "--force",
        "--",
        MCP,
        "__serve-demo",
        "notes",
    ]);
    assert_eq!(code, 0);
    assert_eq!(stdout, "replaced server `local` in .mcp.json\n");
    let (code, stdout, _) = sandbox.run(&["inspect", "local", "--json", "--catalog", "prompts"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("demo-notes"));
}

#[test]
fn add_without_a_config_creates_the_user_file() {
    let sandbox = Sandbox::new();
    let (code, stdout, stderr) = sandbox.run(&["add", "notes", "--", MCP, "__serve-demo", "notes"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "added server `notes` in [DIR]/xdg/mcp/config.json\n"
    );
    let (code, stdout, _) = sandbox.run(&["tools", "--format", "json"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("\"server\": \"notes\""));
}

// ---------------------------------------------------------------- login, usage

/// A result refused for breaking its tool's output schema is exit 4 naming
/// the difference, and what the server sent is shown (labelled, escaped,
/// bounded; whole in `--json`): the CLI is where a server's author finds out.
#[test]
fn a_result_that_breaks_its_output_schema_is_shown_with_the_refusal() {
    let rows: Vec<Value> = (0..60).map(|i| json!(i)).collect();
    let sandbox = Sandbox::new().with_servers(&[(
        "s",
        script(json!({"tools": [
            {"name": "shaped", "inputSchema": schema_object(),
             "outputSchema": {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]},
             "behavior": {"kind": "structured", "value": {"n": 1, "note": "\u{1b}[2Jhi", "rows": rows}}},
            {"name": "bare", "inputSchema": schema_object(),
             "outputSchema": {"type": "object", "required": ["n"]},
             "behavior": {"kind": "echo"}}
        ]})),
    )]);
    let (code, stdout, stderr) = sandbox.run(&["call", "s", "shaped"]);
    assert_eq!(code, 4, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("does not match its output schema: /n: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("the structured content it sent:"),
        "{stderr}"
    );
    assert!(stderr.contains("  |   \"n\": 1,\n"), "{stderr}");
    assert!(stderr.contains(r#""note": "\u001b[2Jhi""#), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    assert!(
        stderr.contains("more lines (`--json` has them all)"),
        "{stderr}"
    );

    let (code, stdout, _) = sandbox.run(&["call", "s", "shaped", "--json"]);
    assert_eq!(code, 4);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    let received = &json["error"]["receivedResult"]["structuredContent"];
    assert_eq!(received["n"], 1);
    assert_eq!(received["rows"].as_array().unwrap().len(), 60);

    let (code, _, stderr) = sandbox.run(&["call", "s", "bare", "text=x"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("it sent no structured content"), "{stderr}");
}

#[test]
fn a_url_whose_path_serves_no_mcp_gets_a_hint_about_the_path() {
    let rt = runtime();
    let server = rich_http_server(&rt);
    let url = server.url();
    let wrong = format!("{}/not-here", url.trim_end_matches('/'));
    let sandbox = Sandbox::new();
    let (code, _, stderr) = sandbox.run(&["inspect", "--url", &wrong]);
    // (A 404 is the server's answer: exit 4, as for any protocol error.)
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("answered HTTP 404"), "{stderr}");
    assert!(
        stderr.contains("hint: the URL answered HTTP 404 to the first request: is its path the server's MCP endpoint?"),
        "{stderr}"
    );
    // The right path: no hint, it works.
    let (code, _, stderr) = sandbox.run(&["inspect", "--url", &url]);
    assert_eq!(code, 0, "{stderr}");
    rt.block_on(server.shutdown());
}

#[test]
fn login_and_logout() {
    let rt = runtime();
    // A server that publishes no OAuth metadata: login fails as
    // authentication (3), naming why.
    let server = rich_http_server(&rt);
    let sandbox = Sandbox::new().with_servers(&[
        ("remote", json!({"url": server.url()})),
        ("local", demo("notes")),
    ]);
    let (code, _, stderr) = sandbox.run(&["login", "remote"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("OAuth sign-in failed"), "{stderr}");
    // Said as what it most likely is (not a failed registration), with
    // the way to check.
    assert!(
        stderr.contains("the server shows no sign of OAuth"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: `mcp inspect SERVER`"), "{stderr}");
    // Nothing was stored: logout says so (and is not an error).
    let (code, stdout, stderr) = sandbox.run(&["logout", "remote"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "nothing was stored for `remote`: there were no credentials to forget\n"
    );
    let (code, _, stderr) = sandbox.run(&["login", "local"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("OAuth is for HTTP servers"), "{stderr}");
    let (code, _, _) = sandbox.run(&["login", "nope"]);
    assert_eq!(code, 1);
    rt.block_on(server.shutdown());
}

#[test]
fn usage_errors_are_exit_1_and_help_is_0() {
    let sandbox = Sandbox::new();
    assert_eq!(sandbox.run(&["frobnicate"]).0, 1);
    assert_eq!(
        sandbox.run(&["inspect", "--catalog", "everything", "x"]).0,
        1
    );
    assert_eq!(sandbox.run(&["inspect"]).0, 1);
    assert_eq!(
        sandbox
            .run(&["inspect", "x", "--url", "https://e.com/mcp"])
            .0,
        1
    );
    let (code, stdout, _) = sandbox.run(&["--help"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Exit codes: 0 ok, 1 usage"), "{stdout}");
    assert!(!stdout.contains("__serve-demo"));
    assert!(!stdout.contains("conformance-client"));
}

#[test]
fn no_colour_off_a_terminal() {
    let sandbox = Sandbox::new().with_servers(&demo_servers());
    let (_, stdout, stderr) = sandbox.run(&["tools"]);
    assert!(!stdout.contains('\x1b') && !stderr.contains('\x1b'));
    let (_, stdout, _) = sandbox.run(&["demo"]);
    assert!(!stdout.contains('\x1b'));
}

// ---------------------------------------------------------------- Ctrl-C

#[test]
fn ctrl_c_cancels_the_call_and_stops_the_server() {
    let sandbox = Sandbox::new();
    let record = sandbox.path().join("record.jsonl");
    let hang = json!({"tools": [{"name": "hang", "inputSchema": schema_object(), "behavior": {"kind": "hang"}}]});
    let mut child = std::process::Command::new(MCP)
        .current_dir(sandbox.path())
        .env("XDG_CONFIG_HOME", sandbox.path().join("xdg"))
        .args(["call", "hang", "--"])
        .arg(testkit())
        .args(["--script-json", &hang.to_string(), "--record"])
        .arg(&record)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the call is in flight.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&record)
        .unwrap_or_default()
        .contains("\"tools/call\"")
    {
        assert!(Instant::now() < deadline, "the call never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130));
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(recorded.contains("notifications/cancelled"), "{recorded}");
}

// ---------------------------------------------------------------- HTTP

fn http_script() -> mcp_testkit::Script {
    mcp_testkit::Script::from_json(&rich_script().to_string()).unwrap()
}

/// The rich script served over Streamable HTTP on loopback.
fn rich_http_server(rt: &tokio::runtime::Runtime) -> mcp_testkit::RunningHttpServer {
    rt.block_on(mcp_testkit::HttpFakeServer::start(
        http_script(),
        mcp_testkit::HttpServerOptions::default(),
    ))
    .unwrap()
}

#[test]
fn http_servers_by_url_and_by_configuration() {
    let rt = runtime();
    let server = rich_http_server(&rt);
    let url = server.url();
    let sandbox = Sandbox::new().with_servers(&[
        (
            "remote",
            json!({"type": "http", "url": url, "token_env": "REMOTE_TOKEN"}),
        ),
        ("open", json!({"url": url})),
    ]);
    let (code, stdout, stderr) =
        sandbox.run(&["inspect", "--url", &url, "--json", "--catalog", "tools"]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["serverInfo"]["name"], "rich");
    assert_eq!(doc["era"], "modern");
    let (code, stdout, stderr) = sandbox.run(&["call", "open", "add", "a=20", "b=22"]);
    assert_eq!((code, stdout.as_str()), (0, "42\n"), "{stderr}");
    let out = sandbox
        .mcp()
        .args(["call", "remote", "echo", "text=over http"])
        .env("REMOTE_TOKEN", "t0ken-value")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "over http\n");
    let sent = server.requests.requests();
    assert!(
        sent.iter()
            .any(|r| r.header("authorization") == Some("Bearer t0ken-value")),
        "the token was not sent"
    );
    // The token variable is not set: authentication is required (3), named.
    let out = sandbox
        .mcp()
        .args(["inspect", "remote"])
        .env_remove("REMOTE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("REMOTE_TOKEN"), "{stderr}");
    rt.block_on(server.shutdown());
}

#[test]
fn http_401_is_exit_3_and_unreachable_is_exit_2() {
    use mcp_testkit::http::HttpProbe;
    use mcp_testkit::{HttpFakeServer, HttpServerOptions};
    let rt = runtime();
    let legacy = mcp_testkit::Script::legacy();
    let options = HttpServerOptions::default().probe(HttpProbe::Unauthorized {
        www_authenticate:
            "Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\""
                .into(),
    });
    let server = rt.block_on(HttpFakeServer::start(legacy, options)).unwrap();
    let sandbox = Sandbox::new();
    let (code, _, stderr) = sandbox.run(&["inspect", "--url", &server.url()]);
    assert_eq!(code, 3, "{stderr}");
    // A server of the command line has no name: the hint names its URL,
    // as `mcp login --url` takes it.
    assert!(
        stderr.contains(&format!("run `mcp login --url {}` first", server.url())),
        "{stderr}"
    );
    let port = server.addr().port();
    rt.block_on(server.shutdown());
    let (code, _, stderr) =
        sandbox.run(&["inspect", "--url", &format!("http://127.0.0.1:{port}/mcp")]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn legacy_sse_transport_by_url() {
    use mcp_testkit::{HttpFakeServer, HttpServerOptions};
    let rt = runtime();
    let server = rt
        .block_on(HttpFakeServer::start(
            mcp_testkit::Script::legacy().tool("echo", mcp_testkit::Behavior::Echo),
            HttpServerOptions::default(),
        ))
        .unwrap();
    let sandbox = Sandbox::new();
    let (code, stdout, stderr) = sandbox.run(&[
        "call",
        "--url",
        &server.sse_url(),
        "--transport",
        "sse",
        "echo",
        "text=via sse",
    ]);
    assert_eq!((code, stdout.as_str()), (0, "via sse\n"), "{stderr}");
    rt.block_on(server.shutdown());
}
