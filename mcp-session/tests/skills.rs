//! The Skills extension through the session, both eras: listing reads no
//! file, loading verifies `SKILL.md` (size, digest, frontmatter) and refuses
//! the skill whole on any failure without using the content, supporting
//! files only as the manifest lists them, bounds checked from the entry,
//! `skills/get`, `resources/directory/read` only where declared.

#[path = "support/common.rs"]
mod common;

use common::*;
use mcp_session::{Negotiation, SessionError, SkillCheck};
use mcp_testkit::Script;
use mcp_testkit::skills::{SkillSpec, SkillTamper};
use mcp_types::SkillFiles;

const BOTH: [Negotiation; 2] = [Negotiation::Legacy, Negotiation::Modern];

fn pdf() -> SkillSpec {
    SkillSpec::simple(
        "pdf-processing",
        "pdf-processing",
        "Extract, fill, and assemble PDF documents",
        "# PDF\n\nSee references/FORMS.md.\n",
    )
    .file("references/FORMS.md", "# Forms\n")
}

fn script(skills: Vec<SkillSpec>) -> Script {
    skills
        .into_iter()
        .fold(Script::dual(), Script::skill)
        .skills_directory_read()
}

fn reads(recorder: &mcp_testkit::Recorder) -> Vec<String> {
    recorder
        .with_method("resources/read")
        .iter()
        .filter_map(|f| f["params"]["uri"].as_str().map(str::to_owned))
        .collect()
}

fn refused_as_unlisted(err: &SessionError) -> bool {
    matches!(
        err,
        SessionError::SkillRefused {
            check: SkillCheck::Unlisted { .. },
            ..
        }
    )
}

#[tokio::test]
async fn a_listed_skill_loads_verified_and_only_when_asked() {
    for mode in BOTH {
        let (connector, recorder) = memory(script(vec![pdf()]));
        let session = ready(connector, quick_config(), mode).await;
        assert!(session.offers_skills() && session.offers_directory_read());
        let listing = session.list_skills().await.unwrap();
        assert_eq!(listing.items.len(), 1);
        let entry = &listing.items[0];
        assert_eq!(entry.name(), Some("pdf-processing"));
        assert!(matches!(&entry.resources, SkillFiles::Listed(f) if f.len() == 2));
        assert!(reads(&recorder).is_empty(), "{mode:?}: listing read a file");

        let loaded = session.load_skill(entry).await.unwrap();
        assert!(loaded.text.starts_with("---\nname: pdf-processing"));
        assert_eq!(loaded.body(), "# PDF\n\nSee references/FORMS.md.\n");
        assert_eq!(
            reads(&recorder),
            ["skill://pdf-processing/SKILL.md"],
            "{mode:?}"
        );
        let forms = session
            .read_skill_file(entry, "skill://pdf-processing/references/FORMS.md")
            .await
            .unwrap();
        assert_eq!(forms, b"# Forms\n");
        // A file the manifest does not list is refused before any read.
        let before = reads(&recorder).len();
        let err = session
            .read_skill_file(entry, "skill://pdf-processing/references/OTHER.md")
            .await
            .unwrap_err();
        assert!(refused_as_unlisted(&err), "{err:?}");
        assert_eq!(reads(&recorder).len(), before);

        let got = session.get_skill(&entry.uri).await.unwrap();
        assert_eq!(&got, entry);
        let missing = session
            .get_skill("skill://nope/SKILL.md")
            .await
            .unwrap_err();
        assert!(
            matches!(missing, SessionError::Server { code: -32602, .. }),
            "{missing:?}"
        );

        let root = session
            .read_directory_page("skill://pdf-processing", None)
            .await
            .unwrap();
        let names: Vec<&str> = root.items.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["SKILL.md", "references"], "{mode:?}");
        assert_eq!(root.items[1].mime_type.as_deref(), Some("inode/directory"));
    }
}

