//! The conveniences of issue 22 through the binary: `mcp list` / `get` /
//! `remove`; servers of the command line described fully (`-e`,
//! `--env-inherit`, `--cwd`, `--header`, `--transport streamable-http`);
//! `--args @FILE` / `--args -`; prompts checked before sending; readable
//! inspection (parameters, annotations, enums, "did you mean"); and
//! messages that say the truth (a missing directory, a refused server, a
//! zero time-out, one server's unset variable).

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::*;

/// A script written to a file in the sandbox, run with `--script FILE` (a
/// script given inline as an argument could trip the configuration's check
/// for credential-shaped arguments).
fn script_file(sandbox: &Sandbox, name: &str, script: &Value) -> PathBuf {
    let path = sandbox.path().join(name);
    std::fs::write(&path, script.to_string()).unwrap();
    path
}

/// The configuration entry of a testkit server reading `script`.
fn scripted(sandbox: &Sandbox, name: &str, script: &Value) -> Value {
    json!({"command": testkit(), "args": ["--script", script_file(sandbox, name, script)]})
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// Tools with parameters of every kind, annotations, and an enum.
fn tools_script() -> Value {
    json!({
        "server_info": {"name": "kinds", "version": "1.0.0"},
        "tools": [
            {"name": "echo", "description": "Echoes text.",
             "inputSchema": {"type": "object",
                "properties": {
                    "text": {"type": "string", "description": "What to say"},
                    "mode": {"type": "string", "enum": ["fast", "slow"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "count": {"type": "integer", "default": 1}
                },
                "required": ["text"]},
             "annotations": {"readOnlyHint": true, "openWorldHint": false, "title": "Echo"},
             "behavior": {"kind": "echo"}},
            {"name": "add", "description": "Adds.\u{1b}[2J",
             "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
             "behavior": {"kind": "add"}},
            {"name": "bare", "inputSchema": {"type": "object"}, "behavior": {"kind": "echo"}}
        ],
        "prompts": [
            {"name": "greet", "description": "Greets someone.",
             "arguments": [{"name": "who", "required": true}, {"name": "mood"}],
             "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello to {who}."}}]}
        ]
    })
}

// ---------------------------------------------------------------- list, get, remove

