//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640):
//! `skills/list`, `skills/get` and `resources/directory/read`.
//!
//! A skill is a directory of files served as resources; its entry carries
//! the `SKILL.md` frontmatter as JSON and a manifest of every file with its
//! SHA-256 digest and size (or `"dynamic"` when the server cannot publish
//! stable digests). Verifying files against the entry is the session's job
//! (`mcp_session::Session::load_skill`); these are the wire shapes only.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::JsonObject;
use crate::cache::CacheScope;
use crate::capabilities::ServerCapabilities;
use crate::common::Cursor;
use crate::input_required::ResultType;
use crate::meta::Meta;
use crate::open_struct::open_struct;
use crate::resources::Resource;

/// The extension's identifier, the key of its entry in the server's
/// `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The file every skill has at its root.
pub const SKILL_FILE: &str = "SKILL.md";

/// The MIME type of a directory resource in `resources/directory/read`.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

impl ServerCapabilities {
    /// Declares the Skills extension (`skills/list`, `skills/get`) under
    /// `extensions`, with `directoryRead: true` when the server also
    /// answers `resources/directory/read`. Its settings sit inline under
    /// the identifier (an empty object when there is no option to state).
    /// A server declaring it serves its skills' files as resources, so it
    /// declares `resources` too.
    pub fn declare_skills(&mut self, directory_read: bool) {
        let mut settings = JsonObject::new();
        if directory_read {
            settings.insert("directoryRead".to_owned(), Value::Bool(true));
        }
        self.extensions
            .get_or_insert_with(Default::default)
            .insert(SKILLS_EXTENSION.to_owned(), Value::Object(settings));
    }

    /// Whether the Skills extension is declared with `directoryRead: true`.
    pub fn skills_directory_read(&self) -> bool {
        self.extensions
            .as_ref()
            .and_then(|e| e.get(SKILLS_EXTENSION))
            .and_then(|settings| settings.get("directoryRead"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

open_struct! {
    /// One file of a skill, with the digest and size of its raw bytes.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SkillResource {
        /// The file's resource URI.
        req uri: String = "uri",
        /// `sha256:` and 64 lowercase hex digits of the file's raw bytes.
        req digest: String = "digest",
        /// The length in bytes of the file's raw content.
        req size: u64 = "size",
    }
}

/// A skill's files: the complete manifest, or `"dynamic"` (generated
/// content, no digests to verify against).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SkillFiles {
    /// Every file of the skill, `SKILL.md` included, each once.
    Listed(Vec<SkillResource>),
    /// The server cannot publish stable digests.
    Dynamic,
}

impl Serialize for SkillFiles {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillFiles::Listed(files) => files.serialize(s),
            SkillFiles::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillFiles {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Anything but an array of files or the string "dynamic" makes the
        // entry invalid (the extension forbids loading such a skill).
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Listed(Vec<SkillResource>),
            Word(String),
        }
        match Wire::deserialize(d)? {
            Wire::Listed(files) => Ok(SkillFiles::Listed(files)),
            Wire::Word(word) if word == "dynamic" => Ok(SkillFiles::Dynamic),
            Wire::Word(_) => Err(D::Error::custom(
                "`resources` is neither a list of files nor \"dynamic\"",
            )),
        }
    }
}

open_struct! {
    /// The entry of one skill, from `skills/list` or `skills/get`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Skill {
        /// The URI of the skill's `SKILL.md`.
        req uri: String = "uri",
        /// The `SKILL.md` YAML frontmatter as a JSON object (`name` and
        /// `description` at least; every other field as written).
        req frontmatter: JsonObject = "frontmatter",
        /// The skill's files, or `"dynamic"`.
        req resources: SkillFiles = "resources",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

impl Skill {
    /// The frontmatter's `name` (the skill's label, not its identity: two
    /// skills of one server may share it).
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(|v| v.as_str())
    }

    /// The frontmatter's `description`.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(|v| v.as_str())
    }

    /// The manifest's entry for `uri`, if the files are listed.
    pub fn file(&self, uri: &str) -> Option<&SkillResource> {
        match &self.resources {
            SkillFiles::Listed(files) => files.iter().find(|f| f.uri == uri),
            SkillFiles::Dynamic => None,
        }
    }
}

open_struct! {
    /// Result of `skills/list`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ListSkillsResult {
        /// The skills on this page.
        req skills: Vec<Skill> = "skills",
        /// Cursor of the next page, if any.
        opt next_cursor: Cursor = "nextCursor",
        /// Cache lifetime hint in milliseconds.
        opt ttl_ms: u64 = "ttlMs",
        /// Who may share a cached copy.
        opt cache_scope: CacheScope = "cacheScope",
        /// The result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Params of `skills/get`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct GetSkillParams {
        /// The URI of the skill's `SKILL.md`.
        req uri: String = "uri",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl GetSkillParams {
    /// Params naming the skill at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            ..Self::default()
        }
    }
}

open_struct! {
    /// Result of `skills/get`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct GetSkillResult {
        /// The skill's entry.
        req skill: Skill = "skill",
        /// Cache lifetime hint in milliseconds.
        opt ttl_ms: u64 = "ttlMs",
        /// Who may share a cached copy.
        opt cache_scope: CacheScope = "cacheScope",
        /// The result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Params of `resources/directory/read`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ReadDirectoryParams {
        /// The directory resource's URI (no trailing slash).
        req uri: String = "uri",
        /// Where to continue, from a previous result's `nextCursor`.
        opt cursor: Cursor = "cursor",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl ReadDirectoryParams {
    /// Params asking for the page of `uri`'s children after `cursor`.
    pub fn new(uri: impl Into<String>, cursor: Option<Cursor>) -> Self {
        Self {
            uri: uri.into(),
            cursor,
            ..Self::default()
        }
    }
}

open_struct! {
    /// Result of `resources/directory/read`: the direct children of a
    /// directory (subdirectories have `mimeType` `inode/directory`).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ReadDirectoryResult {
        /// The children on this page.
        req resources: Vec<Resource> = "resources",
        /// Cursor of the next page, if any.
        opt next_cursor: Cursor = "nextCursor",
        /// The result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_read_both_forms_of_resources_and_refuse_others() {
        let listed: Skill = serde_json::from_value(json!({
            "uri": "skill://pdf/SKILL.md",
            "frontmatter": {"name": "pdf", "description": "PDFs", "license": "MIT"},
            "resources": [{"uri": "skill://pdf/SKILL.md", "digest": "sha256:00", "size": 3}]
        }))
        .unwrap();
        assert_eq!(listed.name(), Some("pdf"));
        assert_eq!(listed.file("skill://pdf/SKILL.md").unwrap().size, 3);
        assert_eq!(
            serde_json::to_value(&listed).unwrap()["frontmatter"]["license"],
            "MIT"
        );
        let dynamic: Skill = serde_json::from_value(json!({
            "uri": "skill://daily/SKILL.md",
            "frontmatter": {"name": "daily", "description": "d"},
            "resources": "dynamic"
        }))
        .unwrap();
        assert_eq!(dynamic.resources, SkillFiles::Dynamic);
        assert_eq!(
            serde_json::to_value(&dynamic).unwrap()["resources"],
            "dynamic"
        );
        for bad in [json!("static"), json!(null), json!({"uri": "x"})] {
            let entry = json!({"uri": "u", "frontmatter": {}, "resources": bad});
            assert!(serde_json::from_value::<Skill>(entry).is_err(), "{bad}");
        }
        let missing = json!({"uri": "u", "frontmatter": {}});
        assert!(serde_json::from_value::<Skill>(missing).is_err());
    }
}
