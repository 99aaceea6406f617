//! The host's authority: a local document of allow-lists and permission
//! tags per server, and the principal whose grants are checked against them.
//!
//! The published surface is the intersection of what a server offers and
//! what this allows; anything outside is refused before a byte is sent.
//!
//! ```json
//! {
//!   "servers": {
//!     "notes":  { "tools": ["search"], "resources": [], "permission": "personal" },
//!     "github": { "tool_permissions": { "open_pr": "github.write" } }
//!   }
//! }
//! ```
//!
//! Two forms, never confused: no document ([`Authority::unrestricted`], or
//! `{"unrestricted": true}`) lets every server offer everything; a document
//! (`{"servers": {...}}`, [`Authority::named`], [`Authority::with_server`])
//! names the servers it governs, and **a server it does not name gets
//! nothing** (fail closed).
//!
//! Per category (`tools`, `resources`, `prompts`) of a named server: absent
//! allows everything, `[]` denies the category, a list allows exactly those
//! names. Resources are exact URIs: listing a URI template authorises no URI
//! expanded from it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::HubError;
use crate::error::DenyReason;

/// Largest authority file read.
pub const MAX_AUTHORITY_BYTES: u64 = 4 * 1024 * 1024;

/// The host's authority: no document at all (everything allowed), or a
/// document naming the servers it governs (everything else denied).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "AuthorityFile", into = "AuthorityFile")]
pub struct Authority {
    /// `None`: unrestricted. `Some`: rules per named server, keyed by the
    /// host's server name; an unnamed server gets nothing.
    servers: Option<BTreeMap<String, ServerAuthority>>,
}

/// The JSON form: `{"servers": {...}}` or `{"unrestricted": true}`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuthorityFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    servers: Option<BTreeMap<String, ServerAuthority>>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    unrestricted: bool,
}

impl TryFrom<AuthorityFile> for Authority {
    type Error = &'static str;

    fn try_from(file: AuthorityFile) -> Result<Self, Self::Error> {
        match (file.servers, file.unrestricted) {
            (Some(_), true) => {
                Err("an authority document is either `unrestricted` or names `servers`, not both")
            }
            (None, false) => {
                Err("an authority document names its `servers` (or says `\"unrestricted\": true`)")
            }
            (servers, _) => Ok(Self { servers }),
        }
    }
}

impl From<Authority> for AuthorityFile {
    fn from(authority: Authority) -> Self {
        Self {
            unrestricted: authority.servers.is_none(),
            servers: authority.servers,
        }
    }
}

/// The rules for one server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerAuthority {
    /// Tools (local names) allowed; `None` allows all, empty denies all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<BTreeSet<String>>,
    /// Resource URIs allowed (exact); `None` allows all, empty denies all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<BTreeSet<String>>,
    /// Prompts allowed; `None` allows all, empty denies all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<BTreeSet<String>>,
    /// Skills allowed, by the URI of their `SKILL.md` (a skill's files are
    /// read under its entry, not under `resources`); `None` allows all,
    /// empty denies all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<BTreeSet<String>>,
    /// The client-wide permission: every operation on this server needs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<String>,
    /// Extra permissions a tool needs, by local tool name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_permissions: BTreeMap<String, String>,
}

impl Authority {
    /// No document: every server may offer everything (permission tags
    /// aside, there are none). What a hub has when the host sets no
    /// authority.
    pub fn unrestricted() -> Self {
        Self { servers: None }
    }

    /// A document naming no server yet: nothing is allowed until
    /// [`with_server`](Self::with_server) names servers.
    pub fn named() -> Self {
        Self {
            servers: Some(BTreeMap::new()),
        }
    }

    /// Whether this is the unrestricted form (no document).
    pub fn is_unrestricted(&self) -> bool {
        self.servers.is_none()
    }

    /// The named servers and their rules (`None` when unrestricted).
    pub fn servers(&self) -> Option<&BTreeMap<String, ServerAuthority>> {
        self.servers.as_ref()
    }

    /// Parses a document.
    pub fn from_json(text: &str) -> Result<Self, HubError> {
        serde_json::from_str(text).map_err(HubError::AuthorityParse)
    }

