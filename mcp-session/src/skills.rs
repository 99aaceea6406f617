//! The Skills extension (`io.modelcontextprotocol/skills`): listing skills,
//! and loading one only when asked, with every file checked against its
//! entry before anything sees it.
//!
//! Loading reads the skill's `SKILL.md` (never on connect, listing or
//! approval), checks its size and `sha256:` digest against the entry's
//! manifest, parses its YAML frontmatter (bounded) and compares it field by
//! field with the entry's. Any failure refuses the skill whole with
//! [`SessionError::SkillRefused`] naming the check; the unverified text is
//! dropped, never returned. Supporting files are read the same way, and only
//! those the manifest lists.

use std::fmt;

use mcp_types::Request as _;
use mcp_types::requests::{GetSkill, ListSkills, ReadDirectory};
use mcp_types::text::Untrusted;
use mcp_types::{
    GetSkillParams, JsonObject, PaginatedParams, ReadDirectoryParams, Resource, ResourceContents,
    SKILL_FILE, SKILLS_EXTENSION, Skill, SkillFiles, SkillResource,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::page::Page;
use crate::session::{Ready, Session};
use crate::surface::{ListKind, Listing};
use crate::{CallOptions, SessionError};

/// Most files one skill's manifest may list (the extension's limit).
pub const MAX_SKILL_FILES: usize = 512;
/// Most bytes one skill's files may total, and one file may have (the
/// extension's limit, 16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;
/// Longest `SKILL.md` frontmatter parsed.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;
/// Deepest nesting of the frontmatter's YAML.
pub const MAX_FRONTMATTER_DEPTH: usize = 32;
/// Most YAML nodes in a frontmatter (aliases counted as they expand).
const MAX_FRONTMATTER_NODES: usize = 10_000;

/// Which check refused a skill. Says what was wrong, never the content.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillCheck {
    /// The manifest lists more files than [`MAX_SKILL_FILES`].
    TooManyFiles {
        /// Files listed.
        files: usize,
    },
    /// The manifest's sizes (or a dynamic skill's reads) total more than
    /// [`MAX_SKILL_BYTES`].
    TooLarge {
        /// Bytes counted.
        bytes: u64,
    },
    /// The manifest does not list the skill's own `SKILL.md`.
    SkillFileUnlisted,
    /// The entry's URI does not end in `/SKILL.md`.
    NotASkillUri,
    /// `skills/get` answered with the entry of another URI.
    OtherEntry,
    /// A file outside the manifest was asked for (for a dynamic skill:
    /// outside the skill's directory).
    Unlisted {
        /// The file.
        uri: String,
    },
    /// The manifest lists a file outside the skill's directory.
    OutsideDirectory {
        /// The file.
        uri: String,
    },
    /// A manifest digest is not `sha256:` and 64 lowercase hex digits.
    BadDigest {
        /// The file.
        uri: String,
    },
    /// A file's length differs from its manifest size.
    Size {
        /// The file.
        uri: String,
        /// The manifest's size.
        expected: u64,
        /// The length read.
        read: u64,
    },
    /// A file's SHA-256 differs from its manifest digest.
    Digest {
        /// The file.
        uri: String,
    },
    /// The server's answer held no contents for the file (or undecodable
    /// base64).
    Unreadable {
        /// The file.
        uri: String,
    },
    /// `SKILL.md` is not UTF-8 text.
    NotText,
    /// `SKILL.md` does not begin with a `---` YAML frontmatter block.
    NoFrontmatter,
    /// The frontmatter is longer than [`MAX_FRONTMATTER_BYTES`].
    FrontmatterTooLarge,
    /// The frontmatter is not a YAML mapping within the bounds (depth,
    /// nodes), or not YAML at all.
    FrontmatterInvalid,
    /// The frontmatter differs from the entry's at this field.
    FrontmatterMismatch {
        /// The first differing top-level field.
        field: String,
    },
}

