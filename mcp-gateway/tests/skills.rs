//! The servers' skills (the Skills extension) through the gateway: two
//! servers' skills of one name stay distinct (`skill://SERVER/PATH`), listed
//! across servers page by page, fetched, loaded and verified by the host
//! (the content passes unchanged, so the digests hold and a tampered file
//! is caught), directories read with their subdirectories; the allow-lists
//! hold; a URI that is not the gateway's is refused; an entry over the
//! extension's bounds is a named error; both eras of host.

#[path = "support/common.rs"]
mod common;

use common::*;
use mcp_hub::{Authority, ServerAuthority};
use mcp_session::{Negotiation, SessionError, SkillCheck};
use mcp_testkit::Script;
use mcp_testkit::skills::{SkillSpec, SkillTamper};
use mcp_types::{SkillFiles, error_codes};

const DOCS_PDF: &str = "skill://docs/pdf-processing/SKILL.md";
const OPS_PDF: &str = "skill://ops/pdf-processing/SKILL.md";
const DOCS_REFUNDS: &str = "skill://docs/acme/billing/refunds/SKILL.md";

/// A skill named `pdf-processing` whose text says which server has it, with
/// a nested directory.
fn pdf(server: &str) -> SkillSpec {
    SkillSpec::simple(
        "pdf-processing",
        "pdf-processing",
        &format!("PDFs, as {server} does them"),
        &format!("# PDF at {server}\n"),
    )
    .file("references/FORMS.md", "# Forms\n")
    .file("references/forms/W9.md", &format!("# W-9 of {server}\n"))
}

fn refunds() -> SkillSpec {
    SkillSpec::simple("acme/billing/refunds", "refunds", "Refunds", "# Refunds\n")
}

/// `docs`: two skills a page at a time, directories read; `ops`: one skill
/// of the same name as one of `docs`'.
fn servers() -> Vec<mcp_hub::ServerSpec> {
    let docs = Script::dual()
        .skill(pdf("docs"))
        .skill(refunds())
        .skills_directory_read()
        .page_size(1);
    let ops = Script::dual().skill(pdf("ops"));
    vec![spec("docs", memory(docs).0), spec("ops", memory(ops).0)]
}