    /// Reads and parses a document file (at most [`MAX_AUTHORITY_BYTES`]).
    pub fn from_file(path: &Path) -> Result<Self, HubError> {
        use std::io::Read;
        let file = std::fs::File::open(path).map_err(HubError::AuthorityRead)?;
        let mut text = String::new();
        file.take(MAX_AUTHORITY_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(HubError::AuthorityRead)?;
        if text.len() as u64 > MAX_AUTHORITY_BYTES {
            return Err(HubError::AuthorityTooLarge {
                limit: MAX_AUTHORITY_BYTES,
            });
        }
        Self::from_json(&text)
    }

    /// Adds or replaces the rules of `server`. This makes the authority a
    /// document even if it was unrestricted: servers it does not name get
    /// nothing. Name a server with `ServerAuthority::default()` to allow all
    /// of it.
    pub fn with_server(mut self, server: &str, rules: ServerAuthority) -> Self {
        self.servers
            .get_or_insert_with(BTreeMap::new)
            .insert(server.to_owned(), rules);
        self
    }

    /// What governs `server`.
    fn rules(&self, server: &str) -> Rules<'_> {
        match &self.servers {
            None => Rules::Unrestricted,
            Some(servers) => servers.get(server).map_or(Rules::Unnamed, Rules::Named),
        }
    }
}

/// What governs one server.
#[derive(Clone, Copy, Debug)]
enum Rules<'a> {
    /// No document.
    Unrestricted,
    /// The document's rules for it.
    Named(&'a ServerAuthority),
    /// A document that does not name it: nothing is allowed.
    Unnamed,
}

impl<'a> Rules<'a> {
    fn named(self) -> Option<&'a ServerAuthority> {
        match self {
            Rules::Named(rules) => Some(rules),
            _ => None,
        }
    }
}

impl ServerAuthority {
    /// Allows only these tools.
    pub fn tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Allows only these resource URIs.
    pub fn resources<I: IntoIterator<Item = S>, S: Into<String>>(mut self, uris: I) -> Self {
        self.resources = Some(uris.into_iter().map(Into::into).collect());
        self
    }

    /// Allows only these prompts.
    pub fn prompts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.prompts = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Allows only these skills (URIs of their `SKILL.md`).
    pub fn skills<I: IntoIterator<Item = S>, S: Into<String>>(mut self, uris: I) -> Self {
        self.skills = Some(uris.into_iter().map(Into::into).collect());
        self
    }

    /// Tags the server with a client-wide permission.
    pub fn permission(mut self, permission: &str) -> Self {
        self.permission = Some(permission.to_owned());
        self
    }

    /// Tags one tool with a permission.
    pub fn tool_permission(mut self, tool: &str, permission: &str) -> Self {
        self.tool_permissions
            .insert(tool.to_owned(), permission.to_owned());
        self
    }
}

/// Whether an untagged server (no client-wide permission, no tool
/// permission) is usable by a principal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Untagged {
    /// Untagged servers and tools are usable.
    #[default]
    Allow,
    /// Only what a grant covers is usable: an untagged server exposes
    /// nothing.
    Deny,
}

/// Who the hub acts for now: a name (for audit records) and the permissions
/// granted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Principal {
    name: String,
    grants: BTreeSet<String>,
    untagged: Untagged,
}

impl Principal {
    /// A principal with no grants that may use untagged servers.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            grants: BTreeSet::new(),
            untagged: Untagged::Allow,
        }
    }

    /// A principal with no grants that may use nothing untagged.
    pub fn default_deny(name: &str) -> Self {
        Self {
            untagged: Untagged::Deny,
            ..Self::new(name)
        }
    }

    /// Grants a permission.
    pub fn grant(mut self, permission: &str) -> Self {
        self.grants.insert(permission.to_owned());
        self
    }

    /// The principal's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `permission` is granted.
    pub fn has(&self, permission: &str) -> bool {
        self.grants.contains(permission)
    }

    /// The rule for untagged servers.
    pub fn untagged(&self) -> Untagged {
        self.untagged
    }

    /// Whether an operation tagged with `server` (client-wide) and `tool`
    /// permissions may run: every tag present must be granted; with no tag at
    /// all, the untagged rule decides.
    pub(crate) fn permits(&self, server: Option<&str>, tool: Option<&str>) -> bool {
        match (server, tool) {
            (None, None) => self.untagged == Untagged::Allow,
            (s, t) => s.is_none_or(|p| self.has(p)) && t.is_none_or(|p| self.has(p)),
        }
    }
}

/// The authority as it applies to one server and the current principal.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gate<'a> {
    rules: Rules<'a>,
    principal: &'a Principal,
}

