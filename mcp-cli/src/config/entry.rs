//! One server entry of `mcpServers`, checked key by key so that every
//! problem names its place (`mcpServers.notes.args[1]`) and what was expected.

use std::path::Path;
use std::time::Duration;

use mcp_hub::{ContentLimit, ServerAuthority, ServerName};
use mcp_session::Negotiation;
use serde_json::{Map, Value};

use crate::args::RemoteTransport;
use crate::config::document::json_type;
use crate::config::expand::is_variable_name;
use crate::config::secrets::{
    NameProblem, check_variable_name, holds_secret, is_secret_name, secret_argument,
};
use crate::config::url_check::{UrlProblem, check_url};
use crate::confirm::Confirm;
use crate::error::{CliError, ConfigProblem};

/// Keys every entry may have.
const COMMON_KEYS: &[&str] = &[
    "type",
    "negotiation",
    "request_timeout_ms",
    "start_timeout_ms",
    "allow",
    "max_content_bytes",
    "disabled",
    "roots",
    "permission",
    "tool_permissions",
    "helpers",
    "confirm",
];
const STDIO_KEYS: &[&str] = &["command", "args", "env", "cwd", "env_inherit"];
const REMOTE_KEYS: &[&str] = &[
    "url",
    "headers",
    "token_env",
    "token_header",
    "token_prefix",
    "auth",
];
/// Keys of an OpenAPI entry (one document at the top level, or several
/// under `documents`).
const OPENAPI_KEYS: &[&str] = &[
    "openapi",
    "documents",
    "base_url",
    "prefix",
    "operations",
    "exclude_operations",
    "credentials",
    "token_env",
];
/// Keys of one document of `documents`.
const DOCUMENT_KEYS: &[&str] = &[
    "openapi",
    "base_url",
    "prefix",
    "operations",
    "exclude_operations",
    "credentials",
    "token_env",
];
const ALL_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "env_inherit",
    "url",
    "headers",
    "token_env",
    "token_header",
    "token_prefix",
    "auth",
    "openapi",
    "documents",
    "base_url",
    "prefix",
    "operations",
    "exclude_operations",
    "credentials",
    "type",
    "negotiation",
    "request_timeout_ms",
    "start_timeout_ms",
    "allow",
    "max_content_bytes",
    "disabled",
    "roots",
    "permission",
    "tool_permissions",
    "helpers",
    "confirm",
];
const ALLOW_KEYS: &[&str] = &["tools", "resources", "prompts", "skills"];
/// Keys of `auth`: only names of sources, never a secret.
const AUTH_KEYS: &[&str] = &[
    "grant",
    "client_id",
    "issuer",
    "client_auth",
    "client_secret_env",
    "client_secret_file",
    "private_key_file",
    "assertion_env",
    "assertion_file",
    "idp",
    "dpop",
];
const IDP_KEYS: &[&str] = &[
    "issuer",
    "token_endpoint",
    "client_id",
    "client_secret_env",
    "client_secret_file",
    "id_token_env",
    "id_token_file",
];
const GRANTS: &[&str] = &[
    "authorization_code",
    "client_credentials",
    "jwt_bearer",
    "enterprise",
];
const CLIENT_AUTHS: &[&str] = &[
    "none",
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt",
];
const DPOP_MODES: &[&str] = &["when_offered", "required", "off"];

/// Longest request deadline accepted (the session's hard maximum).
pub(crate) const MAX_TIMEOUT_MS: u64 = 600_000;

/// Longest permission name.
pub(crate) const MAX_PERMISSION_LEN: usize = 64;

/// Whether `name` is a permission name: 1 to 64 characters of ASCII
/// letters, digits, `_`, `.`, `:` and `-` (`github.write`, `team:notes`).
/// The same rule for the configuration's `permission` / `tool_permissions`
/// and `--grant`.
pub(crate) fn is_permission_name(name: &str) -> bool {
    (1..=MAX_PERMISSION_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// A configured server, its strings not yet `${VAR}`-expanded.
#[derive(Clone, Debug)]
pub(crate) struct ServerEntry {
    pub(crate) name: String,
    pub(crate) kind: EntryKind,
    pub(crate) negotiation: Negotiation,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) start_timeout: Option<Duration>,
    pub(crate) allow: Option<ServerAuthority>,
    pub(crate) max_content_bytes: Option<ContentLimit>,
    pub(crate) disabled: bool,
    /// Directories offered to the server as roots; `None`: the working
    /// directory to a local server, nothing to a remote one.
    pub(crate) roots: Option<Vec<String>>,
    /// The server's client-wide permission tag: every operation on it needs
    /// `--grant` of this permission.
    pub(crate) permission: Option<String>,
    /// Permission tags of single tools (local tool name, permission).
    pub(crate) tool_permissions: Vec<(String, String)>,
    /// Context helper tools (list/read resources, list/get prompts).
    pub(crate) helpers: bool,
    /// The tools whose every call a person confirms first.
    pub(crate) confirm: Confirm,
}

/// How the server is reached.
#[derive(Clone, Debug)]
pub(crate) enum EntryKind {
    Stdio(StdioEntry),
    Remote(RemoteEntry),
    /// OpenAPI documents served in-process as an MCP server.
    OpenApi(OpenApiEntry),
}

/// An OpenAPI server: one document, or several fused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OpenApiEntry {
    pub(crate) documents: Vec<OpenApiDocument>,
}

