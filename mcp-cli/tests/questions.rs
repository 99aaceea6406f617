//! A server's questions (elicitation) answered by the person at the
//! terminal, through the binary: `mcp call` runs on a terminal that
//! `script` makes (`Sandbox::at_terminal`), its answers typed ahead, its
//! stdout in a file, so the result is read as JSON.

mod support;

use mcp_testkit::{Behavior, InputRequest, InputSpec, PromptSpec, ResourceSpec, Script, ToolSpec};
use serde_json::{Value, json};
use support::*;

/// A server of `script` that asks in a tool `ask`.
fn asking(script: Script) -> Value {
    support::script(serde_json::to_value(script).unwrap())
}

fn form() -> InputRequest {
    InputRequest::elicit_form(
        "Who are you?\u{1b}[31m",
        json!({"type": "object",
               "properties": {"name": {"type": "string", "title": "Name"},
                              "age": {"type": "integer", "minimum": 0}},
               "required": ["name"]}),
    )
}

fn sandbox() -> Sandbox {
    let ask = |script: Script| {
        asking(
            script
                .tool("ask", Behavior::Ask(InputSpec::one("user", form())))
                .tool_spec(
                    ToolSpec::new("shy", Behavior::Ask(InputSpec::one("user", form())))
                        .needs_client("elicitation"),
                )
                .tool(
                    "connect",
                    Behavior::needs_pages(&[
                        (
                            "Connect your account\u{1b}[2J",
                            "https://auth.example.com/connect?c=1",
                            "c1",
                        ),
                        ("And this one", "https://bank.example@evil.test/", "c2"),
                    ]),
                )
                .resource(
                    ResourceSpec::text("notes://private", "private", "the private note")
                        .with_input(InputSpec::one("user", form())),
                )
                .prompt(
                    PromptSpec::new("intro")
                        .message("user", "Introduce yourself.")
                        .with_input(InputSpec::one("user", form())),
                )
                .tool(
                    "think",
                    Behavior::Ask(InputSpec::one(
                        "model",
                        InputRequest::sampling("What is 2+2?", 10),
                    )),
                )
                .tool(
                    "login",
                    Behavior::Ask(InputSpec::one(
                        "page",
                        InputRequest::elicit_url(
                            "Sign in",
                            "https://auth.example.com/login?x=1",
                            "e1",
                        ),
                    )),
                ),
        )
    };
    Sandbox::new().with_servers(&[
        ("old", ask(Script::legacy())),
        ("new", ask(Script::modern())),
    ])
}

/// Runs `mcp ARGS` on a terminal with `answers` typed ahead; returns the
/// exit code, the transcript and stdout (kept apart, in a file).
fn at_terminal(sandbox: &Sandbox, args: &[&str], answers: &str) -> (i32, String, String) {
    let (code, transcript) = sandbox.at_terminal(args, answers, Some("out.json"));
    (code, transcript, sandbox.read("out.json"))
}

fn rounds(stdout: &str) -> Value {
    let doc: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    doc["result"]["structuredContent"]["rounds"][0].clone()
}

#[test]
fn a_person_at_the_terminal_fills_in_a_servers_form_in_both_eras() {
    let sandbox = sandbox();
    for server in ["old", "new"] {
        let (code, transcript, stdout) = at_terminal(
            &sandbox,
            &["call", server, "ask", "--json"],
            // Fields in the order sent (alphabetical here): a negative age,
            // then one; no name (required), then one.
            "-3\n36\n\nAda\ny\n",
        );
        assert_eq!(code, 0, "{server}: {transcript}");
        assert_eq!(
            rounds(&stdout)["user"],
            json!({"action": "accept", "content": {"name": "Ada", "age": 36}}),
            "{server}: {transcript}"
        );
        for shown in [
            &format!("server `{server}` asks you to fill in a form"),
            "  | Who are you?\\u{1b}[31m",
            "Name (`name`, text, required)",
            "this field is required",
            "age (an integer, at least 0, optional)",
            "less than the minimum, 0",
            &format!("Send these answers to `{server}`? [y/N]"),
        ] {
            assert!(
                transcript.contains(shown),
                "{server}: {shown}: {transcript}"
            );
        }
        assert!(!transcript.contains("\u{1b}[31m"), "{transcript}");
    }
}