async fn skills_are_served_distinct_verified_and_browsable(negotiation: Negotiation) {
    let mut setup = Setup::new(servers());
    setup.negotiation = negotiation;
    let running = start(setup).await;
    let host = &running.host;
    assert!(host.offers_skills(), "the gateway declares the extension");
    assert!(host.offers_directory_read(), "one server reads directories");

    // One listing across both servers, one server's page at a time: every
    // entry whole on its page, each skill once, every URI the gateway's.
    let mut uris = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let page = host.list_skills_page(cursor.as_deref()).await.unwrap();
        assert!(page.items.len() <= 1, "a page is one server's page");
        // A listing is cacheable: 2026-07-28 results carry the hints.
        let modern = negotiation == Negotiation::Modern;
        assert_eq!(page.ttl.is_some(), modern);
        assert_eq!(page.cache_scope.is_some(), modern);
        for skill in &page.items {
            let SkillFiles::Listed(files) = &skill.resources else {
                panic!("a listed manifest");
            };
            let root = skill.uri.strip_suffix("SKILL.md").unwrap();
            assert!(files.iter().all(|f| f.uri.starts_with(root)), "{files:?}");
            assert!(files.iter().any(|f| f.uri == skill.uri));
            uris.push(skill.uri.clone());
        }
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert!(cursor.is_none(), "the listing ends");
    assert_eq!(uris, [DOCS_PDF, DOCS_REFUNDS, OPS_PDF]);

    // `skills/get` names the skill as listed; each server's own.
    let docs = host.get_skill(DOCS_PDF).await.unwrap();
    let ops = host.get_skill(OPS_PDF).await.unwrap();
    assert_eq!(docs.name(), Some("pdf-processing"));
    assert_eq!(ops.name(), Some("pdf-processing"));
    assert_ne!(docs.description(), ops.description());

    // The host loads and verifies each through the gateway: size, digest
    // and frontmatter hold, and each is its own server's text.
    let loaded = host.load_skill(&docs).await.unwrap();
    assert_eq!(loaded.body(), "# PDF at docs\n");
    assert_eq!(
        host.load_skill(&ops).await.unwrap().body(),
        "# PDF at ops\n"
    );
    let nested = "skill://docs/pdf-processing/references/forms/W9.md";
    let bytes = host.read_skill_file(&docs, nested).await.unwrap();
    assert_eq!(bytes, b"# W-9 of docs\n");
    // SKILL.md read as a plain resource keeps the gateway's URI.
    let read = host.read_resource(DOCS_PDF).await.unwrap();
    assert_eq!(read.contents[0].uri(), DOCS_PDF);

    // Directories: direct children, subdirectories as `inode/directory`,
    // every URI the gateway's.
    let root = host
        .read_directory_page("skill://docs/pdf-processing", None)
        .await
        .unwrap();
    let mut children: Vec<(&str, bool)> = root
        .items
        .iter()
        .map(|r| {
            let directory = r.mime_type.as_deref() == Some(mcp_types::DIRECTORY_MIME_TYPE);
            (r.uri.as_str(), directory)
        })
        .collect();
    children.sort();
    assert_eq!(
        children,
        [
            (DOCS_PDF, false),
            ("skill://docs/pdf-processing/references", true),
        ]
    );
    let references = host
        .read_directory_page("skill://docs/pdf-processing/references", None)
        .await
        .unwrap();
    let mut children: Vec<&str> = references.items.iter().map(|r| r.uri.as_str()).collect();
    children.sort();
    assert_eq!(
        children,
        [
            "skill://docs/pdf-processing/references/FORMS.md",
            "skill://docs/pdf-processing/references/forms",
        ]
    );
    // A file is not a directory: the server's -32602 reaches the host.
    let file = host.read_directory_page(DOCS_PDF, None).await.unwrap_err();
    assert_eq!(file.code(), Some(error_codes::INVALID_PARAMS), "{file:?}");
    // `ops` reads no directories: none of its is served.
    let ops_dir = host
        .read_directory_page("skill://ops/pdf-processing", None)
        .await
        .unwrap_err();
    assert_eq!(ops_dir.code(), Some(error_codes::INVALID_PARAMS));
    running.close().await;
}

#[tokio::test]
async fn a_legacy_host_is_served_every_servers_skills_distinct_verified_and_browsable() {
    skills_are_served_distinct_verified_and_browsable(Negotiation::Legacy).await;
}

#[tokio::test]
async fn a_2026_host_is_served_every_servers_skills_distinct_verified_and_browsable() {
    skills_are_served_distinct_verified_and_browsable(Negotiation::Modern).await;
}

#[tokio::test]
async fn a_uri_that_is_not_the_gateways_is_refused() {
    let mut servers = servers();
    let plain = Script::dual().tool("noop", mcp_testkit::Behavior::Text { text: "ok".into() });
    servers.push(spec("plain", memory(plain).0));
    let running = start(Setup::new(servers)).await;
    let host = &running.host;
    for uri in [
        // No server of that name.
        "skill://nosuch/pdf-processing/SKILL.md",
        // A server's own URI, not the gateway's name for it.
        "skill://pdf-processing/SKILL.md",
        "file:///etc/passwd",
        // A served skill's file is not a skill.
        "skill://docs/pdf-processing/references/FORMS.md",
        // A server that offers no skills.
        "skill://plain/pdf-processing/SKILL.md",
    ] {
        let refused = host.get_skill(uri).await.unwrap_err();
        assert_eq!(refused.code(), Some(error_codes::INVALID_PARAMS), "{uri}");
    }
    for uri in [
        "skill://nosuch/pdf-processing",
        "mcp-gateway://docs",
        "skill://plain/pdf-processing",
    ] {
        let refused = host.read_directory_page(uri, None).await.unwrap_err();
        assert_eq!(refused.code(), Some(error_codes::INVALID_PARAMS), "{uri}");
    }
    running.close().await;
}