/// One OpenAPI document of an entry (strings not yet `${VAR}`-expanded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OpenApiDocument {
    /// A path (relative to the configuration file's directory) or an URL.
    pub(crate) spec: String,
    pub(crate) base_url: String,
    pub(crate) prefix: Option<String>,
    /// Operations kept: an operationId, `tag:NAME` or `path:PATTERN`.
    pub(crate) operations: Vec<String>,
    pub(crate) exclude_operations: Vec<String>,
    /// Security scheme → where its secret comes from.
    pub(crate) credentials: Vec<(String, SchemeSecret)>,
    /// A bearer token for every request of the document.
    pub(crate) token_env: Option<String>,
}

/// The variables of one security scheme's secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SchemeSecret {
    Env(String),
    Basic {
        user_env: String,
        password_env: String,
    },
}

#[derive(Clone, Debug, Default)]
pub(crate) struct StdioEntry {
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) env_inherit: Vec<String>,
    pub(crate) cwd: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct RemoteEntry {
    pub(crate) transport: RemoteTransport,
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) token: Option<TokenEntry>,
    /// How OAuth tokens are obtained (`None`: interactive sign-in by
    /// `mcp login`).
    pub(crate) auth: Option<Box<AuthEntry>>,
}

/// The OAuth grant of a remote server (`auth`), its secrets by source only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AuthEntry {
    /// One of [`GRANTS`].
    pub(crate) grant: &'static str,
    pub(crate) client_id: Option<String>,
    /// The authorization server a pre-registered client (authorization
    /// code grant) belongs to.
    pub(crate) issuer: Option<String>,
    /// One of [`CLIENT_AUTHS`], defaulted from what is configured.
    pub(crate) client_auth: &'static str,
    pub(crate) client_secret: Option<SourceEntry>,
    pub(crate) private_key_file: Option<String>,
    pub(crate) assertion: Option<SourceEntry>,
    pub(crate) idp: Option<IdpEntry>,
    /// One of [`DPOP_MODES`].
    pub(crate) dpop: &'static str,
}

/// Where a secret is read from (names, paths; `${VAR}` not yet expanded in
/// paths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SourceEntry {
    Env(String),
    File(String),
}

/// The enterprise identity provider of the `enterprise` grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IdpEntry {
    pub(crate) issuer: String,
    pub(crate) token_endpoint: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<SourceEntry>,
    pub(crate) id_token: SourceEntry,
}

/// A credential header filled from an environment variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TokenEntry {
    pub(crate) env: String,
    pub(crate) header: Option<String>,
    pub(crate) prefix: Option<String>,
}

impl ServerEntry {
    /// A one-off stdio server from the command line: `command` (program
    /// and arguments), its variables (`env`: checked names), the variables
    /// it inherits and its directory.
    pub(crate) fn one_off_stdio(
        command: &[String],
        env: Vec<(String, String)>,
        env_inherit: Vec<String>,
        cwd: Option<String>,
    ) -> Self {
        Self::with_kind(
            "server",
            EntryKind::Stdio(StdioEntry {
                command: command[0].clone(),
                args: command[1..].to_vec(),
                env,
                env_inherit,
                cwd,
            }),
        )
    }

    /// A one-off remote server from the command line, with its extra
    /// headers (checked names).
    pub(crate) fn one_off_remote(
        url: &str,
        transport: RemoteTransport,
        token_env: Option<&str>,
        headers: Vec<(String, String)>,
    ) -> Self {
        Self::with_kind(
            "server",
            EntryKind::Remote(RemoteEntry {
                transport,
                url: url.to_owned(),
                headers,
                token: token_env.map(|env| TokenEntry {
                    env: env.to_owned(),
                    header: None,
                    prefix: None,
                }),
                auth: None,
            }),
        )
    }

    fn with_kind(name: &str, kind: EntryKind) -> Self {
        Self {
            name: name.to_owned(),
            kind,
            negotiation: Negotiation::Auto,
            request_timeout: None,
            start_timeout: None,
            allow: None,
            max_content_bytes: None,
            disabled: false,
            roots: None,
            permission: None,
            tool_permissions: Vec::new(),
            helpers: false,
            confirm: Confirm::Never,
        }
    }