impl fmt::Display for SkillCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillCheck::TooManyFiles { files } => write!(
                f,
                "its manifest lists {files} files, over the limit of {MAX_SKILL_FILES}"
            ),
            SkillCheck::TooLarge { bytes } => write!(
                f,
                "its files total {bytes} bytes, over the limit of {MAX_SKILL_BYTES} (16 MiB)"
            ),
            SkillCheck::SkillFileUnlisted => f.write_str("its manifest does not list its SKILL.md"),
            SkillCheck::NotASkillUri => f.write_str("its URI does not name a SKILL.md"),
            SkillCheck::OtherEntry => {
                f.write_str("the server answered `skills/get` with another skill's entry")
            }
            SkillCheck::Unlisted { uri } => {
                write!(f, "`{}` is not one of its files", Untrusted::new(uri))
            }
            SkillCheck::OutsideDirectory { uri } => write!(
                f,
                "its manifest lists `{}`, outside the skill's directory",
                Untrusted::new(uri)
            ),
            SkillCheck::BadDigest { uri } => write!(
                f,
                "the digest of `{}` is not `sha256:` and 64 lowercase hex digits",
                Untrusted::new(uri)
            ),
            SkillCheck::Size {
                uri,
                expected,
                read,
            } => write!(
                f,
                "size check failed: `{}` is {read} bytes, its manifest says {expected}",
                Untrusted::new(uri)
            ),
            SkillCheck::Digest { uri } => write!(
                f,
                "digest check failed: `{}` does not match its manifest's sha256",
                Untrusted::new(uri)
            ),
            SkillCheck::Unreadable { uri } => write!(
                f,
                "the server's answer for `{}` held no readable contents",
                Untrusted::new(uri)
            ),
            SkillCheck::NotText => f.write_str("its SKILL.md is not UTF-8 text"),
            SkillCheck::NoFrontmatter => {
                f.write_str("its SKILL.md does not begin with YAML frontmatter")
            }
            SkillCheck::FrontmatterTooLarge => write!(
                f,
                "its SKILL.md frontmatter is over {MAX_FRONTMATTER_BYTES} bytes"
            ),
            SkillCheck::FrontmatterInvalid => f.write_str(
                "its SKILL.md frontmatter is not a YAML mapping within the bounds (depth 32, 10,000 nodes)",
            ),
            SkillCheck::FrontmatterMismatch { field } => write!(
                f,
                "frontmatter check failed: SKILL.md differs from the entry at `{}`",
                Untrusted::new(field)
            ),
        }
    }
}

/// A skill loaded and verified: its entry and its `SKILL.md`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The entry it was verified against (hold it while acting on the
    /// skill: later reads are checked against it).
    pub entry: Skill,
    /// The whole `SKILL.md`, frontmatter included.
    pub text: String,
    /// Where the body (after the frontmatter) starts in `text`.
    body_start: usize,
}

impl LoadedSkill {
    /// `SKILL.md` after its frontmatter.
    pub fn body(&self) -> &str {
        &self.text[self.body_start..]
    }
}

impl Session<Ready> {
    /// Whether the server declares the Skills extension.
    pub fn offers_skills(&self) -> bool {
        self.server_capabilities().has_extension(SKILLS_EXTENSION)
    }