impl<'a> Gate<'a> {
    pub(crate) fn new(authority: &'a Authority, principal: &'a Principal, server: &str) -> Self {
        Self {
            rules: authority.rules(server),
            principal,
        }
    }

    fn server_permission(&self) -> Option<&'a str> {
        self.rules.named().and_then(|r| r.permission.as_deref())
    }

    /// May the principal use the server at all (catalogues, helpers)?
    pub(crate) fn server(&self) -> Result<(), DenyReason> {
        if let Rules::Unnamed = self.rules {
            return Err(DenyReason::NotNamed);
        }
        if self.principal.permits(self.server_permission(), None) {
            Ok(())
        } else {
            Err(DenyReason::MissingPermission)
        }
    }

    pub(crate) fn tool(&self, name: &str) -> Result<(), DenyReason> {
        if let Rules::Unnamed = self.rules {
            return Err(DenyReason::NotNamed);
        }
        if !listed(self.rules.named().and_then(|r| r.tools.as_ref()), name) {
            return Err(DenyReason::NotAllowListed);
        }
        let tool_permission = self
            .rules
            .named()
            .and_then(|r| r.tool_permissions.get(name))
            .map(String::as_str);
        if self
            .principal
            .permits(self.server_permission(), tool_permission)
        {
            Ok(())
        } else {
            Err(DenyReason::MissingPermission)
        }
    }

    pub(crate) fn resource(&self, uri: &str) -> Result<(), DenyReason> {
        if let Rules::Unnamed = self.rules {
            return Err(DenyReason::NotNamed);
        }
        if !listed(self.rules.named().and_then(|r| r.resources.as_ref()), uri) {
            return Err(DenyReason::NotAllowListed);
        }
        self.server()
    }

    pub(crate) fn prompt(&self, name: &str) -> Result<(), DenyReason> {
        if let Rules::Unnamed = self.rules {
            return Err(DenyReason::NotNamed);
        }
        if !listed(self.rules.named().and_then(|r| r.prompts.as_ref()), name) {
            return Err(DenyReason::NotAllowListed);
        }
        self.server()
    }

    pub(crate) fn skill(&self, uri: &str) -> Result<(), DenyReason> {
        if let Rules::Unnamed = self.rules {
            return Err(DenyReason::NotNamed);
        }
        if !listed(self.rules.named().and_then(|r| r.skills.as_ref()), uri) {
            return Err(DenyReason::NotAllowListed);
        }
        self.server()
    }

    /// Whether the skills category is denied whole (`[]`, or a server the
    /// document does not name).
    pub(crate) fn skills_denied(&self) -> bool {
        match self.rules {
            Rules::Unnamed => true,
            rules => rules
                .named()
                .and_then(|r| r.skills.as_ref())
                .is_some_and(BTreeSet::is_empty),
        }
    }

    /// Whether the resources category is denied whole (`[]`, or a server
    /// the document does not name).
    pub(crate) fn resources_denied(&self) -> bool {
        match self.rules {
            Rules::Unnamed => true,
            rules => rules
                .named()
                .and_then(|r| r.resources.as_ref())
                .is_some_and(BTreeSet::is_empty),
        }
    }

    /// Whether the prompts category is denied whole (`[]`, or a server the
    /// document does not name).
    pub(crate) fn prompts_denied(&self) -> bool {
        match self.rules {
            Rules::Unnamed => true,
            rules => rules
                .named()
                .and_then(|r| r.prompts.as_ref())
                .is_some_and(BTreeSet::is_empty),
        }
    }
}