    /// The same entry offering `roots` (when any are given).
    pub(crate) fn with_roots(mut self, roots: &[String]) -> Self {
        if !roots.is_empty() {
            self.roots = Some(roots.to_vec());
        }
        self
    }
}

/// Checks one entry at `mcpServers.<name>` of `file`.
pub(crate) fn parse_entry(file: &Path, name: &str, value: &Value) -> Result<ServerEntry, CliError> {
    let base = child("mcpServers", name);
    let err = |path: &str, problem| CliError::config(file, path, problem);
    if ServerName::new(name).is_err() {
        return Err(err(&base, ConfigProblem::InvalidServerName));
    }
    let object = value.as_object().ok_or_else(|| {
        err(
            &base,
            ConfigProblem::WrongType {
                expected: "an object",
                found: json_type(value),
            },
        )
    })?;
    let at = Fields {
        file,
        base: &base,
        object,
    };
    for key in object.keys() {
        if !ALL_KEYS.contains(&key.as_str()) {
            return Err(err(
                &at.path(key),
                ConfigProblem::UnknownKey { allowed: ALL_KEYS },
            ));
        }
    }
    // `streamable-http` is how part of the ecosystem spells `http`.
    let kind_name = at.string_in(
        "type",
        &["stdio", "http", "streamable-http", "sse", "openapi"],
    )?;
    let has_command = object.contains_key("command");
    let has_url = object.contains_key("url");
    let has_openapi = object.contains_key("openapi") || object.contains_key("documents");
    if has_command && has_url {
        return Err(err(&base, ConfigProblem::CommandAndUrl));
    }
    let openapi = match kind_name {
        Some("openapi") => true,
        Some(_) => false,
        None => has_openapi && !has_command && !has_url,
    };
    if openapi {
        for key in object.keys() {
            let key = key.as_str();
            if !OPENAPI_KEYS.contains(&key) && !COMMON_KEYS.contains(&key) {
                return Err(err(
                    &at.path(key),
                    ConfigProblem::WrongKindKey {
                        kind: "stdio or remote (url)",
                    },
                ));
            }
        }
        let kind = EntryKind::OpenApi(parse_openapi(&at)?);
        return finish_entry(name, &at, kind);
    }
    let remote = match kind_name {
        Some("stdio") => false,
        Some(_) => true,
        None => has_url,
    };
    let (own, other_kind) = if remote {
        (REMOTE_KEYS, "stdio")
    } else {
        (STDIO_KEYS, "remote (url)")
    };
    for key in object.keys() {
        let key = key.as_str();
        if !own.contains(&key) && !COMMON_KEYS.contains(&key) {
            return Err(err(
                &at.path(key),
                ConfigProblem::WrongKindKey { kind: other_kind },
            ));
        }
    }
    let kind = if remote {
        EntryKind::Remote(parse_remote(&at, kind_name)?)
    } else {
        EntryKind::Stdio(parse_stdio(&at)?)
    };
    finish_entry(name, &at, kind)
}

/// The keys every kind of entry shares.
fn finish_entry(name: &str, at: &Fields<'_>, kind: EntryKind) -> Result<ServerEntry, CliError> {
    let at = *at;
    let negotiation = match at.string_in("negotiation", &["auto", "legacy", "modern"])? {
        Some("legacy") => Negotiation::Legacy,
        Some("modern") => Negotiation::Modern,
        _ => Negotiation::Auto,
    };
    let max_content_bytes = match at.integer("max_content_bytes", 1024, 16 * 1024 * 1024)? {
        // In range by the check above.
        Some(n) => ContentLimit::new(n as usize).ok(),
        None => None,
    };
    Ok(ServerEntry {
        name: name.to_owned(),
        kind,
        negotiation,
        request_timeout: at
            .integer("request_timeout_ms", 1, MAX_TIMEOUT_MS)?
            .map(Duration::from_millis),
        start_timeout: at
            .integer("start_timeout_ms", 1, MAX_TIMEOUT_MS)?
            .map(Duration::from_millis),
        allow: parse_allow(&at)?,
        max_content_bytes,
        disabled: at.boolean("disabled")?.unwrap_or(false),
        roots: parse_roots(&at)?,
        permission: parse_permission(&at)?,
        tool_permissions: parse_tool_permissions(&at)?,
        helpers: at.boolean("helpers")?.unwrap_or(false),
        confirm: parse_confirm(&at)?,
    })
}