    /// Whether the server declares `resources/directory/read`
    /// (`directoryRead: true` in its Skills extension settings).
    pub fn offers_directory_read(&self) -> bool {
        self.server_capabilities()
            .extensions
            .as_ref()
            .and_then(|e| e.get(SKILLS_EXTENSION))
            .and_then(|settings| settings.get("directoryRead"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    fn require_skills(&self, method: &'static str) -> Result<(), SessionError> {
        if self.offers_skills() {
            Ok(())
        } else {
            Err(SessionError::NotOffered {
                method: method.to_owned(),
                feature: "the Skills extension",
            })
        }
    }

    /// One page of `skills/list`. Nothing is read.
    pub async fn list_skills_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<Skill>, SessionError> {
        self.require_skills(ListSkills::METHOD)?;
        let params = PaginatedParams::with_cursor(cursor.map(str::to_owned));
        Ok(self.request::<ListSkills>(&params).await?.into())
    }

    /// Every skill (all pages, bounded like every listing). Nothing is read.
    pub async fn list_skills(&self) -> Result<Listing<Skill>, SessionError> {
        self.require_skills(ListSkills::METHOD)?;
        self.list_all(ListKind::Resources, ListSkills::METHOD, |s, c| {
            Box::pin(async move { s.list_skills_page(c.as_deref()).await })
        })
        .await
    }

    /// `skills/get`: the current entry of the skill whose `SKILL.md` is at
    /// `uri` (a skill absent from a listing, or a fresh manifest).
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, SessionError> {
        self.require_skills(GetSkill::METHOD)?;
        let result = self.request::<GetSkill>(&GetSkillParams::new(uri)).await?;
        if result.skill.uri != uri {
            return Err(SessionError::SkillRefused {
                skill: uri.to_owned(),
                check: SkillCheck::OtherEntry,
            });
        }
        Ok(result.skill)
    }

    /// One page of `resources/directory/read`: the direct children of the
    /// directory at `uri`. Only against a server declaring `directoryRead`.
    /// A live view: it never extends a skill's manifest.
    pub async fn read_directory_page(
        &self,
        uri: &str,
        cursor: Option<&str>,
    ) -> Result<Page<Resource>, SessionError> {
        if !self.offers_directory_read() {
            return Err(SessionError::NotOffered {
                method: ReadDirectory::METHOD.to_owned(),
                feature: "directory reads (`directoryRead` of the Skills extension)",
            });
        }
        let params = ReadDirectoryParams::new(uri, cursor.map(str::to_owned));
        let result = self.request::<ReadDirectory>(&params).await?;
        Ok(Page {
            items: result.resources,
            next_cursor: result.next_cursor,
            ttl: None,
            cache_scope: None,
        })
    }

    /// Loads the skill of `entry`: checks the entry's bounds, reads its
    /// `SKILL.md`, verifies its size and digest (a listed manifest) and its
    /// frontmatter against the entry. A failed check refuses it whole
    /// ([`SessionError::SkillRefused`]); nothing unverified is returned.
    pub async fn load_skill(&self, entry: &Skill) -> Result<LoadedSkill, SessionError> {
        self.load_skill_with(entry, &CallOptions::default()).await
    }

    /// [`Session::load_skill`] with call options (a deadline, progress, a
    /// lower result limit than the file's own bound).
    pub async fn load_skill_with(
        &self,
        entry: &Skill,
        options: &CallOptions,
    ) -> Result<LoadedSkill, SessionError> {
        let refuse = |check| refused(entry, check);
        // The read checks the entry (bounds, digests) before it sends anything.
        let bytes = self
            .read_skill_file_with(entry, &entry.uri, options)
            .await?;
        let text = String::from_utf8(bytes).map_err(|_| refuse(SkillCheck::NotText))?;
        let (frontmatter, body_start) = parse_frontmatter(&text).map_err(refuse)?;
        compare_frontmatter(&frontmatter, &entry.frontmatter).map_err(refuse)?;
        Ok(LoadedSkill {
            entry: entry.clone(),
            text,
            body_start,
        })
    }

    /// Reads one file of the skill of `entry` and verifies it: only a file
    /// its manifest lists (for a dynamic skill, one under its directory),
    /// of the manifest's size and digest. Returns the file's raw bytes.
    pub async fn read_skill_file(&self, entry: &Skill, uri: &str) -> Result<Vec<u8>, SessionError> {
        self.read_skill_file_with(entry, uri, &CallOptions::default())
            .await
    }

    /// [`Session::read_skill_file`] with call options; their result limit,
    /// when lower than the file's own bound, wins.
    pub async fn read_skill_file_with(
        &self,
        entry: &Skill,
        uri: &str,
        options: &CallOptions,
    ) -> Result<Vec<u8>, SessionError> {
        let refuse = |check| refused(entry, check);
        check_entry(entry).map_err(refuse)?;
        let listed = match &entry.resources {
            SkillFiles::Listed(_) => Some(entry.file(uri).ok_or_else(|| {
                refuse(SkillCheck::Unlisted {
                    uri: uri.to_owned(),
                })
            })?),
            _ => {
                if !within_directory(skill_root(&entry.uri).unwrap_or_default(), uri) {
                    return Err(refuse(SkillCheck::Unlisted {
                        uri: uri.to_owned(),
                    }));
                }
                None
            }
        };
        // The answer's length on the wire is bounded by what the file may
        // be: text escapes at most 6 bytes per byte (`\u0000`), base64 4
        // per 3; plus room for the envelope.
        let size = listed.map_or(MAX_SKILL_BYTES, |f| f.size);
        let bound = usize::try_from(size.saturating_mul(6))
            .unwrap_or(usize::MAX)
            .saturating_add(64 * 1024);
        let limit = options.max_result_bytes.map_or(bound, |l| l.min(bound));
        let options = options.clone().max_result_bytes(limit);
        let result = self.read_resource_with(uri, &options).await?;
        let contents = result
            .contents
            .iter()
            .find(|c| c.uri() == uri)
            .or(result.contents.first())
            .ok_or_else(|| {
                refuse(SkillCheck::Unreadable {
                    uri: uri.to_owned(),
                })
            })?;
        let bytes = raw_bytes(contents).ok_or_else(|| {
            refuse(SkillCheck::Unreadable {
                uri: uri.to_owned(),
            })
        })?;
        match listed {
            Some(file) => verify(file, &bytes).map_err(refuse)?,
            None if bytes.len() as u64 > MAX_SKILL_BYTES => {
                return Err(refuse(SkillCheck::TooLarge {
                    bytes: bytes.len() as u64,
                }));
            }
            None => {}
        }
        Ok(bytes)
    }
}

fn refused(entry: &Skill, check: SkillCheck) -> SessionError {
    SessionError::SkillRefused {
        skill: entry.uri.clone(),
        check,
    }
}

/// The skill's directory: its `SKILL.md` URI without `SKILL.md`, keeping
/// the `/`.
fn skill_root(uri: &str) -> Option<&str> {
    uri.strip_suffix(SKILL_FILE)
        .filter(|root| root.ends_with('/'))
}

/// Whether `uri` names a file under the directory `root` (which ends in
/// `/`): no `.`, `..` or empty segment, no query or fragment, no
/// backslash and no percent-encoding (which could spell `..`), so a
/// dynamic skill cannot have a file outside its directory read.
fn within_directory(root: &str, uri: &str) -> bool {
    match uri.strip_prefix(root) {
        Some(path) if !root.is_empty() => {
            !path.contains(['?', '#', '\\', '%'])
                && path
                    .split('/')
                    .all(|segment| !matches!(segment, "" | "." | ".."))
        }
        _ => false,
    }
}

/// Checks what can be checked of a skill's entry before anything is read:
/// a `SKILL.md` URI, a manifest within the extension's limits
/// ([`MAX_SKILL_FILES`], [`MAX_SKILL_BYTES`]) that lists the `SKILL.md`
/// and only files under the skill's directory, well-formed digests. What
/// loading checks first; for a relay (the gateway) that passes entries on.
pub fn check_skill_entry(entry: &Skill) -> Result<(), SkillCheck> {
    check_entry(entry)
}

/// What can be checked before anything is read: a `SKILL.md` URI, a
/// manifest within the limits that lists the `SKILL.md`, well-formed
/// digests.
fn check_entry(entry: &Skill) -> Result<(), SkillCheck> {
    if skill_root(&entry.uri).is_none() {
        return Err(SkillCheck::NotASkillUri);
    }
    let SkillFiles::Listed(files) = &entry.resources else {
        return Ok(());
    };
    if files.len() > MAX_SKILL_FILES {
        return Err(SkillCheck::TooManyFiles { files: files.len() });
    }
    let total = files.iter().fold(0u64, |sum, f| sum.saturating_add(f.size));
    if total > MAX_SKILL_BYTES {
        return Err(SkillCheck::TooLarge { bytes: total });
    }
    if !files.iter().any(|f| f.uri == entry.uri) {
        return Err(SkillCheck::SkillFileUnlisted);
    }
    let root = skill_root(&entry.uri).unwrap_or_default();
    if let Some(outside) = files.iter().find(|f| !within_directory(root, &f.uri)) {
        return Err(SkillCheck::OutsideDirectory {
            uri: outside.uri.clone(),
        });
    }
    if let Some(bad) = files.iter().find(|f| digest_hex(&f.digest).is_none()) {
        return Err(SkillCheck::BadDigest {
            uri: bad.uri.clone(),
        });
    }
    Ok(())
}

/// The 64 hex digits of a well-formed `sha256:` digest.
fn digest_hex(digest: &str) -> Option<&str> {
    digest.strip_prefix("sha256:").filter(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Size first (cheap, and a mismatch on its own is a failure), then digest.
fn verify(file: &SkillResource, bytes: &[u8]) -> Result<(), SkillCheck> {
    let read = bytes.len() as u64;
    if read != file.size {
        return Err(SkillCheck::Size {
            uri: file.uri.clone(),
            expected: file.size,
            read,
        });
    }
    let expected = digest_hex(&file.digest).ok_or_else(|| SkillCheck::BadDigest {
        uri: file.uri.clone(),
    })?;
    let actual = Sha256::digest(bytes);
    let matches = actual.len() * 2 == expected.len()
        && actual
            .iter()
            .zip(expected.as_bytes().chunks(2))
            .all(|(byte, pair)| pair == hex_pair(*byte));
    if matches {
        Ok(())
    } else {
        Err(SkillCheck::Digest {
            uri: file.uri.clone(),
        })
    }
}

fn hex_pair(byte: u8) -> [u8; 2] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]]
}

/// A file's raw bytes: text as UTF-8, a blob decoded from base64.
fn raw_bytes(contents: &ResourceContents) -> Option<Vec<u8>> {
    match contents {
        ResourceContents::Text(t) => Some(t.text.as_bytes().to_vec()),
        ResourceContents::Blob(b) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(&b.blob)
                .ok()
        }
        _ => None,
    }
}

/// The frontmatter of `text` as a JSON object, and where the body starts.
/// `text` must begin with a `---` line; the block ends at the next `---`
/// line.
fn parse_frontmatter(text: &str) -> Result<(JsonObject, usize), SkillCheck> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or(SkillCheck::NoFrontmatter)?;
    let opening = text.len() - rest.len();
    let mut at = 0;
    let (yaml, body_start) = loop {
        let Some(line_end) = rest[at..].find('\n').map(|i| at + i + 1) else {
            // The closing line may end the file.
            if rest[at..].trim_end_matches('\r') == "---" {
                break (&rest[..at], text.len());
            }
            return Err(SkillCheck::NoFrontmatter);
        };
        if rest[at..line_end].trim_end_matches(['\n', '\r']) == "---" {
            break (&rest[..at], opening + line_end);
        }
        at = line_end;
        if at > MAX_FRONTMATTER_BYTES {
            return Err(SkillCheck::FrontmatterTooLarge);
        }
    };
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(SkillCheck::FrontmatterTooLarge);
    }
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_FRONTMATTER_DEPTH;
    budget.max_nodes = MAX_FRONTMATTER_NODES;
    budget.max_aliases = 64;
    budget.max_documents = 1;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.strict_booleans = true;
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    // The parser's error quotes the input: only that it failed is kept.
    match serde_saphyr::from_str_with_options::<Value>(yaml, options) {
        Ok(Value::Object(map)) => Ok((map, body_start)),
        _ => Err(SkillCheck::FrontmatterInvalid),
    }
}

