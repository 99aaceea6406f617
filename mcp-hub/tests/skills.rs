//! Skills through the hub: per-server helpers (`server/list_skills`,
//! `server/load_skill`) so two servers' same-URI skills never collide, the
//! skills allow-list, verification failures refused whole, the facade, and
//! audit records naming the skill.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;

use common::*;
use mcp_hub::{
    Authority, DenyReason, Hub, HubConfig, HubError, Operation, ServerAuthority, ServerSpec,
    TargetKind,
};
use mcp_session::{Negotiation, SessionError};
use mcp_testkit::Script;
use mcp_testkit::skills::{SkillSpec, SkillTamper};
use serde_json::json;

const PDF: &str = "skill://pdf-processing/SKILL.md";
const REFUNDS: &str = "skill://refunds/SKILL.md";

fn pdf(description: &str) -> SkillSpec {
    SkillSpec::simple("pdf-processing", "pdf-processing", description, "# PDF\n")
        .file("references/FORMS.md", "# Forms\n")
}

fn refunds() -> SkillSpec {
    SkillSpec::simple("refunds", "refunds", "Refund requests", "# Refunds\n")
}

fn spec(name: &str, script: Script, modern: bool) -> ServerSpec {
    let (connector, _) = memory(script);
    ServerSpec::new(name, connector)
        .session(quick_session())
        .negotiation(if modern {
            Negotiation::Modern
        } else {
            Negotiation::Legacy
        })
        .context_helpers(true)
}

/// Every exposed tool name.
fn exposed(hub: &Hub) -> Vec<String> {
    hub.namespace()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

#[tokio::test]
async fn skills_are_per_server_allow_listed_and_verified() {
    let trail = Arc::new(Trail::default());
    let hub = Hub::builder(HubConfig::default())
        .server(spec(
            "docs",
            Script::dual().skill(pdf("Extract PDFs")).skill(refunds()),
            false,
        ))
        // Same URI, another server: another skill.
        .server(spec("shady", Script::dual().skill(pdf("Other PDFs")), true))
        .authority(
            Authority::named()
                .with_server("docs", ServerAuthority::default().skills([PDF]))
                .with_server("shady", ServerAuthority::default()),
        )
        .audit_sink(trail.clone())
        .start()
        .await
        .unwrap();
    let names = exposed(&hub);
    for name in [
        "docs/list_skills",
        "docs/load_skill",
        "shady/list_skills",
        "shady/load_skill",
    ] {
        assert!(names.contains(&name.to_owned()), "{name}: {names:?}");
    }

    // The allow-list: docs offers two skills, one is allowed.
    let facade = hub.facade();
    let listed = facade.list_skills("docs").await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].uri, PDF);
    let denied = facade.load_skill("docs", REFUNDS).await.unwrap_err();
    assert!(
        matches!(
            &denied,
            HubError::Denied {
                kind: TargetKind::Skill,
                reason: DenyReason::NotAllowListed,
                ..
            }
        ),
        "{denied:?}"
    );

    // The model's helpers, per origin: each server's own text, labelled.
    let docs = hub
        .call("docs/load_skill", json!({"uri": PDF}))
        .await
        .unwrap();
    let docs = docs.structured_content.unwrap();
    assert_eq!(docs["server"], "docs");
    assert!(
        docs["skill"]
            .as_str()
            .unwrap()
            .contains("description: Extract PDFs")
    );
    let shady = hub
        .call("shady/load_skill", json!({"uri": PDF}))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(shady["server"], "shady");
    assert!(
        shady["skill"]
            .as_str()
            .unwrap()
            .contains("description: Other PDFs")
    );
    let listing = hub
        .call("docs/list_skills", json!({}))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(
        listing["skills"],
        json!([{"uri": PDF, "name": "pdf-processing", "description": "Extract PDFs"}])
    );

    // Host code reads a loaded skill's files against its entry.
    let loaded = facade.load_skill("docs", PDF).await.unwrap();
    let forms = facade
        .read_skill_file(
            "docs",
            &loaded.entry,
            "skill://pdf-processing/references/FORMS.md",
        )
        .await
        .unwrap();
    assert_eq!(forms, b"# Forms\n");

    let records = trail.0.lock().unwrap().clone();
    assert!(records.iter().any(|r| r.operation == Operation::LoadSkill
        && r.target.as_deref() == Some(PDF)
        && r.server.as_str() == "docs"));
    assert!(
        records
            .iter()
            .any(|r| r.operation == Operation::ReadSkillFile)
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_tampered_skill_is_refused_through_the_hub() {
    let cases = [
        (SkillTamper::Digest, "digest check failed"),
        (SkillTamper::Size, "size check failed"),
        (SkillTamper::Frontmatter, "frontmatter check failed"),
        (SkillTamper::Oversize, "over the limit of 16777216"),
    ];
    for modern in [false, true] {
        for (tamper, said) in cases {
            let hub = Hub::builder(HubConfig::default())
                .server(spec(
                    "docs",
                    Script::dual().skill(pdf("Extract PDFs").tampered(tamper)),
                    modern,
                ))
                .start()
                .await
                .unwrap();
            let err = hub.facade().load_skill("docs", PDF).await.unwrap_err();
            assert!(
                matches!(
                    &err,
                    HubError::Session {
                        error: SessionError::SkillRefused { .. },
                        ..
                    }
                ),
                "{err:?}"
            );
            assert!(err.to_string().contains(said), "{tamper:?}: {err}");
            assert!(!err.to_string().contains("# PDF"), "no content: {err}");
            assert_eq!(err.cause(), mcp_types::ErrorCause::Server);
            let helper = hub
                .call("docs/load_skill", json!({"uri": PDF}))
                .await
                .unwrap_err();
            assert!(helper.to_string().contains(said), "{tamper:?}: {helper}");
            hub.shutdown().await;
        }
    }
}

#[tokio::test]
async fn an_empty_skills_allow_list_hides_the_helpers() {
    let hub = Hub::builder(HubConfig::default())
        .server(spec("docs", Script::dual().skill(refunds()), false))
        .authority(Authority::named().with_server(
            "docs",
            ServerAuthority::default().skills(Vec::<String>::new()),
        ))
        .start()
        .await
        .unwrap();
    let names = exposed(&hub);
    assert!(!names.iter().any(|n| n.contains("skill")), "{names:?}");
    assert!(hub.facade().list_skills("docs").await.unwrap().is_empty());
    hub.shutdown().await;
}
