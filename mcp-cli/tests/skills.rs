//! `mcp skills` and `mcp skill` through the binary: listing reads nothing,
//! loading verifies (a tampered skill is exit 4 with the check named and
//! none of its text shown), names resolve within the server (unknown and
//! ambiguous names are exit 1), files by path, the `allow.skills` list, and
//! the server's text escaped.

mod support;

use serde_json::{Value, json};
use support::*;

fn skill(path: &str, name: &str, description: &str, body: &str) -> Value {
    json!({
        "path": path,
        "frontmatter": {"name": name, "description": description},
        "files": [
            {"path": "SKILL.md", "text": format!("---\nname: {name}\ndescription: {description}\n---\n{body}")},
            {"path": "references/FORMS.md", "text": "# Forms\n"}
        ]
    })
}

fn server(skills: Vec<Value>) -> Value {
    script(json!({"versions": ["2025-06-18", "2026-07-28"], "skills": skills}))
}

#[test]
fn skills_are_listed_and_loaded_verified() {
    let sandbox = Sandbox::new().with_servers(&[(
        "docs",
        server(vec![
            skill(
                "pdf-processing",
                "pdf-processing",
                "Extract PDFs",
                "# PDF \u{1b}[2J\nUse FORMS.\n",
            ),
            skill("acme/refunds", "refunds", "Refunds", "# Refunds\n"),
        ]),
    )]);
    let (code, stdout, stderr) = sandbox.run(&["skills", "docs"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("pdf-processing") && stdout.contains("skill://acme/refunds/SKILL.md"),
        "{stdout}"
    );
    let (code, stdout, _) = sandbox.run(&["skills", "docs", "--json"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["skills"].as_array().unwrap().len(), 2);
    assert_eq!(doc["skills"][0]["resources"].as_array().unwrap().len(), 2);

    let (code, stdout, stderr) = sandbox.run(&["skill", "docs", "pdf-processing"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("skill from server `docs`, verified"),
        "{stdout}"
    );
    assert!(stdout.contains(r"# PDF \u{1b}[2J"), "escaped: {stdout}");
    assert!(
        !stdout.contains('\u{1b}'),
        "a raw escape reached the terminal"
    );
    // By path or URI too; a file of the skill by its path.
    let (code, stdout, _) = sandbox.run(&["skill", "docs", "acme/refunds"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("# Refunds"), "{stdout}");
    let (code, stdout, stderr) = sandbox.run(&[
        "skill",
        "docs",
        "skill://pdf-processing/SKILL.md",
        "--file",
        "references/FORMS.md",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["file"]["text"], "# Forms\n");
    assert_eq!(doc["frontmatter"]["description"], "Extract PDFs");
    // A file the skill does not list is refused (exit 4), never read.
    let (code, _, stderr) =
        sandbox.run(&["skill", "docs", "pdf-processing", "--file", "secret.md"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("is not one of its files"), "{stderr}");
}

#[test]
fn a_tampered_skill_is_exit_4_naming_the_check() {
    for (tamper, said) in [
        ("digest", "digest check failed"),
        ("size", "size check failed"),
        ("frontmatter", "frontmatter check failed"),
        ("oversize", "over the limit of 16777216"),
    ] {
        let mut bad = skill(
            "pdf-processing",
            "pdf-processing",
            "Extract PDFs",
            "# Hidden text\n",
        );
        bad["tamper"] = json!(tamper);
        // From a file: `digest` in an argument looks like an auth scheme to
        // the configuration's credential check.
        let sandbox = Sandbox::new();
        let script = json!({"versions": ["2025-06-18", "2026-07-28"], "skills": [bad]});
        sandbox.write("script.json", &script.to_string());
        let file = sandbox.path().join("script.json");
        let entry = json!({"command": testkit(), "args": ["--script", file]});
        let sandbox = sandbox.with_servers(&[("docs", entry)]);
        let (code, stdout, stderr) = sandbox.run(&["skill", "docs", "pdf-processing"]);
        assert_eq!(code, 4, "{tamper}: {stderr}");
        assert!(stderr.contains(said), "{tamper}: {stderr}");
        assert!(!stdout.contains("Hidden text") && !stderr.contains("Hidden text"));
        let (code, stdout, _) = sandbox.run(&["skill", "docs", "pdf-processing", "--json"]);
        assert_eq!(code, 4);
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(doc["error"]["cause"], "server", "{tamper}: {doc}");
    }
}

#[test]
fn names_resolve_within_the_server_and_the_allow_list_applies() {
    let twins = server(vec![
        skill(
            "acme/billing/refunds",
            "refunds",
            "Billing refunds",
            "# A\n",
        ),
        skill(
            "acme/support/refunds",
            "refunds",
            "Support refunds",
            "# B\n",
        ),
    ]);
    let sandbox = Sandbox::new().with_servers(&[("docs", twins.clone())]);
    let (code, _, stderr) = sandbox.run(&["skill", "docs", "refunds"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("skill://acme/billing/refunds/SKILL.md")
            && stderr.contains("skill://acme/support/refunds/SKILL.md"),
        "{stderr}"
    );
    let (code, stdout, _) = sandbox.run(&["skill", "docs", "acme/support/refunds"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("# B"));
    let (code, _, stderr) = sandbox.run(&["skill", "docs", "nope"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("no skill named `nope`"), "{stderr}");

    let mut allowed = twins;
    allowed["allow"] = json!({"skills": ["skill://acme/billing/refunds/SKILL.md"]});
    let sandbox = Sandbox::new().with_servers(&[("docs", allowed)]);
    let (_, stdout, _) = sandbox.run(&["skills", "docs", "--json"]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["skills"].as_array().unwrap().len(), 1, "{stdout}");
    let (code, _, stderr) =
        sandbox.run(&["skill", "docs", "skill://acme/support/refunds/SKILL.md"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("denied") || stderr.contains("not allowed"),
        "{stderr}"
    );
}
