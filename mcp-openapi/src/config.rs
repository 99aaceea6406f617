//! What a service is built from: the documents, where each one's requests
//! go, which operations become tools, where credentials come from, and the
//! bounds.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::OpenApiError;

/// Default bound on one document: 16 MiB.
pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;
/// Default bound on nested references followed from one operation.
pub const DEFAULT_MAX_REF_DEPTH: usize = 64;
/// Default bound on the references followed while loading one document.
pub const DEFAULT_MAX_REFS: usize = 100_000;
/// Default bound on the operations of one document (the hub's bound on the
/// tools of one server).
pub const DEFAULT_MAX_OPERATIONS: usize = 10_000;
/// Default bound on one HTTP response body: 1 MiB (the hub's default
/// `max_content_bytes`).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 1024 * 1024;
/// Default length of the excerpt of an error response shown in a result.
pub const DEFAULT_ERROR_EXCERPT_BYTES: usize = 2048;
/// The longest document prefix.
pub const MAX_PREFIX_LEN: usize = 32;

/// Everything an [`OpenApiService`](crate::OpenApiService) is loaded from.
///
/// ```
/// use mcp_openapi::{DocumentConfig, OpenApiConfig, SpecSource};
///
/// let config = OpenApiConfig::new(vec![
///     DocumentConfig::new(SpecSource::File("petstore.yaml".into()), "https://pets.example.com/v1")
///         .prefix("pets_"),
/// ]);
/// assert_eq!(config.documents.len(), 1);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct OpenApiConfig {
    /// The documents; their tools are fused into one list, in this order.
    pub documents: Vec<DocumentConfig>,
    /// Bounds on loading and on calls.
    pub limits: Limits,
    /// The host's own HTTP client (a proxy, its own roots, mTLS), used both
    /// to fetch documents given by URL and for the calls. `None`: the service
    /// builds one that follows redirects only within the origin it asked
    /// (at most 5). With a client of its own the host decides the redirect
    /// policy: the service still sends credentials only in requests to the
    /// configured base URL, and treats an answer that came from another
    /// origin as a failure, but it cannot stop that client from carrying a
    /// credential header across a redirect.
    pub client: Option<reqwest::Client>,
    /// The `User-Agent` of the service's own client.
    pub user_agent: String,
    /// Whether every generated schema is checked against the JSON Schema
    /// 2020-12 meta-schema at load (on by default; an invalid one fails the
    /// load with [`OpenApiError::InvalidSchema`]).
    pub check_schemas: bool,
    /// Where credential variables are read, at each call (the process
    /// environment by default).
    pub environment: Environment,
}

impl OpenApiConfig {
    /// The given documents with the default limits and the service's own
    /// HTTP client.
    pub fn new(documents: Vec<DocumentConfig>) -> Self {
        Self {
            documents,
            limits: Limits::default(),
            client: None,
            user_agent: concat!("mcp-openapi/", env!("CARGO_PKG_VERSION")).to_owned(),
            check_schemas: true,
            environment: Environment::process(),
        }
    }

    /// Adds a document.
    pub fn document(mut self, document: DocumentConfig) -> Self {
        self.documents.push(document);
        self
    }

    /// Replaces the limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Uses the host's HTTP client (see [`OpenApiConfig::client`]).
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Reads credential variables through `environment`.
    pub fn environment(mut self, environment: Environment) -> Self {
        self.environment = environment;
        self
    }
}

/// Where the variables named by [`CredentialRef`]s are read: the process
/// environment, or a host's own lookup (a host that keeps secrets
/// elsewhere, or lets a configuration read only the variables a user
/// approved). Read at each call, never kept.
#[derive(Clone, Default)]
pub struct Environment(Option<Arc<Lookup>>);

/// A host's variable lookup.
type Lookup = dyn Fn(&str) -> Option<String> + Send + Sync;

impl Environment {
    /// The process environment (`std::env::var`).
    pub fn process() -> Self {
        Self(None)
    }

    /// A host's lookup: the value of a variable, or `None` when it is not
    /// set.
    pub fn from_fn(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(lookup)))
    }

    /// The variable's value; `Err(true)` when it is set but not Unicode,
    /// `Err(false)` when it is not set (or empty).
    pub(crate) fn get(&self, name: &str) -> Result<String, bool> {
        let value = match &self.0 {
            Some(lookup) => lookup(name),
            None => match std::env::var(name) {
                Ok(v) => Some(v),
                Err(std::env::VarError::NotPresent) => None,
                Err(std::env::VarError::NotUnicode(_)) => return Err(true),
            },
        };
        value.filter(|v| !v.is_empty()).ok_or(false)
    }
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            None => "Environment(process)",
            Some(_) => "Environment(host lookup)",
        })
    }
}