fn listed(list: Option<&BTreeSet<String>>, name: &str) -> bool {
    list.is_none_or(|l| l.contains(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_allows_empty_denies_list_allows_exactly() {
        let doc = Authority::from_json(
            r#"{"servers": {"notes": {"tools": ["search"], "resources": [], "prompts": ["daily"]}}}"#,
        )
        .unwrap();
        let p = Principal::new("me");
        let notes = Gate::new(&doc, &p, "notes");
        assert!(notes.tool("search").is_ok());
        assert_eq!(notes.tool("create"), Err(DenyReason::NotAllowListed));
        assert_eq!(notes.resource("file:///a"), Err(DenyReason::NotAllowListed));
        assert!(notes.resources_denied());
        assert!(notes.prompt("daily").is_ok());
        assert!(notes.prompt("weekly").is_err());
        assert!(!notes.prompts_denied());
    }

    #[test]
    fn a_document_gives_a_server_it_does_not_name_nothing() {
        let doc = Authority::from_json(r#"{"servers": {"notes": {}}}"#).unwrap();
        let p = Principal::new("me");
        assert!(Gate::new(&doc, &p, "notes").tool("anything").is_ok());
        let other = Gate::new(&doc, &p, "files");
        assert_eq!(other.tool("anything"), Err(DenyReason::NotNamed));
        assert_eq!(other.resource("file:///a"), Err(DenyReason::NotNamed));
        assert_eq!(other.prompt("p"), Err(DenyReason::NotNamed));
        assert_eq!(other.server(), Err(DenyReason::NotNamed));
        assert!(other.resources_denied() && other.prompts_denied());
        // Naming a server turns "no document" into a document.
        let named = Authority::unrestricted().with_server("notes", ServerAuthority::default());
        assert!(!named.is_unrestricted());
        assert!(Gate::new(&named, &p, "files").tool("x").is_err());
        assert!(
            Gate::new(&Authority::named(), &p, "notes")
                .server()
                .is_err()
        );
    }

    #[test]
    fn no_document_allows_every_server_and_says_so() {
        let open = Authority::unrestricted();
        assert!(open.is_unrestricted());
        assert!(open.servers().is_none());
        let p = Principal::new("me");
        let gate = Gate::new(&open, &p, "files");
        assert!(gate.tool("anything").is_ok() && gate.resource("x:/y").is_ok());
        // The two forms differ in JSON too, and each reads back as itself.
        let json = serde_json::to_string(&open).unwrap();
        assert_eq!(json, r#"{"unrestricted":true}"#);
        assert_eq!(Authority::from_json(&json).unwrap(), open);
        let doc = Authority::named().with_server("a", ServerAuthority::default());
        let json = serde_json::to_string(&doc).unwrap();
        assert_eq!(json, r#"{"servers":{"a":{}}}"#);
        assert_eq!(Authority::from_json(&json).unwrap(), doc);
        for ambiguous in ["{}", r#"{"servers": {}, "unrestricted": true}"#] {
            assert!(Authority::from_json(ambiguous).is_err(), "{ambiguous}");
        }
    }

    #[test]
    fn a_template_authorises_no_expanded_uri() {
        let doc = Authority::named().with_server(
            "files",
            ServerAuthority::default().resources(["file:///{path}", "file:///README.md"]),
        );
        let p = Principal::new("me");
        let gate = Gate::new(&doc, &p, "files");
        assert!(gate.resource("file:///README.md").is_ok());
        assert!(gate.resource("file:///src/main.rs").is_err());
    }

    #[test]
    fn permissions_check_every_tag_and_untagged_follows_the_principal() {
        let doc = Authority::named()
            .with_server("github", ServerAuthority::default().permission("gh"))
            .with_server(
                "notes",
                ServerAuthority::default().tool_permission("create", "notes.write"),
            )
            .with_server("files", ServerAuthority::default());
        let reader = Principal::default_deny("reader").grant("gh");
        assert!(Gate::new(&doc, &reader, "github").tool("search").is_ok());
        // Untagged server under default deny: nothing.
        assert_eq!(
            Gate::new(&doc, &reader, "files").tool("read"),
            Err(DenyReason::MissingPermission)
        );
        assert!(Gate::new(&doc, &reader, "files").server().is_err());
        // An untagged tool of a server with only tool tags: untagged too.
        assert!(Gate::new(&doc, &reader, "notes").tool("search").is_err());
        assert!(Gate::new(&doc, &reader, "notes").tool("create").is_err());
        let writer = Principal::default_deny("writer").grant("notes.write");
        assert!(Gate::new(&doc, &writer, "notes").tool("create").is_ok());
        let open = Principal::new("open");
        assert!(Gate::new(&doc, &open, "files").tool("read").is_ok());
        assert!(Gate::new(&doc, &open, "github").tool("search").is_err());
        assert!(Gate::new(&doc, &open, "notes").tool("create").is_err());
        assert!(Gate::new(&doc, &open, "notes").tool("search").is_ok());
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(matches!(
            Authority::from_json(r#"{"servers": {"a": {"tool": []}}}"#),
            Err(HubError::AuthorityParse(_))
        ));
    }
}