#[tokio::test]
async fn skills_follow_the_allow_lists_and_a_server_whose_resources_are_denied_shows_none() {
    let mut setup = Setup::new(servers());
    setup.authority = Authority::named()
        .with_server(
            "docs",
            // Skills allowed, but their files could not be read.
            ServerAuthority::default().resources(Vec::<String>::new()),
        )
        .with_server(
            "ops",
            ServerAuthority::default().skills(["skill://other/SKILL.md"]),
        );
    let running = start(setup).await;
    let host = &running.host;
    let listed = host.list_skills().await.unwrap();
    assert!(listed.items.is_empty(), "{:?}", listed.items);
    for uri in [DOCS_PDF, OPS_PDF] {
        let denied = host.get_skill(uri).await.unwrap_err();
        assert_eq!(denied.code(), Some(error_codes::INVALID_PARAMS), "{uri}");
    }
    let denied = host.read_resource(DOCS_PDF).await.unwrap_err();
    assert_eq!(denied.code(), Some(error_codes::INVALID_PARAMS));
    running.close().await;
}

#[tokio::test]
async fn a_skill_is_served_when_its_skill_md_is_an_allowed_resource_and_its_files_read_as_resources()
 {
    let mut setup = Setup::new(servers());
    // `ops` is not named: it gets nothing.
    setup.authority = Authority::named().with_server(
        "docs",
        ServerAuthority::default().resources(["skill://pdf-processing/SKILL.md"]),
    );
    let running = start(setup).await;
    let host = &running.host;
    let listed = host.list_skills().await.unwrap();
    let uris: Vec<&str> = listed.items.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(uris, [DOCS_PDF]);
    let denied = host.get_skill(DOCS_REFUNDS).await.unwrap_err();
    assert_eq!(denied.code(), Some(error_codes::INVALID_PARAMS));
    let entry = host.get_skill(DOCS_PDF).await.unwrap();
    host.load_skill(&entry).await.unwrap();
    // Its other files are resources the allow-list does not name.
    let nested = "skill://docs/pdf-processing/references/forms/W9.md";
    let refused = host.read_skill_file(&entry, nested).await.unwrap_err();
    assert_eq!(
        refused.code(),
        Some(error_codes::INVALID_PARAMS),
        "{refused:?}"
    );
    running.close().await;
}

#[tokio::test]
async fn a_tampered_file_passes_unchanged_and_the_host_refuses_it() {
    let tampered = Script::dual().skill(pdf("docs").tampered(SkillTamper::Digest));
    let running = start(Setup::new(vec![spec("docs", memory(tampered).0)])).await;
    let host = &running.host;
    let entry = host.get_skill(DOCS_PDF).await.unwrap();
    let refused = host.load_skill(&entry).await.unwrap_err();
    assert!(
        matches!(
            &refused,
            SessionError::SkillRefused {
                check: SkillCheck::Digest { .. },
                ..
            }
        ),
        "{refused:?}"
    );
    running.close().await;
}

#[tokio::test]
async fn an_entry_over_the_extensions_bounds_is_a_named_error_not_a_shorter_page() {
    let oversize = Script::dual()
        .skill(pdf("docs").tampered(SkillTamper::Oversize))
        .skill(refunds());
    let running = start(Setup::new(vec![spec("docs", memory(oversize).0)])).await;
    let host = &running.host;
    let listed = host.list_skills_page(None).await.unwrap_err();
    assert_eq!(
        listed.code(),
        Some(error_codes::INTERNAL_ERROR),
        "{listed:?}"
    );
    let said = listed.error_object().unwrap();
    assert_eq!(said.data.unwrap()["kind"], "skill_refused");
    assert!(said.message.contains("16 MiB"), "{}", said.message);
    let got = host.get_skill(DOCS_PDF).await.unwrap_err();
    assert_eq!(got.code(), Some(error_codes::INTERNAL_ERROR));
    // The other skill is still served.
    host.get_skill(DOCS_REFUNDS).await.unwrap();
    running.close().await;
}

#[tokio::test]
async fn without_a_server_offering_skills_the_extension_is_not_declared() {
    let plain = Script::dual().tool("noop", mcp_testkit::Behavior::Text { text: "ok".into() });
    let running = start(Setup::new(vec![spec("plain", memory(plain).0)])).await;
    let host = &running.host;
    assert!(!host.offers_skills());
    // The server half refuses what was not declared.
    let refused = host
        .request::<mcp_types::requests::ListSkills>(&Default::default())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(error_codes::METHOD_NOT_FOUND));
    running.close().await;
}