/// Where a document comes from.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecSource {
    /// A local file (JSON or YAML).
    File(PathBuf),
    /// An `https://` URL (plain `http://` only to loopback). Fetched once, at
    /// load, with no credentials; redirects only within its origin.
    Url(String),
    /// The document's text itself (JSON or YAML), e.g. embedded by a host.
    Inline(String),
}

impl SpecSource {
    /// How the source is named in errors: the path, the URL's origin and
    /// path (never its query), or `inline document`.
    pub fn label(&self) -> String {
        match self {
            SpecSource::File(path) => path.display().to_string(),
            SpecSource::Url(raw) => match url::Url::parse(raw) {
                Ok(url) => format!("{}{}", url.origin().ascii_serialization(), url.path()),
                Err(_) => "<invalid url>".to_owned(),
            },
            SpecSource::Inline(_) => "inline document".to_owned(),
        }
    }
}

impl fmt::Debug for SpecSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecSource::File(path) => f.debug_tuple("File").field(path).finish(),
            SpecSource::Url(_) => f.debug_tuple("Url").field(&self.label()).finish(),
            SpecSource::Inline(text) => write!(f, "Inline({} bytes)", text.len()),
        }
    }
}

/// One document of a service.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DocumentConfig {
    /// Where the document is read from.
    pub source: SpecSource,
    /// Where its requests go: `https://`, or `http://` to loopback only; no
    /// user or password, query or fragment. The document's `servers` never
    /// send a request anywhere else: a `servers` entry on this URL's origin
    /// only lends its path when this URL has none (see the crate docs).
    pub base_url: String,
    /// Put before every tool name of this document, as written (say
    /// `github_`): up to 32 characters of `[A-Za-z0-9_-]`.
    pub prefix: Option<String>,
    /// Which operations become tools.
    pub select: Selection,
    /// Where the secrets of the document's security schemes come from.
    pub credentials: Vec<CredentialRef>,
}

impl DocumentConfig {
    /// A document whose requests go to `base_url`, every operation a tool,
    /// no prefix, no credentials.
    pub fn new(source: SpecSource, base_url: impl Into<String>) -> Self {
        Self {
            source,
            base_url: base_url.into(),
            prefix: None,
            select: Selection::default(),
            credentials: Vec::new(),
        }
    }

    /// Sets the tool name prefix.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Sets the selection.
    pub fn select(mut self, select: Selection) -> Self {
        self.select = select;
        self
    }

    /// Adds a credential reference.
    pub fn credential(mut self, credential: CredentialRef) -> Self {
        self.credentials.push(credential);
        self
    }
}

/// Which operations become tools: all, or those an `include` matcher
/// matches when there is one; then minus those an `exclude` matcher
/// matches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Selection {
    /// Operations to keep (empty: all).
    pub include: Vec<Matcher>,
    /// Operations to leave out (wins over `include`).
    pub exclude: Vec<Matcher>,
}

impl Selection {
    /// Every operation.
    pub fn all() -> Self {
        Self::default()
    }

    /// Adds an include matcher.
    pub fn include(mut self, matcher: Matcher) -> Self {
        self.include.push(matcher);
        self
    }

    /// Adds an exclude matcher.
    pub fn exclude(mut self, matcher: Matcher) -> Self {
        self.exclude.push(matcher);
        self
    }

    /// Whether an operation is selected.
    pub(crate) fn selects(&self, op: &OperationRef<'_>) -> bool {
        (self.include.is_empty() || self.include.iter().any(|m| m.matches(op)))
            && !self.exclude.iter().any(|m| m.matches(op))
    }
}

/// What a [`Matcher`] looks at.
pub(crate) struct OperationRef<'a> {
    pub(crate) method: &'a str,
    pub(crate) path: &'a str,
    pub(crate) operation_id: Option<&'a str>,
    pub(crate) tags: Vec<&'a str>,
}

/// One rule of a [`Selection`].
///
/// Parsed from text ([`FromStr`]) as: `tag:NAME`; a path pattern starting
/// with `/`, optionally after a method (`GET /repos/**`); anything else an
/// `operationId` (`id:` may be written before one that starts with `/` or
/// `tag:`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Matcher {
    /// The operation's `operationId`, exactly.
    OperationId(String),
    /// One of the operation's tags, exactly.
    Tag(String),
    /// The operation's path template as the document writes it
    /// (`/users/{id}`), by a pattern.
    Path(PathPattern),
}

impl Matcher {
    /// An `operationId` matcher.
    pub fn operation_id(id: impl Into<String>) -> Self {
        Matcher::OperationId(id.into())
    }

    /// A tag matcher.
    pub fn tag(tag: impl Into<String>) -> Self {
        Matcher::Tag(tag.into())
    }

