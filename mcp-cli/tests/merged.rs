//! `mcp call NAME` through the merged namespace, and the configuration's
//! permission tags (`permission`, `tool_permissions`, `--grant`) and context
//! helpers (`helpers`), run through the binary against the testkit's stdio
//! servers.

mod support;

use serde_json::{Value, json};
use support::*;

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// A tool that answers `structuredContent: {"from": server}`, whatever its
/// arguments, under `schema`.
fn who(name: &str, server: &str, schema: Value) -> Value {
    json!({"name": name, "inputSchema": schema,
           "behavior": {"kind": "structured", "value": {"from": server}}})
}

/// `alpha`: add, echo, fails, who (n: integer), and a resource. `beta`:
/// echo, who (n: a string of one character).
fn alpha() -> Value {
    script(json!({
        "tools": [
            {"name": "add",
             "inputSchema": object_schema(json!({"a": {"type": "number"}, "b": {"type": "number"}}), &["a", "b"]),
             "behavior": {"kind": "add"}},
            {"name": "echo",
             "inputSchema": object_schema(json!({"text": {"type": "string"}}), &["text"]),
             "behavior": {"kind": "echo"}},
            {"name": "fails", "inputSchema": {"type": "object"},
             "behavior": {"kind": "tool_error", "text": "disk full"}},
            who("who", "alpha", object_schema(json!({"n": {"type": "integer"}}), &[]))
        ],
        "resources": [
            {"uri": "mem://readme", "name": "readme", "mimeType": "text/plain", "text": "hello from a resource"}
        ]
    }))
}

fn beta() -> Value {
    script(json!({
        "tools": [
            {"name": "echo",
             "inputSchema": object_schema(json!({"text": {"type": "string"}}), &["text"]),
             "behavior": {"kind": "echo"}},
            who("who", "beta", object_schema(json!({"n": {"type": "string", "maxLength": 1}}), &[]))
        ]
    }))
}

fn two_servers() -> Sandbox {
    Sandbox::new().with_servers(&[("alpha", alpha()), ("beta", beta())])
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// The exposed names of `mcp tools --format json`, with their `helper` flag.
fn exposed(sandbox: &Sandbox, grants: &[&str]) -> (Vec<(String, bool)>, Value) {
    let mut args = Vec::new();
    for g in grants {
        args.extend(["--grant", g]);
    }
    args.extend(["tools", "--format", "json"]);
    let (code, stdout, stderr) = sandbox.run(&args);
    assert_eq!(code, 0, "{stderr}");
    let doc = json_of(&stdout);
    let names = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["helper"].as_bool().unwrap(),
            )
        })
        .collect();
    (names, doc)
}

fn names(exposed: &[(String, bool)]) -> Vec<&str> {
    exposed.iter().map(|(n, _)| n.as_str()).collect()
}

// ---------------------------------------------------------------- call NAME

#[test]
fn call_by_a_bare_unique_name_and_by_server_slash_tool() {
    let sandbox = two_servers();
    let (code, stdout, stderr) = sandbox.run(&["call", "add", "a=2", "b=3.5"]);
    assert_eq!((code, stdout.as_str()), (0, "5.5\n"), "{stderr}");
    let (code, stdout, stderr) = sandbox.run(&["call", "beta/echo", "text=from beta"]);
    assert_eq!((code, stdout.as_str()), (0, "from beta\n"), "{stderr}");
    // The qualified name of a tool whose bare name is exposed too.
    let (code, stdout, _) = sandbox.run(&["call", "alpha/add", "a=1", "b=1"]);
    assert_eq!((code, stdout.as_str()), (0, "2\n"));
}