#[tokio::test]
async fn a_tampered_skill_is_refused_by_the_check_that_fails() {
    let cases = [
        (SkillTamper::Digest, "digest check failed"),
        (SkillTamper::Size, "size check failed"),
        (SkillTamper::Frontmatter, "frontmatter check failed"),
        (SkillTamper::Oversize, "over the limit of 16777216"),
    ];
    for mode in BOTH {
        for (tamper, said) in cases {
            let (connector, recorder) = memory(script(vec![pdf().tampered(tamper)]));
            let session = ready(connector, quick_config(), mode).await;
            let entry = session.list_skills().await.unwrap().items.remove(0);
            let err = session.load_skill(&entry).await.unwrap_err();
            let text = err.to_string();
            assert!(text.contains(said), "{mode:?} {tamper:?}: {text}");
            assert!(
                text.contains("skill://pdf-processing/SKILL.md"),
                "names the skill: {text}"
            );
            assert!(!text.contains("# PDF"), "no content in the error: {text}");
            assert_eq!(err.cause(), mcp_types::ErrorCause::Server);
            let expected_reads = usize::from(tamper != SkillTamper::Oversize);
            assert_eq!(
                reads(&recorder).len(),
                expected_reads,
                "{mode:?} {tamper:?}: an oversize skill is refused from its entry"
            );
        }
    }
}

#[tokio::test]
async fn servers_without_the_extension_are_not_asked() {
    let (connector, recorder) = memory(Script::dual());
    let session = ready(connector, quick_config(), Negotiation::Modern).await;
    assert!(!session.offers_skills());
    let err = session.list_skills().await.unwrap_err();
    assert!(matches!(err, SessionError::NotOffered { .. }), "{err:?}");
    assert!(recorder.with_method("skills/list").is_empty());
    // Skills but no `directoryRead`: no directory reads either.
    let (connector, recorder) = memory(Script::dual().skill(pdf()));
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    assert!(session.offers_skills() && !session.offers_directory_read());
    let err = session
        .read_directory_page("skill://pdf-processing", None)
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::NotOffered { .. }), "{err:?}");
    assert!(recorder.with_method("resources/directory/read").is_empty());
}

#[tokio::test]
async fn listings_page_and_dynamic_skills_load_within_their_directory() {
    let mut daily = SkillSpec::simple("reports/daily", "daily", "Today's report", "# Daily\n")
        .file("data/today.md", "numbers\n");
    daily.dynamic = true;
    let skills = vec![pdf(), daily, SkillSpec::simple("c", "c", "C", "# C\n")];
    for mode in BOTH {
        let script = skills
            .clone()
            .into_iter()
            .fold(Script::dual(), Script::skill)
            .page_size(1);
        let (connector, recorder) = memory(script);
        let session = ready(connector, quick_config(), mode).await;
        let listing = session.list_skills().await.unwrap();
        let uris: Vec<&str> = listing.items.iter().map(|s| s.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://pdf-processing/SKILL.md",
                "skill://reports/daily/SKILL.md",
                "skill://c/SKILL.md"
            ],
            "{mode:?}"
        );
        assert_eq!(
            recorder.with_method("skills/list").len(),
            3,
            "one page each"
        );
        let daily = &listing.items[1];
        assert_eq!(daily.resources, SkillFiles::Dynamic);
        // No digests to check, but the frontmatter still is, and only files
        // under the skill's own directory are read.
        let loaded = session.load_skill(daily).await.unwrap();
        assert_eq!(loaded.body(), "# Daily\n");
        let data = session
            .read_skill_file(daily, "skill://reports/daily/data/today.md")
            .await
            .unwrap();
        assert_eq!(data, b"numbers\n");
        let err = session
            .read_skill_file(daily, "skill://pdf-processing/SKILL.md")
            .await
            .unwrap_err();
        assert!(refused_as_unlisted(&err), "{err:?}");
    }
}