    /// A path matcher (see [`PathPattern::parse`]).
    pub fn path(pattern: &str) -> Result<Self, OpenApiError> {
        PathPattern::parse(pattern).map(Matcher::Path)
    }

    fn matches(&self, op: &OperationRef<'_>) -> bool {
        match self {
            Matcher::OperationId(id) => op.operation_id == Some(id.as_str()),
            Matcher::Tag(tag) => op.tags.contains(&tag.as_str()),
            Matcher::Path(pattern) => pattern.matches(op.method, op.path),
        }
    }
}

impl FromStr for Matcher {
    type Err = OpenApiError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(tag) = s.strip_prefix("tag:") {
            return Ok(Matcher::Tag(tag.to_owned()));
        }
        if let Some(id) = s.strip_prefix("id:") {
            return Ok(Matcher::OperationId(id.to_owned()));
        }
        let looks_like_path = s.starts_with('/')
            || s.split_once(' ')
                .is_some_and(|(m, p)| is_method(m) && p.starts_with('/'));
        if looks_like_path {
            return Matcher::path(s);
        }
        if s.is_empty() {
            return Err(OpenApiError::InvalidMatcher {
                matcher: String::new(),
                problem: "it is empty",
            });
        }
        Ok(Matcher::OperationId(s.to_owned()))
    }
}

fn is_method(word: &str) -> bool {
    crate::document::METHODS
        .iter()
        .any(|m| m.eq_ignore_ascii_case(word))
}

/// A path template pattern, optionally for one method: `*` stands for any
/// characters but `/`, `**` for any characters at all. `/repos/*/*/issues`
/// matches `/repos/{owner}/{repo}/issues`; `GET /gists/**` every GET below
/// `/gists/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPattern {
    method: Option<String>,
    pattern: String,
}

impl PathPattern {
    /// Parses `[METHOD ]/pattern`.
    pub fn parse(text: &str) -> Result<Self, OpenApiError> {
        let invalid = |problem| OpenApiError::InvalidMatcher {
            matcher: text.to_owned(),
            problem,
        };
        let (method, pattern) = match text.split_once(' ') {
            Some((m, p)) if is_method(m) => (Some(m.to_ascii_lowercase()), p.trim_start()),
            Some(_) => return Err(invalid("a path pattern is `/path` or `METHOD /path`")),
            None => (None, text),
        };
        if !pattern.starts_with('/') {
            return Err(invalid("a path pattern starts with `/`"));
        }
        Ok(Self {
            method,
            pattern: pattern.to_owned(),
        })
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        if self.method.as_deref().is_some_and(|m| m != method) {
            return false;
        }
        glob(self.pattern.as_bytes(), path.as_bytes())
    }
}

/// `*` (not across `/`) and `**` (across `/`) glob matching, by dynamic
/// programming over the two strings (no backtracking blow-up).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    // Tokens: literal byte, Star, DoubleStar.
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Byte(u8),
        Star,
        Any,
    }
    let mut toks = Vec::with_capacity(pattern.len());
    let mut i = 0;
    while i < pattern.len() {
        if pattern[i] == b'*' {
            if pattern.get(i + 1) == Some(&b'*') {
                toks.push(Tok::Any);
                i += 2;
            } else {
                toks.push(Tok::Star);
                i += 1;
            }
        } else {
            toks.push(Tok::Byte(pattern[i]));
            i += 1;
        }
    }
    // can[j]: the first i tokens match the first j bytes.
    let mut can = vec![false; text.len() + 1];
    can[0] = true;
    for tok in toks {
        let mut next = vec![false; text.len() + 1];
        match tok {
            Tok::Byte(b) => {
                for j in 0..text.len() {
                    next[j + 1] = can[j] && text[j] == b;
                }
            }
            Tok::Star | Tok::Any => {
                for j in 0..=text.len() {
                    next[j] = can[j]
                        || (j > 0 && next[j - 1] && (tok == Tok::Any || text[j - 1] != b'/'));
                }
            }
        }
        can = next;
    }
    can[text.len()]
}

/// Where the secret of one security scheme comes from: always a reference
/// (an environment variable's name), read at each call, never a value.
///
/// `Debug` shows the scheme and variable names, which are not secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CredentialRef {
    /// The document's security scheme `scheme` (a key of
    /// `components.securitySchemes`), sent where the scheme says, for the
    /// operations whose `security` asks for it.
    Scheme {
        /// The scheme's name in the document.
        scheme: String,
        /// Where its secret comes from.
        secret: SecretRef,
    },
    /// `Authorization: Bearer <token>` from the variable `env` on every
    /// request of this document, whatever its `security` says: for documents
    /// that declare no scheme (GitHub's, for one).
    BearerForAll {
        /// The variable holding the token.
        env: String,
    },
}