/// `confirm`: `true` (every tool), `false`, or the names of the tools (on
/// the server) whose calls a person confirms first.
fn parse_confirm(at: &Fields<'_>) -> Result<Confirm, CliError> {
    match at.object.get("confirm") {
        None | Some(Value::Bool(false)) => Ok(Confirm::Never),
        Some(Value::Bool(true)) => Ok(Confirm::All),
        Some(Value::Array(_)) => Ok(Confirm::Tools(
            at.string_list("confirm")?.into_iter().collect(),
        )),
        Some(other) => Err(at.wrong("confirm", "true, false or an array of tool names", other)),
    }
}

/// An OpenAPI entry: `openapi` (one document) or `documents` (several).
fn parse_openapi(at: &Fields<'_>) -> Result<OpenApiEntry, CliError> {
    match (at.object.get("openapi"), at.object.get("documents")) {
        (Some(_), Some(_)) => Err(at.error(
            &at.path("documents"),
            ConfigProblem::Conflict {
                other: "`openapi` (one document; list several under `documents`)",
            },
        )),
        (Some(_), None) => Ok(OpenApiEntry {
            documents: vec![parse_document(at)?],
        }),
        (None, Some(value)) => {
            for key in DOCUMENT_KEYS.iter().filter(|k| **k != "openapi") {
                if at.object.contains_key(*key) {
                    return Err(at.error(
                        &at.path(key),
                        ConfigProblem::Conflict {
                            other: "`documents` (give it inside each document)",
                        },
                    ));
                }
            }
            let path = at.path("documents");
            let items = value
                .as_array()
                .filter(|items| !items.is_empty())
                .ok_or_else(|| at.wrong("documents", "a non-empty array of objects", value))?;
            let mut documents = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let item_path = format!("{path}[{i}]");
                let object = item.as_object().ok_or_else(|| {
                    at.error(
                        &item_path,
                        ConfigProblem::WrongType {
                            expected: "an object",
                            found: json_type(item),
                        },
                    )
                })?;
                let inner = Fields {
                    file: at.file,
                    base: &item_path,
                    object,
                };
                inner.only_keys(DOCUMENT_KEYS)?;
                documents.push(parse_document(&inner)?);
            }
            Ok(OpenApiEntry { documents })
        }
        (None, None) => Err(at.error(at.base, ConfigProblem::MissingKey { key: "openapi" })),
    }
}

/// One document's keys at `at`.
fn parse_document(at: &Fields<'_>) -> Result<OpenApiDocument, CliError> {
    let spec = at
        .plain_string("openapi")?
        .ok_or_else(|| at.error(at.base, ConfigProblem::MissingKey { key: "openapi" }))?;
    if spec.contains("://") {
        at.url(&at.path("openapi"), &spec)?;
    }
    let base_url = at
        .string("base_url")?
        .ok_or_else(|| at.error(at.base, ConfigProblem::MissingKey { key: "base_url" }))?
        .to_owned();
    at.url(&at.path("base_url"), &base_url)?;
    let prefix = at.plain_string("prefix")?;
    let operations = at.string_list("operations")?;
    let exclude_operations = at.string_list("exclude_operations")?;
    for (key, list) in [
        ("operations", &operations),
        ("exclude_operations", &exclude_operations),
    ] {
        for (i, item) in list.iter().enumerate() {
            if item.is_empty() || item == "tag:" || item == "path:" {
                return Err(at.error(&format!("{}[{i}]", at.path(key)), ConfigProblem::Empty));
            }
        }
    }
    let mut credentials = Vec::new();
    if let Some(value) = at.object.get("credentials") {
        let path = at.path("credentials");
        let map = value.as_object().ok_or_else(|| {
            at.wrong(
                "credentials",
                "an object of security scheme names to variable names",
                value,
            )
        })?;
        for (scheme, secret) in map {
            let here = child(&path, scheme);
            let secret = match secret {
                Value::String(name) => {
                    variable_name(at, &here, name)?;
                    SchemeSecret::Env(name.clone())
                }
                Value::Object(pair) => {
                    let inner = Fields {
                        file: at.file,
                        base: &here,
                        object: pair,
                    };
                    inner.only_keys(&["user_env", "password_env"])?;
                    let get = |key: &'static str| -> Result<String, CliError> {
                        let name = inner
                            .string(key)?
                            .ok_or_else(|| inner.error(&here, ConfigProblem::MissingKey { key }))?;
                        variable_name(&inner, &inner.path(key), name)?;
                        Ok(name.to_owned())
                    };
                    SchemeSecret::Basic {
                        user_env: get("user_env")?,
                        password_env: get("password_env")?,
                    }
                }
                other => {
                    return Err(at.error(
                        &here,
                        ConfigProblem::WrongType {
                            expected: "a variable name, or {\"user_env\", \"password_env\"}",
                            found: json_type(other),
                        },
                    ));
                }
            };
            credentials.push((scheme.clone(), secret));
        }
    }
    let token_env = match at.string("token_env")? {
        Some(name) => {
            variable_name(at, &at.path("token_env"), name)?;
            Some(name.to_owned())
        }
        None => None,
    };
    Ok(OpenApiDocument {
        spec,
        base_url,
        prefix,
        operations,
        exclude_operations,
        credentials,
        token_env,
    })
}