#[test]
fn a_form_is_declined_or_dismissed_as_the_person_says() {
    let sandbox = sandbox();
    let (code, transcript, stdout) =
        at_terminal(&sandbox, &["call", "old", "ask", "--json"], ":decline\n");
    assert_eq!(code, 0, "{transcript}");
    assert_eq!(rounds(&stdout)["user"], json!({"action": "decline"}));
    // The end of input dismisses it.
    let (code, transcript, stdout) = at_terminal(&sandbox, &["call", "new", "ask", "--json"], "");
    assert_eq!(code, 0, "{transcript}");
    assert_eq!(rounds(&stdout)["user"], json!({"action": "cancel"}));
}

#[test]
fn a_page_to_open_is_shown_with_its_host_and_never_opened() {
    let sandbox = sandbox();
    for (answer, action) in [("y\n", "accept"), ("\n", "decline")] {
        let (code, transcript, stdout) =
            at_terminal(&sandbox, &["call", "old", "login", "--json"], answer);
        assert_eq!(code, 0, "{transcript}");
        assert_eq!(rounds(&stdout)["page"], json!({"action": action}));
        assert!(
            transcript.contains(
                "  page: https://auth.example.com/login?x=1\r\n  host: auth.example.com\r\n"
            ),
            "{transcript}"
        );
        assert!(transcript.contains("mcp does not open it"), "{transcript}");
    }
}

#[test]
fn a_person_writes_a_sampling_reply_in_the_models_place_in_both_eras() {
    let sandbox = sandbox();
    for server in ["old", "new"] {
        let (code, transcript, stdout) =
            at_terminal(&sandbox, &["call", server, "think", "--json"], "Four.\ny\n");
        assert_eq!(code, 0, "{server}: {transcript}");
        let model = &rounds(&stdout)["model"];
        assert_eq!(model["content"]["text"], "Four.", "{server}: {model}");
        assert_eq!(model["role"], "assistant");
        assert!(
            transcript.contains("  | What is 2+2?"),
            "{server}: {transcript}"
        );
    }
    // Declined: the spec's refusal (-1) reaches a legacy server; a
    // 2026-07-28 round has no way to carry it, so the call ends here.
    let (code, transcript, stdout) =
        at_terminal(&sandbox, &["call", "old", "think", "--json"], ":decline\n");
    assert_eq!(code, 5, "{transcript}");
    assert_eq!(
        rounds(&stdout)["model"]["error"]["code"],
        -1,
        "{transcript}"
    );
    let (code, transcript, _) =
        at_terminal(&sandbox, &["call", "new", "think", "--json"], ":decline\n");
    assert_eq!(code, 4, "{transcript}");
    assert!(
        transcript.contains("needs input the client did not provide"),
        "{transcript}"
    );
}

