//! The Skills extension (`io.modelcontextprotocol/skills`): `skills/list`,
//! `skills/get`, `resources/directory/read`, and the files as resources
//! (`skill://<path>/<file>`), with tampering on purpose.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::request::{Era, cacheable};
use crate::server::Shared;
use crate::wire;

/// The extension's identifier.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// One skill the script serves.
///
/// JSON: `{"path": "pdf-processing", "frontmatter": {"name": …,
/// "description": …}, "files": [{"path": "SKILL.md", "text": "---\n…"}],
/// "tamper": "digest", "dynamic": false}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillSpec {
    /// The skill path under `skill://` (`pdf-processing`,
    /// `acme/billing/refunds`).
    pub path: String,
    /// The frontmatter its entry carries (the script keeps it equal to the
    /// `SKILL.md` text's, unless it tampers).
    pub frontmatter: Value,
    /// Its files by path under the skill root, `SKILL.md` among them.
    pub files: Vec<SkillFileSpec>,
    /// How the server lies about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tamper: Option<SkillTamper>,
    /// `"resources": "dynamic"` instead of a manifest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dynamic: bool,
}

/// One file of a [`SkillSpec`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillFileSpec {
    /// Its path under the skill root (`SKILL.md`, `references/FORMS.md`).
    pub path: String,
    /// Its text.
    pub text: String,
}

/// A skill served unlike its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillTamper {
    /// `SKILL.md` is served with one byte changed (same length).
    Digest,
    /// `SKILL.md` is served with bytes the manifest does not count.
    Size,
    /// The entry's frontmatter `description` differs from the file's
    /// (the manifest matches the file, so only the frontmatter check fails).
    Frontmatter,
    /// The manifest says `SKILL.md` is 16 MiB + 1 byte.
    Oversize,
}

impl SkillSpec {
    /// A skill of one `SKILL.md` whose frontmatter is `name` and
    /// `description`, then `body`.
    pub fn simple(path: &str, name: &str, description: &str, body: &str) -> Self {
        let text = format!("---\nname: {name}\ndescription: {description}\n---\n{body}");
        Self {
            path: path.to_owned(),
            frontmatter: json!({"name": name, "description": description}),
            files: vec![SkillFileSpec {
                path: "SKILL.md".to_owned(),
                text,
            }],
            tamper: None,
            dynamic: false,
        }
    }

    /// Adds a supporting file.
    pub fn file(mut self, path: &str, text: &str) -> Self {
        self.files.push(SkillFileSpec {
            path: path.to_owned(),
            text: text.to_owned(),
        });
        self
    }

    /// Serves it tampered.
    pub fn tampered(mut self, tamper: SkillTamper) -> Self {
        self.tamper = Some(tamper);
        self
    }

    /// The URI of its `SKILL.md`.
    pub fn uri(&self) -> String {
        format!("skill://{}/SKILL.md", self.path)
    }

    fn file_uri(&self, file: &SkillFileSpec) -> String {
        format!("skill://{}/{}", self.path, file.path)
    }

    /// The entry `skills/list` and `skills/get` give.
    fn entry(&self) -> Value {
        let mut frontmatter = self.frontmatter.clone();
        if self.tamper == Some(SkillTamper::Frontmatter) {
            frontmatter["description"] = json!("(the entry's description, not the file's)");
        }
        let resources = if self.dynamic {
            json!("dynamic")
        } else {
            let files: Vec<Value> = self
                .files
                .iter()
                .map(|f| {
                    let mut size = f.text.len() as u64;
                    if self.tamper == Some(SkillTamper::Oversize) && f.path == "SKILL.md" {
                        size = 16 * 1024 * 1024 + 1;
                    }
                    json!({"uri": self.file_uri(f), "digest": digest(f.text.as_bytes()), "size": size})
                })
                .collect();
            json!(files)
        };
        json!({"uri": self.uri(), "frontmatter": frontmatter, "resources": resources})
    }

    /// The text served for `file`.
    fn served(&self, file: &SkillFileSpec) -> String {
        let mut text = file.text.clone();
        if file.path == "SKILL.md" {
            match self.tamper {
                Some(SkillTamper::Digest) => {
                    // One byte changed, the length kept.
                    let last = text.pop().unwrap_or(' ');
                    text.push(if last == '!' { '?' } else { '!' });
                }
                Some(SkillTamper::Size) => {
                    text.push_str("extra bytes the manifest did not count\n")
                }
                _ => {}
            }
        }
        text
    }
}

/// `sha256:` and the hex digest of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// `skills/list`: paged like every list (the script's `page_size`).
pub(crate) async fn list(shared: &Shared, id: &Value, era: Era, params: &Value) {
    let skills: Vec<Value> = shared.script.skills.iter().map(SkillSpec::entry).collect();
    crate::lists::send_page(shared, id, era, params, "skills", skills, false).await;
}

/// `skills/get {uri}`: the entry, or `-32602`.
pub(crate) async fn get(shared: &Shared, id: &Value, era: Era, params: &Value) {
    let uri = params.get("uri").and_then(Value::as_str).unwrap_or("");
    let reply = match shared.script.skills.iter().find(|s| s.uri() == uri) {
        Some(skill) => wire::result(id, cacheable(shared, era, json!({"skill": skill.entry()}))),
        None => wire::error(
            id,
            wire::INVALID_PARAMS,
            &format!("No skill is served at {uri}"),
            None,
        ),
    };
    shared.send(&reply).await;
}

/// The served text of the skill file at `uri`, if it is one.
pub(crate) fn read(shared: &Shared, uri: &str) -> Option<Value> {
    shared.script.skills.iter().find_map(|skill| {
        skill
            .files
            .iter()
            .find(|f| skill.file_uri(f) == uri)
            .map(|f| {
                let mime = if f.path.ends_with(".md") {
                    "text/markdown"
                } else {
                    "text/plain"
                };
                json!({"uri": uri, "mimeType": mime, "text": skill.served(f)})
            })
    })
}

/// `resources/directory/read {uri}`: the direct children of a skill
/// directory (files, and subdirectories as `inode/directory`), or `-32602`.
pub(crate) async fn read_directory(shared: &Shared, id: &Value, params: &Value) {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim_end_matches('/');
    let mut found = false;
    let mut children: Vec<Value> = Vec::new();
    let mut dirs = BTreeSet::new();
    for skill in &shared.script.skills {
        for file in &skill.files {
            let file_uri = skill.file_uri(file);
            let Some(rest) = file_uri.strip_prefix(&format!("{uri}/")) else {
                continue;
            };
            found = true;
            match rest.split_once('/') {
                Some((dir, _)) => {
                    dirs.insert(dir.to_owned());
                }
                None => children.push(json!({"uri": file_uri, "name": rest})),
            }
        }
    }
    for dir in dirs {
        children.push(
            json!({"uri": format!("{uri}/{dir}"), "name": dir, "mimeType": "inode/directory"}),
        );
    }
    let reply = if found {
        wire::result(id, json!({"resultType": "complete", "resources": children}))
    } else {
        wire::error(
            id,
            wire::INVALID_PARAMS,
            &format!("{uri} is not a directory resource"),
            None,
        )
    };
    shared.send(&reply).await;
}