/// `permission`: one permission name.
fn parse_permission(at: &Fields<'_>) -> Result<Option<String>, CliError> {
    let Some(name) = at.string("permission")? else {
        return Ok(None);
    };
    if !is_permission_name(name) {
        return Err(at.error(&at.path("permission"), ConfigProblem::InvalidPermission));
    }
    Ok(Some(name.to_owned()))
}

/// `tool_permissions`: `{"tool": "permission", …}`, a tool by its name on
/// the server.
fn parse_tool_permissions(at: &Fields<'_>) -> Result<Vec<(String, String)>, CliError> {
    let map = at.string_map("tool_permissions")?;
    for (tool, permission) in &map {
        let path = child(&at.path("tool_permissions"), tool);
        if tool.is_empty() {
            return Err(at.error(&path, ConfigProblem::Empty));
        }
        if !is_permission_name(permission) {
            return Err(at.error(&path, ConfigProblem::InvalidPermission));
        }
    }
    Ok(map)
}

/// `roots`: local directories (a path, absolute or from the working
/// directory), never a URI.
fn parse_roots(at: &Fields<'_>) -> Result<Option<Vec<String>>, CliError> {
    if !at.object.contains_key("roots") {
        return Ok(None);
    }
    let roots = at.string_list("roots")?;
    for (i, root) in roots.iter().enumerate() {
        let path = format!("{}[{i}]", at.path("roots"));
        if root.is_empty() {
            return Err(at.error(&path, ConfigProblem::Empty));
        }
        if root.contains("://") || root.starts_with("file:") {
            return Err(at.error(&path, ConfigProblem::RootNotLocalPath));
        }
    }
    Ok(Some(roots))
}

/// A value given where a variable name belongs, checked without echoing it.
fn variable_name(at: &Fields<'_>, path: &str, value: &str) -> Result<(), CliError> {
    match check_variable_name(value) {
        Ok(()) => Ok(()),
        Err(NameProblem::TokenValue) => Err(at.error(path, ConfigProblem::TokenAsName)),
        Err(NameProblem::NotAName) => Err(at.error(path, ConfigProblem::InvalidVariableName)),
    }
}

fn parse_stdio(at: &Fields<'_>) -> Result<StdioEntry, CliError> {
    let command = at
        .string("command")?
        .ok_or_else(|| at.error(at.base, ConfigProblem::MissingKey { key: "command" }))?;
    if command.is_empty() {
        return Err(at.error(&at.path("command"), ConfigProblem::Empty));
    }
    if holds_secret(command, false) {
        return Err(at.error(&at.path("command"), ConfigProblem::LiteralSecret));
    }
    let args = at.string_list("args")?;
    if let Some(i) = secret_argument(&args) {
        return Err(at.error(
            &format!("{}[{i}]", at.path("args")),
            ConfigProblem::LiteralSecret,
        ));
    }
    let env = at.string_map("env")?;
    for (key, value) in &env {
        let path = child(&at.path("env"), key);
        if !is_variable_name(key) {
            return Err(at.error(&path, ConfigProblem::InvalidVariableName));
        }
        if holds_secret(value, is_secret_name(key)) {
            return Err(at.error(&path, ConfigProblem::LiteralSecret));
        }
    }
    let env_inherit = at.string_list("env_inherit")?;
    for (i, name) in env_inherit.iter().enumerate() {
        variable_name(at, &format!("{}[{i}]", at.path("env_inherit")), name)?;
    }
    Ok(StdioEntry {
        command: command.to_owned(),
        args,
        env,
        env_inherit,
        cwd: at.string("cwd")?.map(str::to_owned),
    })
}