impl CredentialRef {
    /// The scheme `scheme` (an apiKey, an http bearer, OAuth 2 or OpenID
    /// Connect) takes its secret from the variable `env`.
    pub fn env(scheme: impl Into<String>, env: impl Into<String>) -> Self {
        CredentialRef::Scheme {
            scheme: scheme.into(),
            secret: SecretRef::Env(env.into()),
        }
    }

    /// The http basic scheme `scheme` takes its user and password from two
    /// variables.
    pub fn basic(
        scheme: impl Into<String>,
        user_env: impl Into<String>,
        password_env: impl Into<String>,
    ) -> Self {
        CredentialRef::Scheme {
            scheme: scheme.into(),
            secret: SecretRef::Basic {
                user_env: user_env.into(),
                password_env: password_env.into(),
            },
        }
    }

    /// A bearer token from `env` on every request of the document.
    pub fn bearer_for_all(env: impl Into<String>) -> Self {
        CredentialRef::BearerForAll { env: env.into() }
    }
}

/// The variables a secret is read from.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecretRef {
    /// One variable holding the key or token.
    Env(String),
    /// Two variables holding an http basic user and password.
    Basic {
        /// The user's variable.
        user_env: String,
        /// The password's variable.
        password_env: String,
    },
}

/// Bounds on loading and on calls; each one exceeded is a named error (at
/// load) or a named failure (in a call result), never a silent cut.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Size of one document, in bytes (16 MiB).
    pub max_document_bytes: usize,
    /// References nested below one operation, a chain of references
    /// included (64).
    pub max_ref_depth: usize,
    /// References followed while loading one document (100 000).
    pub max_refs: usize,
    /// Operations in one document, selected or not (10 000).
    pub max_operations: usize,
    /// Size of one HTTP response body, in bytes (1 MiB); larger is the
    /// failure `response_too_large`.
    pub max_response_bytes: usize,
    /// Bytes of an error response's body shown in its result (2 KiB).
    pub max_error_excerpt: usize,
    /// Time for one call's request and response body, and for fetching a
    /// document (60 s).
    pub request_timeout: Duration,
    /// Time to establish a connection, for the service's own client (10 s).
    pub connect_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            max_ref_depth: DEFAULT_MAX_REF_DEPTH,
            max_refs: DEFAULT_MAX_REFS,
            max_operations: DEFAULT_MAX_OPERATIONS,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_error_excerpt: DEFAULT_ERROR_EXCERPT_BYTES,
            request_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op<'a>(method: &'a str, path: &'a str) -> OperationRef<'a> {
        OperationRef {
            method,
            path,
            operation_id: Some("repos/get"),
            tags: vec!["repos"],
        }
    }

    #[test]
    fn globs() {
        assert!(glob(b"/repos/*/*", b"/repos/{owner}/{repo}"));
        assert!(!glob(b"/repos/*", b"/repos/{owner}/{repo}"));
        assert!(glob(b"/repos/**", b"/repos/{owner}/{repo}/issues"));
        assert!(glob(b"/**/issues", b"/repos/a/b/issues"));
        assert!(glob(b"/a*c", b"/abbbc"));
        assert!(!glob(b"/a*c", b"/ab/c"));
        assert!(glob(b"**", b""));
        assert!(!glob(b"/x", b"/xy"));
    }

    #[test]
    fn matchers_parse_and_match() {
        let m: Matcher = "tag:repos".parse().unwrap();
        assert!(m.matches(&op("get", "/x")));
        let m: Matcher = "repos/get".parse().unwrap();
        assert_eq!(m, Matcher::operation_id("repos/get"));
        assert!(m.matches(&op("get", "/x")));
        let m: Matcher = "GET /repos/**".parse().unwrap();
        assert!(m.matches(&op("get", "/repos/{a}")));
        assert!(!m.matches(&op("post", "/repos/{a}")));
        let m: Matcher = "/repos/*".parse().unwrap();
        assert!(m.matches(&op("delete", "/repos/{a}")));
        assert!("".parse::<Matcher>().is_err());
        assert!(PathPattern::parse("repos").is_err());
        let sel = Selection::all()
            .include(Matcher::tag("repos"))
            .exclude(Matcher::path("DELETE /**").unwrap());
        assert!(sel.selects(&op("get", "/a")));
        assert!(!sel.selects(&op("delete", "/a")));
    }

    #[test]
    fn url_sources_show_no_query() {
        let s = SpecSource::Url("https://h.example/spec.json?token=abc".into());
        assert_eq!(s.label(), "https://h.example/spec.json");
        assert!(!format!("{s:?}").contains("abc"));
    }
}