#[test]
fn list_shows_each_server_and_its_file_without_starting_or_expanding() {
    let sandbox = Sandbox::new().with_servers(&[
        (
            "notes",
            json!({"command": "notes-server", "args": ["--db", "${HOME}/notes.db"], "disabled": true}),
        ),
        (
            "remote",
            json!({"type": "streamable-http", "url": "https://api.example.com/mcp"}),
        ),
    ]);
    let (code, stdout, stderr) = sandbox.run(&["list"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout
            .contains("notes   stdio (disabled)  notes-server --db '${HOME}/notes.db'  .mcp.json"),
        "{stdout}"
    );
    assert!(
        stdout.contains("remote  http              https://api.example.com/mcp"),
        "{stdout}"
    );
    assert!(
        stdout.contains("from .mcp.json (project file, approved)"),
        "{stdout}"
    );
    let (code, stdout, _) = sandbox.run(&["list", "--json"]);
    assert_eq!(code, 0);
    let doc = json_of(&stdout);
    assert_eq!(
        (&doc["file"], &doc["source"], &doc["approval"]),
        (&json!(".mcp.json"), &json!("project"), &json!("approved"))
    );
    assert_eq!(doc["servers"][0]["name"], "notes");
    assert_eq!(
        doc["servers"][0]["args"],
        json!(["--db", "${HOME}/notes.db"])
    );
    assert_eq!(doc["servers"][0]["disabled"], true);
    assert_eq!(doc["servers"][0]["file"], ".mcp.json");
    assert_eq!(doc["servers"][1]["type"], "http");
    assert_eq!(doc["servers"][1]["url"], "https://api.example.com/mcp");

    // A project file nobody approved can be looked at (nothing is started
    // or expanded), and says that it is not approved.
    let sandbox = Sandbox::new();
    sandbox.write(
        ".mcp.json",
        &json!({"mcpServers": {"evil": {"command": "sh", "args": ["-c", "touch started\u{1b}[2J"]}}})
            .to_string(),
    );
    let (code, stdout, stderr) = sandbox.run(&["list"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("not approved"), "{stdout}");
    assert!(stdout.contains("\\u{1b}[2J"), "{stdout}");
    assert!(!stdout.contains('\u{1b}'), "{stdout}");
    assert!(!sandbox.path().join("started").exists());
    let (_, stdout, _) = sandbox.run(&["list", "--json"]);
    assert_eq!(json_of(&stdout)["approval"], "not_approved");
}

#[test]
fn get_shows_the_entry_as_written_and_never_a_variables_value() {
    // Written by hand, its keys in no sorted order.
    let sandbox = Sandbox::new();
    sandbox.write(
        ".mcp.json",
        r#"{"mcpServers": {"remote": {"url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${API_TOKEN}"}, "request_timeout_ms": 5000}}}"#,
    );
    sandbox.trust();
    let secret = "s3cr3t-v4lue-from-the-environment";
    let out = sandbox
        .mcp()
        .args(["get", "remote"])
        .env("API_TOKEN", secret)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = sandbox.normalise(&String::from_utf8_lossy(&out.stdout));
    assert!(!stdout.contains(secret), "{stdout}");
    // In the file's order, `${VAR}` as written.
    let lines: Vec<&str> = stdout.lines().map(str::trim_end).collect();
    assert_eq!(
        lines,
        [
            "KEY                 VALUE",
            "name                remote",
            "file                .mcp.json (project file, approved)",
            "type                http",
            "url                 https://api.example.com/mcp",
            "headers             Authorization=Bearer ${API_TOKEN}",
            "request_timeout_ms  5000",
        ]
    );
    let out = sandbox
        .mcp()
        .args(["get", "remote", "--json"])
        .env("API_TOKEN", secret)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains(secret), "{stdout}");
    let doc = json_of(&stdout);
    assert_eq!(
        doc["entry"],
        json!({"url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"},
               "request_timeout_ms": 5000})
    );
    assert_eq!(
        (&doc["name"], &doc["type"]),
        (&json!("remote"), &json!("http"))
    );

    let (code, stdout, stderr) = sandbox.run(&["get", "nope", "--json"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(json_of(&stdout)["error"]["kind"], "unknown_server");
    assert!(stderr.contains("no server named `nope`"), "{stderr}");
}

#[test]
fn remove_rewrites_the_file_safely_and_keeps_an_approved_file_approved() {
    let sandbox = Sandbox::new().with_servers(&[
        ("notes", demo("notes")),
        ("files", demo("files")),
        ("github", demo("github")),
    ]);
    let (code, stdout, stderr) = sandbox.run(&["remove", "files"]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "removed server `files` from .mcp.json\n"),
        "{stderr}"
    );
    let file: Value = serde_json::from_str(&sandbox.read(".mcp.json")).unwrap();
    let names: Vec<&String> = file["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["github", "notes"]);
    let text = sandbox.read(".mcp.json");
    assert!(
        text.find("\"notes\"").unwrap() < text.find("\"github\"").unwrap(),
        "{text}"
    );
    // Our own change: the project file is still approved and usable
    // without a prompt (there is no terminal here to answer one).
    let (code, stdout, stderr) = sandbox.run(&["tools", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let servers: Vec<Value> = json_of(&stdout)["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].clone())
        .collect();
    assert_eq!(servers, [json!("notes"), json!("github")]);
    // Nothing is left behind in the directory but the file.
    let leftovers: Vec<String> = std::fs::read_dir(sandbox.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".mcp.json."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A name that is not there: exit 1, the file untouched.
    let before = sandbox.read(".mcp.json");
    let (code, _, stderr) = sandbox.run(&["remove", "files"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("no server named `files` in .mcp.json (configured: notes, github)"),
        "{stderr}"
    );
    assert_eq!(sandbox.read(".mcp.json"), before);

    // An unapproved project file stays unapproved.
    let sandbox = Sandbox::new();
    sandbox.write(
        ".mcp.json",
        &json!({"mcpServers": {"a": demo("notes"), "b": demo("files")}}).to_string(),
    );
    let (code, _, stderr) = sandbox.run(&["remove", "a"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = sandbox.run(&["inspect", "b"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("is not approved"), "{stderr}");
}

// ---------------------------------------------------------------- one-off servers

#[test]
fn a_command_line_server_takes_env_inherited_variables_and_a_directory() {
    let sandbox = Sandbox::new();
    let script = script_file(&sandbox, "s.json", &tools_script());
    let workdir = sandbox.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    // The server is a shell that records what it got, then becomes the
    // testkit server.
    let shell = format!(
        "pwd > where.txt; printf '%s|%s|%s' \"$GREETING\" \"$PASSED_ON\" \"$NOT_PASSED\" > env.txt; exec '{}' --script '{}'",
        testkit_path_text(),
        script.display()
    );
    let out = sandbox
        .mcp()
        .args(["call", "echo", "text=hi", "-e", "GREETING=hello there"])
        .args(["--env-inherit", "PASSED_ON", "--cwd"])
        .arg(&workdir)
        .args(["--", "sh", "-c", &shell])
        .env("PASSED_ON", "inherited")
        .env("NOT_PASSED", "kept back")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
    assert_eq!(
        std::fs::read_to_string(workdir.join("env.txt")).unwrap(),
        "hello there|inherited|"
    );
    assert_eq!(
        std::fs::read_to_string(workdir.join("where.txt"))
            .unwrap()
            .trim(),
        workdir.canonicalize().unwrap().to_string_lossy()
    );

    // Refusals never print the value back: it may be a secret.
    let secret = "ghp_0123456789abcdefABCDEF012345";
    for (flags, message) in [
        (
            vec!["-e".to_owned(), secret.to_owned()],
            "refusing --env: expected NAME=VALUE (the value given is not shown)",
        ),
        (
            vec!["-e".to_owned(), format!("1BAD={secret}")],
            "refusing --env: not an environment variable name",
        ),
        (
            vec!["--env-inherit".to_owned(), secret.to_owned()],
            "refusing --env-inherit: this looks like a token value",
        ),
    ] {
        let (code, stdout, stderr) = sandbox.run(
            &[
                &["call", "echo", "text=x"][..],
                &flags.iter().map(String::as_str).collect::<Vec<_>>(),
                &["--", "true"],
            ]
            .concat(),
        );
        assert_eq!((code, stdout.as_str()), (1, ""), "{flags:?}: {stderr}");
        assert!(stderr.contains(message), "{flags:?}: {stderr}");
        assert!(!stderr.contains(secret), "{flags:?} echoed: {stderr}");
    }
    // These flags describe a server of the command line only.
    let sandbox = Sandbox::new().with_servers(&[("notes", demo("notes"))]);
    let (code, _, stderr) = sandbox.run(&["inspect", "notes", "-e", "A=b"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--env describes a server given with --url or -- COMMAND"),
        "{stderr}"
    );
}

#[test]
fn a_url_server_takes_headers_and_the_streamable_http_spelling() {
    use mcp_testkit::{HttpFakeServer, HttpServerOptions};
    let rt = runtime();
    let script = mcp_testkit::Script::from_json(&tools_script().to_string()).unwrap();
    let server = rt
        .block_on(HttpFakeServer::start(script, HttpServerOptions::default()))
        .unwrap();
    let url = server.url();
    let sandbox = Sandbox::new();
    let secret = "t0ken-from-the-environment";
    let out = sandbox
        .mcp()
        .args(["call", "--url", &url, "--transport", "streamable-http"])
        .args([
            "--header",
            "X-Team=blue",
            "--header",
            "Authorization=Bearer ${ONE_OFF_TOKEN}",
        ])
        .args(["echo", "text=over http"])
        .env("ONE_OFF_TOKEN", secret)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "over http\n");
    let requests = server.requests.requests();
    assert!(
        requests.iter().all(|r| r.header("x-team") == Some("blue")),
        "a request went without the header"
    );
    let bearer = format!("Bearer {secret}");
    assert!(
        requests
            .iter()
            .any(|r| r.header("authorization") == Some(bearer.as_str())),
        "the header's ${{VAR}} was not expanded"
    );

    // A bad header is refused without its value; a variable that is not
    // set is named, its place said as the flag.
    let value = "Bearer abcdefgh12345678";
    for (header, message) in [
        (value.to_owned(), "refusing --header: expected NAME=VALUE"),
        (
            format!("Bad Name={value}"),
            "refusing --header: not a legal HTTP header name",
        ),
        (
            "X-Key=${ONE_OFF_UNSET}".to_owned(),
            "at `--header X-Key`: environment variable `ONE_OFF_UNSET` is not set",
        ),
    ] {
        let (code, _, stderr) = sandbox.run(&["inspect", "--url", &url, "--header", &header]);
        assert_eq!(code, 1, "{header}: {stderr}");
        assert!(stderr.contains(message), "{header}: {stderr}");
        assert!(!stderr.contains("abcdefgh12345678"), "echoed: {stderr}");
    }
    // `--header` belongs to `--url`.
    let (code, _, stderr) = sandbox.run(&["inspect", "--header", "X-A=b", "--", "true"]);
    assert_eq!(code, 1, "{stderr}");

    // `mcp add` takes the same spelling and writes the configuration's.
    let (code, _, stderr) = sandbox.run(&[
        "add",
        "remote",
        "--url",
        "https://api.example.com/mcp",
        "--transport",
        "streamable-http",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let written: Value = serde_json::from_str(&sandbox.read("xdg/mcp/config.json")).unwrap();
    assert_eq!(written["mcpServers"]["remote"]["type"], "http");
    rt.block_on(server.shutdown());
}

// ---------------------------------------------------------------- arguments

#[test]
fn args_come_from_a_file_or_standard_input_past_the_shells_limit_and_bounded() {
    let sandbox = Sandbox::new();
    let script = script_file(&sandbox, "s.json", &tools_script());
    let tk = testkit_path_text();
    let server = ["--", tk.as_str(), "--script", script.to_str().unwrap()];
    // Longer than one argument may be on Linux (128 KiB).
    let long = "x".repeat(300 * 1024);
    sandbox.write("args.json", &json!({"text": long}).to_string());
    let out = sandbox
        .mcp()
        .args(["call", "echo", "--args", "@args.json"])
        .args(server)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout.len(), long.len() + 1);
    // From standard input, merged with key=value pairs.
    let out = sandbox
        .mcp()
        .args(["call", "add", "b=2", "--args", "-", "--json"])
        .args(server)
        .write_stdin(r#"{"a": 40}"#)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json_of(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(doc["result"]["structuredContent"]["sum"], 42);
    // Past the bound: refused by name, nothing started.
    let out = sandbox
        .mcp()
        .args(["call", "echo", "--args", "-"])
        .args(server)
        .write_stdin(vec![b' '; 4 * 1024 * 1024 + 1])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "mcp: error: --args from standard input is larger than 4 MiB, the bound of --args\n"
    );
    let (code, _, stderr) =
        sandbox.run(&[&["call", "echo", "--args", "@missing.json"][..], &server].concat());
    assert_eq!(code, 1);
    assert!(
        stderr.contains("cannot read --args from file missing.json"),
        "{stderr}"
    );
    sandbox.write("list.json", "[1, 2]");
    let (code, _, stderr) =
        sandbox.run(&[&["call", "echo", "--args", "@list.json"][..], &server].concat());
    assert_eq!(code, 1);
    assert!(stderr.contains("--args must be a JSON object"), "{stderr}");
}

#[test]
fn prompt_arguments_are_checked_before_anything_is_sent() {
    let sandbox = Sandbox::new();
    let script = script_file(&sandbox, "s.json", &tools_script());
    let record = sandbox.path().join("record.jsonl");
    let tk = testkit_path_text();
    let server = [
        "--",
        tk.as_str(),
        "--script",
        script.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
    ];
    let cases: &[(&[&str], &str)] = &[
        (&["greet"], "argument `who`: the prompt requires it"),
        (
            &["greet", "--arg", "who=Ada", "--arg", "colour=red"],
            "argument `colour`: the prompt has no such argument (it takes: who, mood)",
        ),
        (
            &["gret", "--arg", "who=Ada"],
            "server `server` lists no prompt named `gret`",
        ),
    ];
    for (args, message) in cases {
        let (code, _, stderr) = sandbox.run(&[&["prompt"][..], args, &server].concat());
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        let recorded = std::fs::read_to_string(&record).unwrap_or_default();
        assert!(
            !recorded.contains("prompts/get"),
            "{args:?} was sent: {recorded}"
        );
    }
    let (_, _, stderr) = sandbox.run(&[&["prompt", "gret"][..], &server].concat());
    assert!(stderr.contains("hint: did you mean `greet`?"), "{stderr}");
    let (_, stdout, _) = sandbox.run(&[&["prompt", "gret", "--json"][..], &server].concat());
    let error = &json_of(&stdout)["error"];
    assert_eq!(
        (&error["kind"], &error["suggestions"]),
        (&json!("unknown_prompt"), &json!(["greet"]))
    );
    // Arguments from standard input (strings only), merged with --arg.
    let out = sandbox
        .mcp()
        .args(["prompt", "greet", "--args", "-", "--arg", "mood=glad"])
        .args(server)
        .write_stdin(r#"{"who": "Grace"}"#)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Say hello to Grace."));
    let out = sandbox
        .mcp()
        .args(["prompt", "greet", "--args", "-"])
        .args(server)
        .write_stdin(r#"{"who": 7}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("argument `who`: a prompt argument is a string")
    );
}

// ---------------------------------------------------------------- inspection

#[test]
fn inspect_shows_each_tools_parameters_and_annotations() {
    let sandbox = Sandbox::new();
    let script = script_file(&sandbox, "s.json", &tools_script());
    let (code, stdout, stderr) = sandbox.run(&[
        "inspect",
        "--catalog",
        "tools",
        "--",
        &testkit_path_text(),
        "--script",
        script.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let tools = &stdout[stdout.find("Tools (3)").expect(&stdout)..];
    // Parameters in the order the server sent them (the testkit sends
    // object keys sorted).
    let expected = [
        "Tools (3)",
        "echo  Echoes text.",
        "  count  integer          optional  (default 1)",
        "  mode   \"fast\"|\"slow\"    optional",
        "  tags   array of string  optional",
        "  text   string           required  What to say",
        "  annotations (the server's hints): title \"Echo\", read-only, closed world",
        "add  Adds.\\u{1b}[2J",
        "  a  number  optional",
        "  b  number  optional",
        "bare",
        "  (no parameters)",
    ];
    let lines: Vec<&str> = tools.lines().collect();
    assert_eq!(lines, expected, "{stdout}");
    assert!(!stdout.contains('\u{1b}'));
}

#[test]
fn argument_errors_list_an_enums_values_and_unknown_tools_the_closest_names() {
    let sandbox = Sandbox::new();
    let kinds = scripted(&sandbox, "s.json", &tools_script());
    let other = scripted(&sandbox, "t.json", &tools_script());
    let sandbox = sandbox.with_servers(&[("kinds", kinds), ("other", other)]);
    let (code, _, stderr) = sandbox.run(&["call", "kinds", "echo", "text=hi", "mode=medium"]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "mcp: error: argument `mode`: the tool's inputSchema allows only \"fast\", \"slow\"\n"
    );
    let (code, stdout, _) = sandbox.run(&[
        "call",
        "kinds",
        "echo",
        "--args",
        r#"{"text": "hi", "mode": 3}"#,
        "--json",
    ]);
    assert_eq!(code, 1);
    assert_eq!(json_of(&stdout)["error"]["kind"], "argument");

    // SERVER TOOL: the server's names.
    let (code, _, stderr) = sandbox.run(&["call", "kinds", "ehco", "text=hi"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("hint: did you mean `echo`?"), "{stderr}");
    let (_, stdout, _) = sandbox.run(&["call", "kinds", "ehco", "--json"]);
    let error = &json_of(&stdout)["error"];
    assert_eq!(
        (&error["kind"], &error["suggestions"]),
        (&json!("unknown_tool"), &json!(["echo"]))
    );
    // A merged name: the exposed names.
    let (code, stdout, stderr) = sandbox.run(&["call", "ech", "text=hi", "--json"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        json_of(&stdout)["error"]["suggestions"],
        json!(["kinds/echo", "other/echo"])
    );
    assert!(
        stderr.contains("hint: did you mean `kinds/echo` or `other/echo`?"),
        "{stderr}"
    );
    // Nothing close: no hint.
    let (code, _, stderr) = sandbox.run(&["call", "kinds", "zzzzzz"]);
    assert_eq!(code, 1);
    assert!(!stderr.contains("did you mean"), "{stderr}");

    // A mistyped argument name, close to the required `text` it leaves
    // out: refused with the name it meant, before anything is sent.
    let (code, _, stderr) = sandbox.run(&["call", "kinds", "echo", "txt=hi"]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "mcp: error: argument `txt`: the tool has no such argument; did you mean `text`?\n"
    );
}

// ---------------------------------------------------------------- the truth

#[test]
fn a_missing_directory_is_blamed_on_the_directory() {
    let sandbox = Sandbox::new().with_servers(&[(
        "notes",
        json!({"command": MCP, "args": ["__serve-demo", "notes"], "cwd": "/nonexistent/notes-dir"}),
    )]);
    let (code, stdout, stderr) = sandbox.run(&["inspect", "notes", "--json"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        "mcp: error: configuration error in .mcp.json: at `mcpServers.notes.cwd`: the server's directory `/nonexistent/notes-dir` does not exist\n"
    );
    assert!(!stderr.contains("could not start server program"));
    assert_eq!(json_of(&stdout)["error"]["kind"], "config");
    std::fs::write(sandbox.path().join("a-file"), "").unwrap();
    let (code, _, stderr) = sandbox.run(&[
        "inspect",
        "--cwd",
        "a-file",
        "--",
        MCP,
        "__serve-demo",
        "notes",
    ]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("at `--cwd`: the server's directory `a-file` is not a directory"),
        "{stderr}"
    );
}

#[test]
fn a_server_refused_by_reject_is_shown_as_refused() {
    let sandbox =
        Sandbox::new().with_servers(&[("notes", demo("notes")), ("files", demo("files"))]);
    let (code, stdout, stderr) = sandbox.run(&["tools", "--policy", "reject"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "files   refused  2025-06-18 (legacy)  2      refused by the reject policy: its tool `search` collides with notes"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("notes   ready"), "{stdout}");
    let (code, stdout, _) = sandbox.run(&["tools", "--policy", "reject", "--format", "json"]);
    assert_eq!(code, 0);
    let files = &json_of(&stdout)["servers"][1];
    assert_eq!(
        (
            &files["name"],
            &files["status"],
            &files["tool"],
            &files["collidesWith"]
        ),
        (
            &json!("files"),
            &json!("refused"),
            &json!("search"),
            &json!("notes")
        )
    );
    assert!(
        files["reason"]
            .as_str()
            .unwrap()
            .contains("collides with notes")
    );
    // Under prefix nothing is refused.
    let (_, stdout, _) = sandbox.run(&["tools", "--format", "json"]);
    assert_eq!(json_of(&stdout)["servers"][1]["status"], "ready");
}

#[test]
fn a_zero_timeout_is_refused() {
    let sandbox = Sandbox::new().with_servers(&[("notes", demo("notes"))]);
    let (code, stdout, stderr) =
        sandbox.run(&["call", "notes", "search", "query=x", "--timeout", "0"]);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(stderr.contains("0 is not in 1..=600"), "{stderr}");
    let (code, _, stderr) = sandbox.run(&["call", "notes", "search", "query=x", "--timeout", "1"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn logout_says_when_nothing_was_stored() {
    let sandbox = Sandbox::new();
    let (code, stdout, stderr) = sandbox.run(&["logout", "--url", "https://api.example.com/mcp"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "nothing was stored for https://api.example.com/mcp: there were no credentials to forget\n"
    );
    // The URL is checked as everywhere, and a credential in it never shown.
    let (code, _, stderr) =
        sandbox.run(&["login", "--url", "https://user:hunter2@api.example.com/mcp"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("the URL carries credentials"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let (code, _, _) = sandbox.run(&["login"]);
    assert_eq!(code, 1);
}

#[test]
fn one_servers_unset_variable_fails_that_server_only() {
    let sandbox = Sandbox::new().with_servers(&[
        ("notes", demo("notes")),
        (
            "files",
            json!({"command": MCP, "args": ["__serve-demo", "${CONVENIENCE_UNSET}"]}),
        ),
    ]);
    let out = sandbox
        .mcp()
        .args(["tools"])
        .env_remove("CONVENIENCE_UNSET")
        .output()
        .unwrap();
    let stdout = sandbox.normalise(&String::from_utf8_lossy(&out.stdout));
    let stderr = sandbox.normalise(&String::from_utf8_lossy(&out.stderr));
    // A configuration error is exit 1, whatever the other servers did.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("notes   ready"), "{stdout}");
    assert!(
        stdout.contains(
            "files   failed  -                    -      at `mcpServers.files.args[1]`: environment variable `CONVENIENCE_UNSET` is not set"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("search") && stdout.contains("create"),
        "{stdout}"
    );
    assert!(
        stderr.contains("server `files` was not started"),
        "{stderr}"
    );
    let out = sandbox
        .mcp()
        .args(["tools", "--format", "json"])
        .env_remove("CONVENIENCE_UNSET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc = json_of(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(doc["servers"][0]["status"], "ready");
    let files = &doc["servers"][1];
    assert_eq!(files["status"], "failed");
    assert_eq!(
        (
            &files["error"]["kind"],
            &files["error"]["cause"],
            &files["error"]["exitCode"]
        ),
        (&json!("config"), &json!("configuration"), &json!(1))
    );
    // A call by merged name still reaches the server that started.
    let out = sandbox
        .mcp()
        .args(["call", "create", "title=t", "text=b"])
        .env_remove("CONVENIENCE_UNSET")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("server `files` did not start, so its tools are missing"),
        "{stderr}"
    );
}

#[test]
fn add_writes_a_local_servers_variables_and_directory_and_a_urls_headers() {
    let sandbox = Sandbox::new();
    sandbox.write(".mcp.json", r#"{"mcpServers": {}}"#);
    let (code, _, stderr) = sandbox.run(&[
        "add",
        "local",
        "-e",
        "MODE=fast",
        "--env",
        "API_KEY=${API_KEY}",
        "--cwd",
        "/srv/notes",
        "--",
        "notes-server",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = sandbox.run(&[
        "add",
        "remote",
        "--url",
        "https://api.example.com/mcp",
        "--header",
        "X-Team=blue",
        "--header",
        "Authorization=Bearer ${API_TOKEN}",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let file: Value = serde_json::from_str(&sandbox.read(".mcp.json")).unwrap();
    assert_eq!(
        file["mcpServers"]["local"],
        json!({"command": "notes-server", "env": {"MODE": "fast", "API_KEY": "${API_KEY}"},
               "cwd": "/srv/notes"})
    );
    assert_eq!(
        file["mcpServers"]["remote"]["headers"],
        json!({"X-Team": "blue", "Authorization": "Bearer ${API_TOKEN}"})
    );
    // Credentials written as values are refused, never echoed; so is a
    // variable name that is not one.
    for args in [
        &[
            "add",
            "a",
            "-e",
            "API_KEY=sk-abcdefghijklmnopqrstuvwxyz012345",
            "--",
            "x",
        ][..],
        &[
            "add",
            "b",
            "--url",
            "https://e.com/mcp",
            "--header",
            "Authorization=Bearer abcdefghij0123456789",
        ],
        &["add", "c", "-e", "not a name=1", "--", "x"],
        &["add", "d", "-e", "novalue", "--", "x"],
        &["add", "e", "--url", "https://e.com/mcp", "--cwd", "/tmp"],
    ] {
        let (code, stdout, stderr) = sandbox.run(args);
        assert_ne!(code, 0, "{args:?}: {stdout}");
        for secret in ["sk-abc", "abcdefghij0123456789"] {
            assert!(!stderr.contains(secret), "{stderr}");
        }
    }
    let file: Value = serde_json::from_str(&sandbox.read(".mcp.json")).unwrap();
    assert_eq!(file["mcpServers"].as_object().unwrap().len(), 2);
}