/// `mcp prompt` and `mcp read` answer too: the server sees the answer
/// before it gives the prompt or the resource.
#[test]
fn a_prompt_or_a_read_that_asks_is_answered_at_the_terminal() {
    let sandbox = sandbox();
    let asking: [(&[&str], &str); 2] = [
        (&["read", "notes://private"], "the private note"),
        (&["prompt", "intro"], "Introduce yourself."),
    ];
    for ((words, given), server) in asking
        .iter()
        .flat_map(|case| ["old", "new"].map(|server| (case, server)))
    {
        let args = [&words[..1], &[server], &words[1..], &["--json"]].concat();
        let (code, transcript, stdout) = at_terminal(&sandbox, &args, "\nAda\ny\n");
        assert_eq!(code, 0, "{args:?}: {transcript}");
        assert!(
            transcript.contains(&format!("server `{server}` asks you to fill in a form")),
            "{args:?}: {transcript}"
        );
        assert!(stdout.contains(given), "{args:?}: {stdout}");
        assert!(
            stdout.contains(r#""name":"Ada""#) || stdout.contains(r#""name": "Ada""#),
            "{args:?}: the answer reported back: {stdout}"
        );
    }
}

/// A server that answers `-32042` (the user must open pages first): the
/// pages are shown in the error, a page whose host could be misread is
/// not; at a terminal the person opens them and the call is made again.
#[test]
fn pages_to_open_before_a_call_are_shown_and_the_call_made_again() {
    let sandbox = sandbox();
    let (code, stdout, stderr) = sandbox.run(&["call", "old", "connect"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stdout.is_empty());
    for shown in [
        "the server asks you to open these pages first, then to try again:",
        "  | Connect your account\\u{1b}[2J",
        "    page: https://auth.example.com/connect?c=1\n    host: auth.example.com\n",
        "a page it listed is not shown: elicitation URL must not carry a user name",
    ] {
        assert!(stderr.contains(shown), "{shown}: {stderr}");
    }
    assert!(!stderr.contains("evil.test"), "{stderr}");
    let (_, stdout, stderr) = sandbox.run(&["call", "old", "connect", "--json"]);
    let doc: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}"));
    assert_eq!(
        doc["error"]["urlElicitations"],
        json!([
            {"message": "Connect your account\u{1b}[2J", "url": "https://auth.example.com/connect?c=1",
             "host": "auth.example.com", "elicitationId": "c1"},
            {"refused": "elicitation URL must not carry a user name before its host (it hides the real host)"}
        ]),
        "{doc}"
    );
    // At a terminal: Enter tries again (the server asks again), then
    // `:cancel` gives up with the error.
    let (code, transcript, _) = at_terminal(&sandbox, &["call", "new", "connect"], "\n:cancel\n");
    assert_eq!(code, 4, "{transcript}");
    assert_eq!(
        transcript
            .matches("server `new` needs you to open a web page first")
            .count(),
        2,
        "asked, tried again, asked again: {transcript}"
    );
}

/// Without a person at a terminal nothing is offered: the server learns
/// that this client takes no questions, and nothing waits for an answer.
#[test]
fn without_a_terminal_no_question_is_offered() {
    let sandbox = sandbox();
    let (code, stdout, stderr) = sandbox.run(&["call", "old", "ask", "--json"]);
    // The tool reports the refusal it met as its error.
    assert_eq!(code, 5, "{stderr}");
    assert!(!stderr.contains("asks you"), "{stderr}");
    let user = &rounds(&stdout)["user"];
    assert!(
        user["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("elicitation")),
        "{user}"
    );
    // A 2026-07-28 server refuses the call for want of the capability; the
    // report says where the question could be answered.
    let (code, _, stderr) = sandbox.run(&["call", "new", "ask"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("-32021"), "{stderr}");
    assert!(
        stderr.contains("hint: `mcp` answers a server's questions (elicitation, sampling) only when stdin and stderr are a terminal"),
        "{stderr}"
    );
    // A refusal of another kind gets no such hint.
    let (_, _, stderr) = sandbox.run(&["call", "new", "connect"]);
    assert!(!stderr.contains("only when stdin and stderr"), "{stderr}");
}

/// A server may list a tool that asks only to a client that can answer;
/// at a terminal `mcp tools` and `mcp inspect` declare what `mcp call`
/// will, so the listing shows what can be called there. Elsewhere nothing
/// is declared, and such a tool is not listed.
#[test]
fn at_a_terminal_the_listings_show_the_tools_that_ask() {
    let sandbox = sandbox();
    let (code, transcript, stdout) = at_terminal(&sandbox, &["tools", "--format", "json"], "");
    assert_eq!(code, 0, "{transcript}");
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let listed = doc.to_string();
    for server in ["old", "new"] {
        assert!(
            listed.contains(&format!("\"{server}/shy\"")),
            "{server}: {listed}"
        );
    }
    let (code, transcript, stdout) = at_terminal(&sandbox, &["inspect", "new", "--json"], "");
    assert_eq!(code, 0, "{transcript}");
    assert!(stdout.contains("\"shy\""), "{stdout}");

    let (code, stdout, stderr) = sandbox.run(&["tools", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("/ask\""), "{stdout}");
    assert!(!stdout.contains("shy"), "{stdout}");
}