fn parse_remote(at: &Fields<'_>, kind: Option<&str>) -> Result<RemoteEntry, CliError> {
    let url = at
        .string("url")?
        .ok_or_else(|| at.error(at.base, ConfigProblem::MissingKey { key: "url" }))?;
    // A URL with `${VAR}` in it is checked again once expanded.
    if let Err(problem) = check_url(url) {
        let literal_problem = match problem {
            UrlProblem::Credentials => Some(ConfigProblem::CredentialsInUrl),
            UrlProblem::Invalid if !url.contains("${") => Some(ConfigProblem::InvalidUrl),
            UrlProblem::Invalid => None,
        };
        if let Some(problem) = literal_problem {
            return Err(at.error(&at.path("url"), problem));
        }
    }
    let headers = at.string_map("headers")?;
    for (name, value) in &headers {
        let path = child(&at.path("headers"), name);
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(at.error(&path, ConfigProblem::InvalidHeaderName));
        }
        if holds_secret(value, is_secret_name(name)) {
            return Err(at.error(&path, ConfigProblem::LiteralSecret));
        }
    }
    let token = match at.string("token_env")? {
        Some(env) => {
            variable_name(at, &at.path("token_env"), env)?;
            let header = at.string("token_header")?;
            if let Some(h) = header
                && http::HeaderName::from_bytes(h.as_bytes()).is_err()
            {
                return Err(at.error(&at.path("token_header"), ConfigProblem::InvalidHeaderName));
            }
            let prefix = at.string("token_prefix")?;
            if prefix.is_some_and(|p| holds_secret(p, false)) {
                return Err(at.error(&at.path("token_prefix"), ConfigProblem::LiteralSecret));
            }
            Some(TokenEntry {
                env: env.to_owned(),
                header: header.map(str::to_owned),
                prefix: prefix.map(str::to_owned),
            })
        }
        None => {
            for key in ["token_header", "token_prefix"] {
                if at.object.contains_key(key) {
                    return Err(at.error(at.base, ConfigProblem::MissingKey { key: "token_env" }));
                }
            }
            None
        }
    };
    Ok(RemoteEntry {
        transport: if kind == Some("sse") {
            RemoteTransport::Sse
        } else {
            RemoteTransport::Http
        },
        url: url.to_owned(),
        headers,
        token,
        auth: parse_auth(at)?,
    })
}

/// Picks the member of `allowed` equal to `value` (for `&'static str`s).
fn pick(allowed: &'static [&'static str], value: &str) -> &'static str {
    allowed
        .iter()
        .find(|a| **a == value)
        .copied()
        .unwrap_or(allowed[0])
}

/// `auth`: the grant and the sources of its secrets.
fn parse_auth(at: &Fields<'_>) -> Result<Option<Box<AuthEntry>>, CliError> {
    let Some(value) = at.object.get("auth") else {
        return Ok(None);
    };
    if at.object.contains_key("token_env") {
        return Err(at.error(
            &at.path("auth"),
            ConfigProblem::Conflict {
                other: "`token_env`",
            },
        ));
    }
    let path = at.path("auth");
    let inner = at.object_at("auth", value, &path, AUTH_KEYS)?;
    let object = inner.object;
    let grant = pick(
        GRANTS,
        inner
            .string_in("grant", GRANTS)?
            .unwrap_or("authorization_code"),
    );
    let client_id = inner.plain_string("client_id")?;
    let issuer = inner.string("issuer")?.map(str::to_owned);
    if let Some(issuer) = &issuer {
        inner.url(&inner.path("issuer"), issuer)?;
    }
    let client_secret = inner.source("client_secret_env", "client_secret_file")?;
    let private_key_file = inner.plain_string("private_key_file")?;
    if client_secret.is_some() && private_key_file.is_some() {
        return Err(inner.error(
            &inner.path("private_key_file"),
            ConfigProblem::Conflict {
                other: "`client_secret_env` / `client_secret_file`",
            },
        ));
    }
    let client_auth = match inner.string_in("client_auth", CLIENT_AUTHS)? {
        Some(named) => pick(CLIENT_AUTHS, named),
        None if private_key_file.is_some() => "private_key_jwt",
        None if client_secret.is_some() => "client_secret_basic",
        None => "none",
    };
    // What the method needs, and nothing it would not use.
    let (needs, key): (Option<&'static str>, bool) = match client_auth {
        "private_key_jwt" => (Some("private_key_file"), private_key_file.is_some()),
        "client_secret_basic" | "client_secret_post" => {
            (Some("client_secret_env"), client_secret.is_some())
        }
        _ => (None, client_secret.is_none() && private_key_file.is_none()),
    };
    if !key {
        return Err(match needs {
            Some(key) => inner.error(inner.base, ConfigProblem::MissingKey { key }),
            None => inner.error(
                &inner.path("client_auth"),
                ConfigProblem::Conflict {
                    other: "`client_auth: none`",
                },
            ),
        });
    }
    let assertion = inner.source("assertion_env", "assertion_file")?;
    let idp = match object.get("idp") {
        Some(value) => Some(parse_idp(&inner, value)?),
        None => None,
    };
    let dpop = pick(
        DPOP_MODES,
        inner
            .string_in("dpop", DPOP_MODES)?
            .unwrap_or("when_offered"),
    );
    // Each grant's requirements; keys of other grants are refused rather
    // than ignored.
    let require = |key: &'static str, present: bool| {
        if present {
            Ok(())
        } else {
            Err(inner.error(inner.base, ConfigProblem::MissingKey { key }))
        }
    };
    let refuse = |key: &'static str, present: bool| {
        if present {
            Err(inner.error(&inner.path(key), ConfigProblem::NotForGrant { grant }))
        } else {
            Ok(())
        }
    };
    match grant {
        "authorization_code" => {
            if client_id.is_some() {
                require("issuer", issuer.is_some())?;
            }
            refuse("private_key_file", private_key_file.is_some())?;
            refuse("assertion_env", assertion.is_some())?;
            refuse("idp", idp.is_some())?;
        }
        "client_credentials" => {
            require("client_id", client_id.is_some())?;
            require("issuer", issuer.is_some())?;
            if client_auth == "none" {
                return Err(inner.error(
                    inner.base,
                    ConfigProblem::MissingKey {
                        key: "client_secret_env, client_secret_file or private_key_file",
                    },
                ));
            }
            refuse("assertion_env", assertion.is_some())?;
            refuse("idp", idp.is_some())?;
        }
        "jwt_bearer" => {
            require("assertion_env", assertion.is_some())?;
            require("issuer", issuer.is_some())?;
            refuse("idp", idp.is_some())?;
        }
        _ => {
            require("client_id", client_id.is_some())?;
            require("issuer", issuer.is_some())?;
            require("idp", idp.is_some())?;
            refuse("assertion_env", assertion.is_some())?;
        }
    }
    Ok(Some(Box::new(AuthEntry {
        grant,
        client_id,
        issuer,
        client_auth,
        client_secret,
        private_key_file,
        assertion,
        idp,
        dpop,
    })))
}