/// Field by field: every field of either side, equal in both. Numbers
/// compare by value (`2` and `2.0` are one number in YAML and in JSON).
fn compare_frontmatter(file: &JsonObject, entry: &JsonObject) -> Result<(), SkillCheck> {
    let mut fields: Vec<&String> = file.keys().chain(entry.keys()).collect();
    fields.sort();
    fields.dedup();
    for field in fields {
        let same = match (file.get(field), entry.get(field)) {
            (Some(a), Some(b)) => same_value(a, b),
            (None, None) => true,
            // An absent field and an explicit null are the same content.
            (Some(Value::Null), None) | (None, Some(Value::Null)) => true,
            _ => false,
        };
        if !same {
            return Err(SkillCheck::FrontmatterMismatch {
                field: field.clone(),
            });
        }
    }
    Ok(())
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => panic!(),
        }
    }

    #[test]
    fn frontmatter_is_parsed_bounded_and_compared_by_field() {
        let text = "---\nname: pdf\ndescription: PDFs\nmetadata:\n  version: 2\n---\n# Body\n";
        let (fm, start) = parse_frontmatter(text).unwrap();
        assert_eq!(&text[start..], "# Body\n");
        let entry =
            object(json!({"name": "pdf", "description": "PDFs", "metadata": {"version": 2.0}}));
        assert_eq!(compare_frontmatter(&fm, &entry), Ok(()));
        let tampered =
            object(json!({"name": "pdf", "description": "Exfiltrate", "metadata": {"version": 2}}));
        assert_eq!(
            compare_frontmatter(&fm, &tampered),
            Err(SkillCheck::FrontmatterMismatch {
                field: "description".into()
            })
        );
        let extra = object(
            json!({"name": "pdf", "description": "PDFs", "metadata": {"version": 2}, "license": "MIT"}),
        );
        assert!(compare_frontmatter(&fm, &extra).is_err());
        assert_eq!(
            parse_frontmatter("# no frontmatter"),
            Err(SkillCheck::NoFrontmatter)
        );
        assert_eq!(
            parse_frontmatter("---\nname: x\n"),
            Err(SkillCheck::NoFrontmatter)
        );
        assert_eq!(
            parse_frontmatter("---\n- a\n---\n"),
            Err(SkillCheck::FrontmatterInvalid)
        );
        let deep = format!("---\na: {}1{}\n---\n", "[".repeat(40), "]".repeat(40));
        assert_eq!(
            parse_frontmatter(&deep),
            Err(SkillCheck::FrontmatterInvalid)
        );
        let bomb = "---\na: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\n";
        assert_eq!(parse_frontmatter(bomb), Err(SkillCheck::FrontmatterInvalid));
        let long = format!("---\nname: {}\n---\n", "x".repeat(MAX_FRONTMATTER_BYTES));
        assert_eq!(
            parse_frontmatter(&long),
            Err(SkillCheck::FrontmatterTooLarge)
        );
        assert_eq!(
            parse_frontmatter("---\nname: x\nname: y\n---\n"),
            Err(SkillCheck::FrontmatterInvalid)
        );
    }

    #[test]
    fn entries_are_checked_before_anything_is_read() {
        let file = |uri: &str, size: u64| SkillResource {
            uri: uri.into(),
            digest: format!("sha256:{}", "0".repeat(64)),
            size,
            ..SkillResource::default()
        };
        let entry = |files: Vec<SkillResource>| -> Skill {
            serde_json::from_value(json!({
                "uri": "skill://a/SKILL.md",
                "frontmatter": {},
                "resources": files,
            }))
            .unwrap()
        };
        assert_eq!(
            check_entry(&entry(vec![file("skill://a/SKILL.md", 3)])),
            Ok(())
        );
        let many: Vec<SkillResource> = (0..=MAX_SKILL_FILES)
            .map(|i| file(&format!("skill://a/f{i}"), 1))
            .collect();
        assert_eq!(
            check_entry(&entry(many)),
            Err(SkillCheck::TooManyFiles {
                files: MAX_SKILL_FILES + 1
            })
        );
        let big = vec![
            file("skill://a/SKILL.md", MAX_SKILL_BYTES),
            file("skill://a/more.md", 1),
        ];
        assert!(matches!(
            check_entry(&entry(big)),
            Err(SkillCheck::TooLarge { .. })
        ));
        assert_eq!(
            check_entry(&entry(vec![file("skill://a/other.md", 1)])),
            Err(SkillCheck::SkillFileUnlisted)
        );
        assert_eq!(
            check_entry(&entry(vec![
                file("skill://a/SKILL.md", 1),
                file("skill://b/secret.md", 1)
            ])),
            Err(SkillCheck::OutsideDirectory {
                uri: "skill://b/secret.md".into()
            })
        );
        let mut bad = file("skill://a/SKILL.md", 1);
        bad.digest = "sha256:XYZ".into();
        assert!(matches!(
            check_entry(&entry(vec![bad])),
            Err(SkillCheck::BadDigest { .. })
        ));
        let mut not_skill = entry(vec![file("skill://a/SKILL.md", 1)]);
        not_skill.uri = "skill://a/README.md".into();
        assert_eq!(check_entry(&not_skill), Err(SkillCheck::NotASkillUri));
    }

    #[test]
    fn a_dynamic_skill_reads_only_below_its_directory() {
        let root = "skill://reports/daily/";
        assert!(within_directory(
            root,
            "skill://reports/daily/data/today.md"
        ));
        for outside in [
            "skill://reports/daily/../weekly/SKILL.md",
            "skill://reports/daily/./x",
            "skill://reports/daily/a//b",
            "skill://reports/daily/",
            "skill://reports/daily/x?y=1",
            "skill://reports/daily/%2e%2e/x",
            "skill://reports/weekly/SKILL.md",
        ] {
            assert!(!within_directory(root, outside), "{outside}");
        }
        assert!(!within_directory("", "skill://x"));
    }

    #[test]
    fn files_are_verified_by_size_then_digest() {
        let body = b"hello";
        let file = SkillResource {
            uri: "skill://a/SKILL.md".into(),
            // sha256("hello")
            digest: "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
                .into(),
            size: 5,
            ..SkillResource::default()
        };
        assert_eq!(verify(&file, body), Ok(()));
        assert!(matches!(
            verify(&file, b"hellO"),
            Err(SkillCheck::Digest { .. })
        ));
        assert!(matches!(
            verify(&file, b"hello!"),
            Err(SkillCheck::Size {
                expected: 5,
                read: 6,
                ..
            })
        ));
        assert!(digest_hex("sha256:ABC").is_none());
        assert!(
            digest_hex("md5:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
                .is_none()
        );
    }
}