#[test]
fn merged_call_json_names_the_server_the_tool_and_the_name() {
    let sandbox = two_servers();
    let (code, stdout, stderr) = sandbox.run(&["call", "beta/echo", "text=hi", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = json_of(&stdout);
    assert_eq!(
        (&doc["server"], &doc["tool"], &doc["name"], &doc["isError"]),
        (
            &json!("beta"),
            &json!("echo"),
            &json!("beta/echo"),
            &json!(false)
        )
    );
    assert_eq!(doc["result"]["content"][0]["text"], "hi");
}

#[test]
fn a_tool_error_by_merged_name_is_exit_5() {
    let sandbox = two_servers();
    let (code, stdout, stderr) = sandbox.run(&["call", "fails"]);
    assert_eq!((code, stdout.as_str()), (5, ""));
    assert!(
        stderr.contains("tool `fails` reported an error") && stderr.contains("| disk full"),
        "{stderr}"
    );
    let (code, stdout, _) = sandbox.run(&["call", "alpha/fails", "--json"]);
    assert_eq!(code, 5);
    let doc = json_of(&stdout);
    assert_eq!(
        (&doc["isError"], &doc["name"]),
        (&json!(true), &json!("alpha/fails"))
    );
}

#[test]
fn an_ambiguous_bare_name_is_exit_1_with_its_candidates() {
    let sandbox = two_servers();
    let (code, stdout, stderr) = sandbox.run(&["call", "echo", "text=x"]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(
        stderr.contains("`echo` is ambiguous; use one of: alpha/echo, beta/echo"),
        "{stderr}"
    );
    let (code, stdout, _) = sandbox.run(&["call", "echo", "text=x", "--json"]);
    assert_eq!(code, 1);
    let error = &json_of(&stdout)["error"];
    assert_eq!(error["kind"], "ambiguous");
    assert_eq!(error["exitCode"], 1);
    assert_eq!(error["candidates"], json!(["alpha/echo", "beta/echo"]));
}

#[test]
fn an_unknown_name_is_exit_1_and_names_the_servers_that_did_not_start() {
    let sandbox = two_servers();
    let (code, _, stderr) = sandbox.run(&["call", "nope"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("no tool named `nope` is exposed"),
        "{stderr}"
    );
    assert!(!stderr.contains("did not start"), "{stderr}");
    // A server's name alone: its tool is missing.
    let (code, _, stderr) = sandbox.run(&["call", "alpha"]);
    assert_eq!((code, stderr.as_str()), (1, "mcp: error: missing TOOL\n"));

    let sandbox = Sandbox::new().with_servers(&[
        ("alpha", alpha()),
        ("gone", json!({"command": "/nonexistent/mcp-server"})),
    ]);
    let (code, _, stderr) = sandbox.run(&["call", "nope"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(
            "no tool named `nope` is exposed; server `gone` did not start, so its tools are missing"
        ),
        "{stderr}"
    );
    let (code, stdout, _) = sandbox.run(&["call", "gone/search", "--json"]);
    assert_eq!(code, 1);
    let error = &json_of(&stdout)["error"];
    assert_eq!(
        (&error["kind"], &error["cause"], &error["failedServers"]),
        (&json!("unknown_tool"), &json!("input"), &json!(["gone"]))
    );
    // A server that did not start does not stop a call to another one, but
    // the user is told.
    let (code, stdout, stderr) = sandbox.run(&["call", "add", "a=1", "b=2"]);
    assert_eq!((code, stdout.as_str()), (0, "3\n"), "{stderr}");
    assert!(
        stderr.contains("server `gone` did not start, so its tools are missing"),
        "{stderr}"
    );
}

#[test]
fn policy_first_routes_a_shared_bare_name_to_the_first_server() {
    let sandbox = two_servers();
    let (code, stdout, stderr) = sandbox.run(&["call", "who", "--policy", "first", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = json_of(&stdout);
    assert_eq!(doc["server"], "alpha");
    assert_eq!(doc["result"]["structuredContent"], json!({"from": "alpha"}));
    // The later server's tool stays reachable qualified.
    let (code, stdout, _) = sandbox.run(&["call", "beta/who", "--policy", "first", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(
        json_of(&stdout)["result"]["structuredContent"],
        json!({"from": "beta"})
    );
    // Under the default policy the same name is ambiguous.
    let (code, _, _) = sandbox.run(&["call", "who"]);
    assert_eq!(code, 1);
}

#[test]
fn arguments_are_coerced_by_the_resolved_tools_schema() {
    let sandbox = two_servers();
    // alpha/who takes an integer: `7` is read as one, `x` is refused.
    let (code, _, stderr) = sandbox.run(&["call", "alpha/who", "n=7"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = sandbox.run(&["call", "alpha/who", "n=x"]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "mcp: error: argument `n`: the tool's inputSchema expects an integer\n"
    );
    // beta/who takes a string of one character: `x` is fine, `7` stays a
    // string, `77` is refused by the schema before anything is sent.
    for ok in ["n=x", "n=7"] {
        let (code, _, stderr) = sandbox.run(&["call", "beta/who", ok]);
        assert_eq!(code, 0, "{ok}: {stderr}");
    }
    let (code, stdout, _) = sandbox.run(&["call", "beta/who", "n=77", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(json_of(&stdout)["error"]["kind"], "invalid_arguments");
    // `--args` and `key:=JSON` as in the two-word form.
    let (code, stdout, stderr) = sandbox.run(&["call", "add", "--args", r#"{"a": 1}"#, "b:=41"]);
    assert_eq!((code, stdout.as_str()), (0, "42\n"), "{stderr}");
}

#[test]
fn the_two_word_form_is_unchanged() {
    let sandbox = two_servers();
    let (code, stdout, stderr) = sandbox.run(&["call", "alpha", "add", "a=2", "b=3"]);
    assert_eq!((code, stdout.as_str()), (0, "5\n"), "{stderr}");
    // `echo` is shared, but the server is named: no ambiguity.
    let (code, stdout, _) = sandbox.run(&["call", "beta", "echo", "text=two words", "--json"]);
    assert_eq!(code, 0);
    let doc = json_of(&stdout);
    assert_eq!(
        (&doc["server"], &doc["tool"]),
        (&json!("beta"), &json!("echo"))
    );
    assert!(doc.get("name").is_none(), "{doc}");
    // `--policy` is accepted and changes nothing here.
    let (code, stdout, _) =
        sandbox.run(&["call", "beta", "who", "n=x", "--policy", "first", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(
        json_of(&stdout)["result"]["structuredContent"],
        json!({"from": "beta"})
    );
    // Only the named server is started: another that cannot start does
    // not matter.
    let sandbox = Sandbox::new().with_servers(&[
        ("alpha", alpha()),
        ("gone", json!({"command": "/nonexistent/mcp-server"})),
    ]);
    let (code, stdout, stderr) = sandbox.run(&["call", "alpha", "echo", "text=x"]);
    assert_eq!((code, stdout.as_str()), (0, "x\n"), "{stderr}");
    assert!(!stderr.contains("gone"), "{stderr}");
    // A one-off server: the first word is its tool.
    let alpha_entry = alpha();
    let mut cmd = sandbox.mcp();
    cmd.args([
        "call",
        "add",
        "a=1",
        "b=2",
        "--",
        alpha_entry["command"].as_str().unwrap(),
    ]);
    for arg in alpha_entry["args"].as_array().unwrap() {
        cmd.arg(arg.as_str().unwrap());
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "3\n");
}

// ---------------------------------------------------------------- permissions

#[test]
fn a_server_permission_hides_its_tools_until_granted() {
    let mut gated = beta();
    gated["permission"] = json!("team:beta");
    // With an allow-list too: both apply.
    gated["allow"] = json!({"tools": ["echo"]});
    let sandbox = Sandbox::new().with_servers(&[("alpha", alpha()), ("beta", gated)]);
    let (tools, doc) = exposed(&sandbox, &[]);
    assert!(
        !names(&tools).iter().any(|n| n.starts_with("beta/")),
        "{tools:?}"
    );
    // Hidden, `echo` is alpha's alone.
    assert!(names(&tools).contains(&"echo"), "{tools:?}");
    assert_eq!(
        doc["notes"],
        json!([{
            "message": "server beta needs permission `team:beta`: its tools are hidden (show them with --grant team:beta)",
            "server": "beta",
            "permission": "team:beta"
        }])
    );
    let (code, stdout, _) = sandbox.run(&["tools"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains(
            "note: server beta needs permission `team:beta`: its tools are hidden (show them with --grant team:beta)"
        ),
        "{stdout}"
    );

    let (tools, doc) = exposed(&sandbox, &["team:beta"]);
    let shown = names(&tools);
    assert!(shown.contains(&"beta/echo"), "{shown:?}");
    // The allow-list still holds.
    assert!(!shown.contains(&"beta/who"), "{shown:?}");
    assert_eq!(doc["notes"], json!([]));
    // A grant of something else changes nothing.
    let (tools, _) = exposed(&sandbox, &["team:other"]);
    assert!(!names(&tools).iter().any(|n| n.starts_with("beta/")));
}

#[test]
fn a_tool_permission_hides_that_tool_only() {
    let mut gated = beta();
    gated["tool_permissions"] = json!({"who": "beta.who"});
    let sandbox = Sandbox::new().with_servers(&[("beta", gated)]);
    let (tools, doc) = exposed(&sandbox, &[]);
    assert_eq!(names(&tools), ["echo"]);
    assert_eq!(doc["notes"][0]["tool"], "who");
    assert_eq!(doc["notes"][0]["permission"], "beta.who");
    assert!(
        doc["notes"][0]["message"]
            .as_str()
            .unwrap()
            .contains("--grant beta.who"),
        "{doc}"
    );
    let (tools, doc) = exposed(&sandbox, &["beta.who"]);
    assert_eq!(names(&tools), ["echo", "who"]);
    assert_eq!(doc["notes"], json!([]));
}

#[test]
fn calls_without_the_grant_are_denied_and_succeed_with_it() {
    let mut gated = beta();
    gated["permission"] = json!("beta");
    let mut tagged = alpha();
    tagged["tool_permissions"] = json!({"add": "math"});
    let sandbox = Sandbox::new().with_servers(&[("alpha", tagged), ("beta", gated)]);
    for args in [
        &["call", "beta/echo", "text=x", "--json"][..],
        &["call", "beta", "echo", "text=x", "--json"],
        &["call", "add", "a=1", "b=2", "--json"],
        &["call", "alpha", "add", "a=1", "b=2", "--json"],
    ] {
        let (code, stdout, stderr) = sandbox.run(args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        let error = &json_of(&stdout)["error"];
        assert_eq!(
            (&error["kind"], &error["cause"]),
            (&json!("denied"), &json!("policy")),
            "{args:?}: {error}"
        );
        assert!(stderr.contains("--grant"), "{args:?}: {stderr}");
    }
    let (code, stdout, stderr) = sandbox.run(&["--grant", "beta", "call", "beta/echo", "text=x"]);
    assert_eq!((code, stdout.as_str()), (0, "x\n"), "{stderr}");
    let (code, stdout, stderr) =
        sandbox.run(&["call", "beta", "echo", "text=y", "--grant", "beta"]);
    assert_eq!((code, stdout.as_str()), (0, "y\n"), "{stderr}");
    let (code, stdout, stderr) = sandbox.run(&["call", "add", "a=1", "b=2", "--grant", "math"]);
    assert_eq!((code, stdout.as_str()), (0, "3\n"), "{stderr}");
    // Untagged tools need no grant.
    let (code, stdout, _) = sandbox.run(&["call", "alpha/echo", "text=z"]);
    assert_eq!((code, stdout.as_str()), (0, "z\n"));
}

#[test]
fn a_bad_grant_is_a_usage_error() {
    let sandbox = two_servers();
    let (code, _, stderr) = sandbox.run(&["--grant", "no spaces", "tools"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("a permission name is 1 to 64 characters"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------- helpers

#[test]
fn helpers_are_listed_exported_and_callable() {
    let sandbox = two_servers();
    let (tools, _) = exposed(&sandbox, &[]);
    assert!(tools.iter().all(|(_, helper)| !helper), "{tools:?}");

    let mut helped = alpha();
    helped["helpers"] = json!(true);
    let sandbox = Sandbox::new().with_servers(&[("alpha", helped), ("beta", beta())]);
    let (tools, _) = exposed(&sandbox, &[]);
    let helpers: Vec<&str> = tools
        .iter()
        .filter(|(_, helper)| *helper)
        .map(|(n, _)| n.as_str())
        .collect();
    // alpha offers resources but no prompts.
    assert_eq!(
        helpers,
        [
            "alpha/list_resources",
            "alpha/list_resource_templates",
            "alpha/read_resource"
        ]
    );
    assert!(tools.iter().any(|(n, helper)| n == "add" && !helper));
    let (code, stdout, _) = sandbox.run(&["tools", "--format", "anthropic"]);
    assert_eq!(code, 0);
    let exported: Vec<String> = json_of(&stdout)
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        exported.contains(&"alpha_read_resource".to_owned()),
        "{exported:?}"
    );
    let (code, stdout, _) = sandbox.run(&["tools", "--format", "openai"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("alpha_list_resources"), "{stdout}");

    let (code, stdout, stderr) =
        sandbox.run(&["call", "alpha/read_resource", "uri=mem://readme", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = json_of(&stdout);
    assert_eq!(
        (&doc["server"], &doc["tool"], &doc["name"]),
        (
            &json!("alpha"),
            &json!("read_resource"),
            &json!("alpha/read_resource")
        )
    );
    assert_eq!(
        doc["result"]["structuredContent"]["contents"][0]["text"],
        "hello from a resource"
    );
    let (code, stdout, _) = sandbox.run(&["call", "alpha/list_resources"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("mem://readme"), "{stdout}");
    // A helper's arguments are read by its schema too: `uri` is required.
    let (code, _, stderr) = sandbox.run(&["call", "alpha/read_resource"]);
    assert_eq!(code, 1, "{stderr}");
}

#[test]
fn a_server_permission_hides_its_helpers_too() {
    let mut helped = alpha();
    helped["helpers"] = json!(true);
    helped["permission"] = json!("docs");
    let sandbox = Sandbox::new().with_servers(&[("alpha", helped)]);
    let (tools, _) = exposed(&sandbox, &[]);
    assert!(tools.is_empty(), "{tools:?}");
    let (code, _, stderr) = sandbox.run(&["call", "alpha/read_resource", "uri=mem://readme"]);
    assert_eq!(code, 1, "{stderr}");
    let (tools, _) = exposed(&sandbox, &["docs"]);
    assert!(
        tools
            .iter()
            .any(|(n, helper)| n == "alpha/read_resource" && *helper)
    );
}

// ---------------------------------------------------------------- configuration

#[test]
fn bad_permission_tool_permissions_and_helpers_values_name_their_place() {
    let cases = [
        (
            json!({"permission": "has space"}),
            "mcpServers.alpha.permission",
            "a permission name is 1 to 64 characters",
        ),
        (
            json!({"permission": 7}),
            "mcpServers.alpha.permission",
            "expected a string, found a number",
        ),
        (
            json!({"tool_permissions": {"add": "x/y"}}),
            "mcpServers.alpha.tool_permissions.add",
            "a permission name",
        ),
        (
            json!({"tool_permissions": ["add"]}),
            "mcpServers.alpha.tool_permissions",
            "expected an object of strings",
        ),
        (
            json!({"helpers": "yes"}),
            "mcpServers.alpha.helpers",
            "expected true or false",
        ),
    ];
    for (extra, place, problem) in cases {
        let mut entry = alpha();
        for (k, v) in extra.as_object().unwrap() {
            entry[k] = v.clone();
        }
        let sandbox = Sandbox::new();
        sandbox.write(
            "c.json",
            &json!({"mcpServers": {"alpha": entry}}).to_string(),
        );
        for args in [
            &["--config", "c.json", "tools"][..],
            &["--config", "c.json", "call", "add"],
        ] {
            let (code, _, stderr) = sandbox.run(args);
            assert_eq!(code, 1, "{args:?}: {stderr}");
            assert!(
                stderr.contains(&format!("c.json: at `{place}`: {problem}")),
                "{extra}: {stderr}"
            );
        }
    }
}