fn parse_idp(at: &Fields<'_>, value: &Value) -> Result<IdpEntry, CliError> {
    let path = at.path("idp");
    let inner = at.object_at("idp", value, &path, IDP_KEYS)?;
    let required = |key: &'static str| {
        inner
            .plain_string(key)?
            .ok_or_else(|| inner.error(inner.base, ConfigProblem::MissingKey { key }))
    };
    let issuer = required("issuer")?;
    inner.url(&inner.path("issuer"), &issuer)?;
    let token_endpoint = inner.string("token_endpoint")?.map(str::to_owned);
    if let Some(endpoint) = &token_endpoint {
        inner.url(&inner.path("token_endpoint"), endpoint)?;
    }
    let client_id = required("client_id")?;
    let client_secret = inner.source("client_secret_env", "client_secret_file")?;
    let id_token = inner
        .source("id_token_env", "id_token_file")?
        .ok_or_else(|| {
            inner.error(
                inner.base,
                ConfigProblem::MissingKey {
                    key: "id_token_env",
                },
            )
        })?;
    Ok(IdpEntry {
        issuer,
        token_endpoint,
        client_id,
        client_secret,
        id_token,
    })
}

fn parse_allow(at: &Fields<'_>) -> Result<Option<ServerAuthority>, CliError> {
    let Some(value) = at.object.get("allow") else {
        return Ok(None);
    };
    let path = at.path("allow");
    let object = value.as_object().ok_or_else(|| {
        at.error(
            &path,
            ConfigProblem::WrongType {
                expected: "an object with `tools`, `resources`, `prompts` and/or `skills` lists",
                found: json_type(value),
            },
        )
    })?;
    let inner = Fields {
        file: at.file,
        base: &path,
        object,
    };
    for key in object.keys() {
        if !ALLOW_KEYS.contains(&key.as_str()) {
            return Err(inner.error(
                &inner.path(key),
                ConfigProblem::UnknownKey {
                    allowed: ALLOW_KEYS,
                },
            ));
        }
    }
    let mut rules = ServerAuthority::default();
    if object.contains_key("tools") {
        rules = rules.tools(inner.string_list("tools")?);
    }
    if object.contains_key("resources") {
        rules = rules.resources(inner.string_list("resources")?);
    }
    if object.contains_key("prompts") {
        rules = rules.prompts(inner.string_list("prompts")?);
    }
    if object.contains_key("skills") {
        rules = rules.skills(inner.string_list("skills")?);
    }
    Ok(Some(rules))
}

/// The path of member `key` of the object at `base`: `base.key` when the
/// key is simple, else `base["a b"]`; a key at the root has no dot.
pub(crate) fn child(base: &str, key: &str) -> String {
    let simple = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'$');
    match (simple, base.is_empty()) {
        (true, true) => key.to_owned(),
        (true, false) => format!("{base}.{key}"),
        (false, _) => format!("{base}[{}]", Value::String(key.to_owned())),
    }
}

