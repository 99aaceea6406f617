//! `mcp skills` (a server's skills, nothing read) and `mcp skill` (one
//! skill loaded and verified: its SKILL.md, or one of its files).

use mcp_hub::Discovery;
use mcp_types::text::{escape_content, escape_line};
use mcp_types::{Skill, SkillFiles};
use serde_json::json;

use crate::args::{SkillArgs, SkillsArgs};
use crate::commands::{Context, resolve, split_server, with_server};
use crate::error::CliError;
use crate::output::{self, one_line, table, to_json};

pub(crate) async fn list(ctx: &Context, args: SkillsArgs) -> Result<(), CliError> {
    let target = resolve(ctx, "skills", args.server.as_deref(), &args.target)?;
    let name = target.name().to_owned();
    let skills = with_server(ctx, &target, Discovery::Lazy, |hub| async move {
        Ok(hub.facade().list_skills(&name).await?)
    })
    .await?;
    if args.json {
        return output::print_json(&json!({
            "server": target.name(),
            "skills": to_json(&skills),
        }));
    }
    if skills.is_empty() {
        return output::print(&ctx.ui.out().dim("(no skills)\n"));
    }
    let rows = skills
        .iter()
        .map(|s| {
            let (files, bytes) = match &s.resources {
                SkillFiles::Listed(files) => (
                    files.len().to_string(),
                    files.iter().map(|f| f.size).sum::<u64>().to_string(),
                ),
                _ => ("dynamic".to_owned(), "-".to_owned()),
            };
            vec![
                one_line(s.name().unwrap_or("(no name)"), 40),
                one_line(&s.uri, 60),
                files,
                bytes,
                one_line(s.description().unwrap_or(""), 60),
            ]
        })
        .collect();
    output::print(&table(
        &["name", "uri", "files", "bytes", "description"],
        rows,
    ))
}

pub(crate) async fn load(ctx: &Context, args: SkillArgs) -> Result<(), CliError> {
    let (server, rest) = split_server(&args.words, &args.target);
    let target = resolve(ctx, "skill", server, &args.target)?;
    let wanted = rest
        .first()
        .cloned()
        .ok_or(CliError::MissingWord { what: "SKILL" })?;
    let name = target.name().to_owned();
    let file = args.file.clone();
    let (entry, text, file_bytes) = with_server(ctx, &target, Discovery::Lazy, |hub| async move {
        let facade = hub.facade();
        let uri = if wanted.contains("://") {
            wanted
        } else {
            let skills = facade.list_skills(&name).await?;
            pick(&name, &wanted, &skills)?
        };
        let loaded = facade.load_skill(&name, &uri).await?;
        let file_bytes = match &file {
            None => None,
            Some(path) => {
                let root = uri.strip_suffix("SKILL.md").unwrap_or(&uri);
                let file_uri = format!("{root}{}", path.trim_start_matches('/'));
                let bytes = facade
                    .read_skill_file(&name, &loaded.entry, &file_uri)
                    .await?;
                Some((file_uri, bytes))
            }
        };
        Ok((loaded.entry.clone(), loaded.text, file_bytes))
    })
    .await?;
    if args.json {
        let mut doc = json!({
            "server": target.name(),
            "uri": entry.uri,
            "name": entry.name(),
            "frontmatter": entry.frontmatter,
            "text": text,
        });
        if let Some((uri, bytes)) = &file_bytes {
            doc["file"] = match std::str::from_utf8(bytes) {
                Ok(text) => json!({"uri": uri, "text": text}),
                Err(_) => json!({"uri": uri, "bytes": bytes.len()}),
            };
        }
        return output::print_json(&doc);
    }
    let paint = ctx.ui.out();
    let (label, shown) = match &file_bytes {
        None => (entry.uri.clone(), text),
        Some((uri, bytes)) => (
            uri.clone(),
            match std::str::from_utf8(bytes) {
                Ok(text) => text.to_owned(),
                Err(_) => format!("[{} bytes of binary content; see --json]\n", bytes.len()),
            },
        ),
    };
    let mut out = paint.dim(&format!(
        "── skill from server `{}`, verified against its listing: {}\n",
        target.name(),
        escape_line(&label)
    ));
    out.push_str(&escape_content(&shown));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    output::print(&out)
}

/// The URI of the one listed skill called `wanted` (by its frontmatter
/// name, or its path in the URI).
fn pick(server: &str, wanted: &str, skills: &[Skill]) -> Result<String, CliError> {
    let matches: Vec<&Skill> = skills
        .iter()
        .filter(|s| s.name() == Some(wanted) || skill_path(&s.uri) == Some(wanted))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.uri.clone()),
        [] => Err(CliError::UnknownSkill {
            server: server.to_owned(),
            name: escape_line(wanted).into_owned(),
            known: skills
                .iter()
                .filter_map(|s| s.name().map(|n| escape_line(n).into_owned()))
                .collect(),
        }),
        several => Err(CliError::AmbiguousSkill {
            server: server.to_owned(),
            name: escape_line(wanted).into_owned(),
            candidates: several
                .iter()
                .map(|s| escape_line(&s.uri).into_owned())
                .collect(),
        }),
    }
}

/// `acme/billing/refunds` of `skill://acme/billing/refunds/SKILL.md`.
fn skill_path(uri: &str) -> Option<&str> {
    uri.split_once("://")
        .and_then(|(_, rest)| rest.strip_suffix("/SKILL.md"))
}