/// Typed access to an object's members, with paths for errors.
#[derive(Clone, Copy)]
struct Fields<'a> {
    file: &'a Path,
    base: &'a str,
    object: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    fn path(&self, key: &str) -> String {
        child(self.base, key)
    }

    /// The object `value` of member `key` as fields at `path` (its path),
    /// refusing any key not in `allowed`.
    fn object_at<'b>(
        &self,
        key: &str,
        value: &'b Value,
        path: &'b str,
        allowed: &'static [&'static str],
    ) -> Result<Fields<'b>, CliError>
    where
        'a: 'b,
    {
        let object = value
            .as_object()
            .ok_or_else(|| self.wrong(key, "an object", value))?;
        let inner = Fields {
            file: self.file,
            base: path,
            object,
        };
        inner.only_keys(allowed)?;
        Ok(inner)
    }

    /// Refuses any key not in `allowed`.
    fn only_keys(&self, allowed: &'static [&'static str]) -> Result<(), CliError> {
        match self.object.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err(self.error(&self.path(key), ConfigProblem::UnknownKey { allowed })),
            None => Ok(()),
        }
    }

    /// A string that is neither empty nor credential-looking (an id, a
    /// path).
    fn plain_string(&self, key: &str) -> Result<Option<String>, CliError> {
        match self.string(key)? {
            Some("") => Err(self.error(&self.path(key), ConfigProblem::Empty)),
            Some(s) if holds_secret(s, false) => {
                Err(self.error(&self.path(key), ConfigProblem::LiteralSecret))
            }
            Some(s) => Ok(Some(s.to_owned())),
            None => Ok(None),
        }
    }

    /// An absolute https URL (http on loopback), no credentials in it.
    fn url(&self, path: &str, url: &str) -> Result<(), CliError> {
        match check_url(url) {
            Ok(()) => Ok(()),
            Err(UrlProblem::Credentials) => Err(self.error(path, ConfigProblem::CredentialsInUrl)),
            Err(UrlProblem::Invalid) if url.contains("${") => Ok(()),
            Err(UrlProblem::Invalid) => Err(self.error(path, ConfigProblem::InvalidUrl)),
        }
    }

    /// A secret's source: `env_key` (a variable name) or `file_key` (a
    /// path), not both.
    fn source(&self, env_key: &str, file_key: &str) -> Result<Option<SourceEntry>, CliError> {
        let env = self.string(env_key)?;
        let file = self.plain_string(file_key)?;
        match (env, file) {
            (Some(_), Some(_)) => Err(self.error(
                &self.path(file_key),
                ConfigProblem::Conflict {
                    other: "the matching `_env` key",
                },
            )),
            (Some(name), None) => {
                variable_name(self, &self.path(env_key), name)?;
                Ok(Some(SourceEntry::Env(name.to_owned())))
            }
            (None, Some(path)) => Ok(Some(SourceEntry::File(path))),
            (None, None) => Ok(None),
        }
    }

    fn error(&self, path: &str, problem: ConfigProblem) -> CliError {
        CliError::config(self.file, path, problem)
    }

    fn wrong(&self, key: &str, expected: &'static str, found: &Value) -> CliError {
        self.error(
            &self.path(key),
            ConfigProblem::WrongType {
                expected,
                found: json_type(found),
            },
        )
    }

    fn string(&self, key: &str) -> Result<Option<&'a str>, CliError> {
        match self.object.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    fn string_in(
        &self,
        key: &str,
        allowed: &'static [&'static str],
    ) -> Result<Option<&'a str>, CliError> {
        match self.string(key)? {
            Some(s) if !allowed.contains(&s) => {
                Err(self.error(&self.path(key), ConfigProblem::NotOneOf { allowed }))
            }
            other => Ok(other),
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, CliError> {
        match self.object.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(key, "true or false", other)),
        }
    }

    fn integer(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>, CliError> {
        match self.object.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if (min..=max).contains(&v) => Ok(Some(v)),
                _ => Err(self.error(&self.path(key), ConfigProblem::OutOfRange { min, max })),
            },
            Some(other) => Err(self.wrong(key, "a whole number", other)),
        }
    }

    fn string_list(&self, key: &str) -> Result<Vec<String>, CliError> {
        match self.object.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(self.error(
                        &format!("{}[{i}]", self.path(key)),
                        ConfigProblem::WrongType {
                            expected: "a string",
                            found: json_type(other),
                        },
                    )),
                })
                .collect(),
            Some(other) => Err(self.wrong(key, "an array of strings", other)),
        }
    }

    fn string_map(&self, key: &str) -> Result<Vec<(String, String)>, CliError> {
        match self.object.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    other => Err(self.error(
                        &child(&self.path(key), k),
                        ConfigProblem::WrongType {
                            expected: "a string",
                            found: json_type(other),
                        },
                    )),
                })
                .collect(),
            Some(other) => Err(self.wrong(key, "an object of strings", other)),
        }
    }
}
