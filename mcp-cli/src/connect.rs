//! From configuration entries to running servers: connectors, server specs
//! and hubs. Everything protocol-related is the library's; this only maps
//! settings.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcp_hub::{
    Authority, CollisionPolicy, Discovery, Hub, HubConfig, Principal, RestartPolicy, RetryPolicy,
    ServerSpec,
};
use mcp_session::{ClientHandlers, Roots, SessionConfig};
use mcp_transport::{
    Connector, CredentialProvider, HttpConfig, HttpConnector, SseConnector, StaticHeader,
    StdioConfig, StdioConnector,
};
use mcp_types::Root;

use crate::args::RemoteTransport;
use crate::config::{
    EntryKind, MAX_TIMEOUT_MS, OpenApiEntry, RemoteEntry, SchemeSecret, ServerEntry, SourceEntry,
    StdioEntry, TokenEntry, UrlProblem, check_url, child, expand_only,
};
use crate::confirm::{ConfirmCalls, Yeses};
use crate::error::{CliError, ConfigProblem};
use mcp_auth::{
    ClientAuth, DpopMode, EnterpriseIdp, Grant, KeySource, MachineClient, OAuthConfig,
    PreRegisteredClient, SecretSource,
};
use std::path::PathBuf;

/// Where entries came from, for error messages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Origin<'a> {
    pub(crate) file: &'a Path,
    /// Whether the entry came from the command line (paths then name flags).
    pub(crate) command_line: bool,
    /// The variables `${VAR}` may read (`None`: any; a project file: those
    /// its approval listed).
    pub(crate) variables: Option<&'a BTreeSet<String>>,
}

/// How servers are started.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StartOptions {
    /// Forward the servers' stderr to the logs as it comes.
    pub(crate) verbose: bool,
    /// Offer a local server the working directory as its root when its
    /// entry names none. Off for `mcp serve`: a host started it, in a
    /// directory nobody chose, and the host's own roots are passed on.
    pub(crate) cwd_root: bool,
    /// Offer elicitation and sampling, answered by the person at the
    /// terminal ([`crate::questions::AtTerminal`]).
    pub(crate) questions: bool,
}

/// `${VAR}`-expands `text` found at `path`.
fn expanded(origin: Origin<'_>, path: &str, text: &str) -> Result<String, CliError> {
    expand_only(text, origin.variables)
        .map_err(|problem| CliError::config(origin.file, path, problem))
}

/// Where `key` of `entry` was given: `mcpServers.NAME.key` in a file, the
/// flag that gave it on the command line.
fn entry_path(origin: Origin<'_>, entry: &ServerEntry, key: &str) -> String {
    if origin.command_line {
        match key {
            "command" => "COMMAND",
            "args" => "ARGS",
            "env" => "--env",
            "cwd" => "--cwd",
            "url" => "--url",
            "headers" => "--header",
            "roots" => "--root",
            other => other,
        }
        .to_owned()
    } else {
        format!("{}.{key}", child("mcpServers", &entry.name))
    }
}

/// Where member `name` of the object `key` (`env`, `headers`) was given.
fn member_path(origin: Origin<'_>, entry: &ServerEntry, key: &str, name: &str) -> String {
    let base = entry_path(origin, entry, key);
    if origin.command_line {
        format!("{base} {name}")
    } else {
        child(&base, name)
    }
}

/// Whether `dir` can be a server's working directory: checked before the
/// program is started, since a failed start cannot tell a missing
/// directory from a missing program.
fn check_directory(dir: &str) -> Result<(), ConfigProblem> {
    let problem = match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => "is not a directory",
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "does not exist",
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            "cannot be reached (permission denied)"
        }
        Err(_) => "cannot be used",
    };
    Err(ConfigProblem::BadDirectory {
        dir: dir.to_owned(),
        problem,
    })
}

/// The connector of `entry`, its strings expanded.
pub(crate) fn connector(
    origin: Origin<'_>,
    entry: &ServerEntry,
    options: StartOptions,
) -> Result<Arc<dyn Connector>, CliError> {
    match &entry.kind {
        EntryKind::Stdio(stdio) => stdio_connector(origin, entry, stdio, options),
        EntryKind::Remote(remote) => remote_connector(origin, entry, remote),
        EntryKind::OpenApi(openapi) => openapi_connector(origin, entry, openapi),
    }
}

/// An OpenAPI entry's documents as an in-process server.
fn openapi_connector(
    origin: Origin<'_>,
    entry: &ServerEntry,
    openapi: &OpenApiEntry,
) -> Result<Arc<dyn Connector>, CliError> {
    let config = openapi_config(origin, entry, openapi)?;
    Ok(Arc::new(mcp_openapi::OpenApiConnector::new(config)))
}

/// The service configuration of an OpenAPI entry, strings expanded; a
/// relative document path is taken from the configuration file's directory
/// (the working directory for the command line).
pub(crate) fn openapi_config(
    origin: Origin<'_>,
    entry: &ServerEntry,
    openapi: &OpenApiEntry,
) -> Result<mcp_openapi::OpenApiConfig, CliError> {
    use mcp_openapi::{
        CredentialRef, DocumentConfig, Limits, Matcher, OpenApiConfig, Selection, SpecSource,
    };
    let single = openapi.documents.len() == 1;
    let mut documents = Vec::with_capacity(openapi.documents.len());
    for (i, document) in openapi.documents.iter().enumerate() {
        let at = |key: &str| {
            if single {
                entry_path(origin, entry, key)
            } else {
                format!("{}[{i}].{key}", entry_path(origin, entry, "documents"))
            }
        };
        let spec = expanded(origin, &at("openapi"), &document.spec)?;
        let source = if spec.contains("://") {
            SpecSource::Url(spec)
        } else {
            let path = PathBuf::from(&spec);
            let base = if origin.command_line {
                None
            } else {
                origin.file.parent()
            };
            SpecSource::File(match base {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path,
            })
        };
        let base_url = expanded(origin, &at("base_url"), &document.base_url)?;
        let mut config = DocumentConfig::new(source, base_url);
        if let Some(prefix) = &document.prefix {
            config = config.prefix(prefix.clone());
        }
        let matcher = |key: &str, j: usize, text: &str| -> Result<Matcher, CliError> {
            if let Some(tag) = text.strip_prefix("tag:") {
                Ok(Matcher::tag(tag))
            } else if let Some(pattern) = text.strip_prefix("path:") {
                Matcher::path(pattern).map_err(|_| {
                    CliError::config(
                        origin.file,
                        &format!("{}[{j}]", at(key)),
                        ConfigProblem::NotOneOf {
                            allowed: &["an operationId", "tag:NAME", "path:/a/{b}/*"],
                        },
                    )
                })
            } else {
                Ok(Matcher::operation_id(text))
            }
        };
        let mut select = Selection::all();
        for (j, text) in document.operations.iter().enumerate() {
            select = select.include(matcher("operations", j, text)?);
        }
        for (j, text) in document.exclude_operations.iter().enumerate() {
            select = select.exclude(matcher("exclude_operations", j, text)?);
        }
        config = config.select(select);
        for (scheme, secret) in &document.credentials {
            config = config.credential(match secret {
                SchemeSecret::Env(name) => CredentialRef::env(scheme.clone(), name.clone()),
                SchemeSecret::Basic {
                    user_env,
                    password_env,
                } => CredentialRef::basic(scheme.clone(), user_env.clone(), password_env.clone()),
            });
        }
        if let Some(token) = &document.token_env {
            config = config.credential(CredentialRef::bearer_for_all(token.clone()));
        }
        documents.push(config);
    }
    let mut limits = Limits::default();
    if let Some(limit) = entry.max_content_bytes {
        // The hub refuses a larger result whole; reading more is pointless.
        limits.max_response_bytes = limits.max_response_bytes.max(limit.bytes());
    }
    if let Some(timeout) = entry.request_timeout {
        limits.request_timeout = timeout;
    }
    Ok(OpenApiConfig::new(documents).limits(limits))
}

fn stdio_connector(
    origin: Origin<'_>,
    entry: &ServerEntry,
    stdio: &StdioEntry,
    options: StartOptions,
) -> Result<Arc<dyn Connector>, CliError> {
    let path = |key: &str| entry_path(origin, entry, key);
    let mut config = StdioConfig::new(expanded(origin, &path("command"), &stdio.command)?);
    for (i, arg) in stdio.args.iter().enumerate() {
        config
            .args
            .push(expanded(origin, &format!("{}[{i}]", path("args")), arg)?);
    }
    for (key, value) in &stdio.env {
        let at = member_path(origin, entry, "env", key);
        config
            .env
            .push((key.clone(), expanded(origin, &at, value)?));
    }
    config.inherit_env = stdio.env_inherit.clone();
    if let Some(cwd) = &stdio.cwd {
        let dir = expanded(origin, &path("cwd"), cwd)?;
        check_directory(&dir)
            .map_err(|problem| CliError::config(origin.file, &path("cwd"), problem))?;
        config.cwd = Some(dir.into());
    }
    config.forward_stderr = options.verbose;
    Ok(Arc::new(StdioConnector::new(config)))
}

fn remote_connector(
    origin: Origin<'_>,
    entry: &ServerEntry,
    remote: &RemoteEntry,
) -> Result<Arc<dyn Connector>, CliError> {
    let path = |key: &str| entry_path(origin, entry, key);
    let url = expanded(origin, &path("url"), &remote.url)?;
    if let Err(problem) = check_url(&url) {
        let problem = match problem {
            UrlProblem::Credentials => ConfigProblem::CredentialsInUrl,
            UrlProblem::Invalid => ConfigProblem::InvalidUrl,
        };
        return Err(CliError::config(origin.file, &path("url"), problem));
    }
    let mut config = http_config(url);
    for (name, value) in &remote.headers {
        let at = member_path(origin, entry, "headers", name);
        let value = expanded(origin, &at, value)?;
        if http::HeaderValue::from_str(&value).is_err() {
            return Err(CliError::config(
                origin.file,
                &at,
                ConfigProblem::InvalidHeaderValue,
            ));
        }
        config.headers.push((name.clone(), value));
    }
    // A static token when configured; else OAuth: credentials stored by
    // `mcp login`, used and refreshed (and, for a machine grant, requested
    // anew) but never obtained interactively here.
    config.credentials = match &remote.token {
        Some(token) => Some(credential(token)),
        None => {
            let oauth = oauth_config(origin, entry, remote, &config.url)?;
            crate::commands::auth::stored_credentials(oauth)
                .map(|p| Arc::new(p) as Arc<dyn CredentialProvider>)
        }
    };
    Ok(match remote.transport {
        RemoteTransport::Http => Arc::new(HttpConnector::new(config)),
        RemoteTransport::Sse => Arc::new(SseConnector::new(config)),
    })
}

/// The transport settings every remote server starts from: our user agent,
/// and a transport time-out (how long an answer's head, a JSON body, or a
/// silence in an event stream may take) longer than any request deadline
/// the CLI lets a user set (`--timeout`, `request_timeout_ms`: up to 600 s),
/// so that deadline, reset by progress, is the one that ends a slow call.
fn http_config(url: String) -> HttpConfig {
    let mut config = HttpConfig::new(url);
    config.user_agent = concat!("mcp-cli/", env!("CARGO_PKG_VERSION")).to_owned();
    config.response_timeout = config
        .response_timeout
        .max(Duration::from_millis(MAX_TIMEOUT_MS) + Duration::from_secs(10));
    config
}

/// The OAuth settings of a remote entry at `url`: the grant its `auth`
/// names (interactive sign-in by default) with the sources of its secrets,
/// paths `${VAR}`-expanded.
pub(crate) fn oauth_config(
    origin: Origin<'_>,
    entry: &ServerEntry,
    remote: &RemoteEntry,
    url: &str,
) -> Result<OAuthConfig, CliError> {
    let config = crate::commands::auth::base_oauth_config(url);
    let Some(auth) = &remote.auth else {
        return Ok(config);
    };
    let at = |key: &str| format!("{}.{key}", entry_path(origin, entry, "auth"));
    let source = |key: &str, source: &SourceEntry, token: bool| -> Result<SecretSource, CliError> {
        Ok(match source {
            SourceEntry::Env(name) => SecretSource::Env(name.clone()),
            SourceEntry::File(path) => {
                let path = PathBuf::from(expanded(origin, &at(key), path)?);
                if token {
                    SecretSource::TokenFile(path)
                } else {
                    SecretSource::File(path)
                }
            }
        })
    };
    let client_auth = |method: &str,
                       secret: Option<&SourceEntry>,
                       key: Option<&String>|
     -> Result<ClientAuth, CliError> {
        Ok(match (method, secret, key) {
            ("private_key_jwt", _, Some(path)) => ClientAuth::PrivateKeyJwt(KeySource::File(
                PathBuf::from(expanded(origin, &at("private_key_file"), path)?),
            )),
            ("client_secret_post", Some(secret), _) => {
                ClientAuth::SecretPost(source("client_secret_file", secret, false)?)
            }
            ("client_secret_basic", Some(secret), _) => {
                ClientAuth::SecretBasic(source("client_secret_file", secret, false)?)
            }
            _ => ClientAuth::None,
        })
    };
    let client = || -> Result<MachineClient, CliError> {
        let mut client = MachineClient::new(
            auth.client_id.clone().unwrap_or_default(),
            client_auth(
                auth.client_auth,
                auth.client_secret.as_ref(),
                auth.private_key_file.as_ref(),
            )?,
        );
        // Its credentials go to this authorization server only, whatever
        // the MCP server's metadata names (`issuer` is required for
        // machine grants).
        if let Some(issuer) = &auth.issuer {
            client = client.issuer(expanded(origin, &at("issuer"), issuer)?);
        }
        Ok(client)
    };
    let mut config = config.dpop(match auth.dpop {
        "required" => DpopMode::Required,
        "off" => DpopMode::Off,
        _ => DpopMode::WhenOffered,
    });
    match auth.grant {
        "client_credentials" => config = config.grant(Grant::ClientCredentials(client()?)),
        "jwt_bearer" => {
            let assertion = auth
                .assertion
                .as_ref()
                .map(|a| source("assertion_file", a, true));
            if let Some(assertion) = assertion {
                config = config.grant(Grant::JwtBearer {
                    client: client()?,
                    assertion: assertion?,
                });
            }
        }
        "enterprise" => {
            if let Some(idp) = &auth.idp {
                let idp_secret = match &idp.client_secret {
                    Some(secret) => Some(source("idp.client_secret_file", secret, false)?),
                    None => None,
                };
                let idp_client = MachineClient::new(
                    idp.client_id.clone(),
                    match idp_secret {
                        Some(secret) => ClientAuth::SecretBasic(secret),
                        None => ClientAuth::None,
                    },
                );
                let issuer = expanded(origin, &at("idp.issuer"), &idp.issuer)?;
                let id_token = source("idp.id_token_file", &idp.id_token, true)?;
                let mut enterprise = EnterpriseIdp::new(issuer, idp_client, id_token);
                if let Some(endpoint) = &idp.token_endpoint {
                    enterprise = enterprise.token_endpoint(expanded(
                        origin,
                        &at("idp.token_endpoint"),
                        endpoint,
                    )?);
                }
                config = config.grant(Grant::Enterprise {
                    client: client()?,
                    idp: enterprise,
                });
            }
        }
        _ => {
            // The authorization code grant, with a pre-registered client
            // when one is configured.
            if let (Some(client_id), Some(issuer)) = (&auth.client_id, &auth.issuer) {
                let issuer = expanded(origin, &at("issuer"), issuer)?;
                let mut client = PreRegisteredClient::new(issuer, client_id);
                if let Some(secret) = &auth.client_secret {
                    let value = source("client_secret_file", secret, false)?
                        .read()
                        .map_err(CliError::Auth)?;
                    client = client.secret(value);
                }
                config = config.pre_registered(client);
            }
        }
    }
    Ok(config)
}

/// The credential header of `token`: `Authorization: Bearer <value>` by
/// default; another header gets the value as it is unless a prefix is set.
fn credential(token: &TokenEntry) -> Arc<dyn CredentialProvider> {
    let header = token.header.as_deref().unwrap_or("Authorization");
    let is_authorization = header.eq_ignore_ascii_case("authorization");
    let prefix = match token.prefix.as_deref() {
        Some(prefix) => prefix,
        None if is_authorization => "Bearer ",
        None => "",
    };
    Arc::new(StaticHeader::new(header, prefix, &token.env))
}

/// Session settings: the entry's deadline and its roots (servers such as
/// server-filesystem ask for them, and that one then serves the roots
/// instead of the directories it was started with). Roots are local
/// directories: a local server is offered the working directory unless
/// `roots` says otherwise, and unless that directory is the home directory
/// or above it (the whole disk or every user's files is never a default);
/// a remote one only the `roots` configured. Without roots the client does
/// not declare the capability at all.
fn session_config(
    origin: Origin<'_>,
    entry: &ServerEntry,
    options: StartOptions,
) -> Result<SessionConfig, CliError> {
    let mut config = SessionConfig::default();
    if let Some(timeout) = entry.request_timeout {
        config.request_timeout = timeout;
    }
    let cwd = std::env::current_dir().ok();
    let dirs: Vec<std::path::PathBuf> = match (&entry.roots, &entry.kind) {
        (Some(roots), _) => {
            let mut dirs = Vec::with_capacity(roots.len());
            for (i, root) in roots.iter().enumerate() {
                let at = format!("{}[{i}]", entry_path(origin, entry, "roots"));
                let path = std::path::PathBuf::from(expanded(origin, &at, root)?);
                dirs.push(match &cwd {
                    Some(cwd) if path.is_relative() => cwd.join(path),
                    _ => path,
                });
            }
            dirs
        }
        (None, EntryKind::Stdio(_)) if options.cwd_root => {
            cwd.filter(|d| !too_broad(d)).into_iter().collect()
        }
        (None, EntryKind::Stdio(_)) => Vec::new(),
        (None, EntryKind::Remote(_) | EntryKind::OpenApi(_)) => Vec::new(),
    };
    let roots: Vec<Root> = dirs
        .iter()
        .filter_map(|d| url::Url::from_directory_path(d).ok())
        .map(|uri| Root::new(uri.as_str()))
        .collect();
    let mut handlers = ClientHandlers::new();
    if !roots.is_empty() {
        handlers = handlers.roots(Roots::new(roots));
    }
    if options.questions {
        handlers = handlers
            .elicitation(crate::questions::AtTerminal::new(&entry.name))
            .sampling(crate::questions::AtTerminal::new(&entry.name));
    }
    config.handlers = handlers;
    Ok(config)
}

/// Whether `dir` is too broad to offer as a default root: the home
/// directory, or one of its ancestors (`/home`, `/`), or `/` itself.
fn too_broad(dir: &std::path::Path) -> bool {
    if dir.parent().is_none() {
        return true;
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    home.is_some_and(|home| home.starts_with(dir))
}

/// The hub's spec of `entry`: never restarted (a CLI run is short, and a
/// dead server should fail the command rather than come back silently),
/// no retries.
pub(crate) fn spec(
    origin: Origin<'_>,
    entry: &ServerEntry,
    options: StartOptions,
    discovery: Discovery,
) -> Result<ServerSpec, CliError> {
    let connector = connector(origin, entry, options)?;
    tracing::debug!(
        server = %entry.name,
        stdio = connector.is_stdio(),
        negotiation = ?entry.negotiation,
        "starting server"
    );
    let mut spec = ServerSpec::new(&entry.name, connector)
        .negotiation(entry.negotiation)
        .session(session_config(origin, entry, options)?)
        .restart(RestartPolicy::Never)
        .retry(RetryPolicy::none())
        .discovery(discovery)
        .context_helpers(entry.helpers);
    if let Some(timeout) = entry.start_timeout {
        spec = spec.start_timeout(timeout);
    }
    if let Some(limit) = entry.max_content_bytes {
        spec = spec.max_content_bytes(limit);
    }
    Ok(spec)
}

/// The configuration as the hub's authority document: every configured
/// server is named (so none the file does not list could get anything),
/// with its `allow` lists (or all of it without them) and its permission
/// tags (`permission`, `tool_permissions`), with or without `allow`.
pub(crate) fn authority<'a>(entries: impl IntoIterator<Item = &'a ServerEntry>) -> Authority {
    entries.into_iter().fold(Authority::named(), |a, e| {
        let mut rules = e.allow.clone().unwrap_or_default();
        if let Some(permission) = &e.permission {
            rules = rules.permission(permission);
        }
        for (tool, permission) in &e.tool_permissions {
            rules = rules.tool_permission(tool, permission);
        }
        a.with_server(&e.name, rules)
    })
}

/// The CLI's principal: `cli`, with the permissions granted by `--grant`.
/// Untagged servers and tools stay usable without a grant.
pub(crate) fn principal(grants: &[String]) -> Principal {
    grants.iter().fold(Principal::new("cli"), |p, g| p.grant(g))
}

/// Hub settings of a CLI run.
pub(crate) fn hub_config(policy: CollisionPolicy, provider_safe: bool) -> HubConfig {
    HubConfig {
        policy,
        provider_safe_names: provider_safe,
        shutdown_timeout: Duration::from_secs(5),
        ..HubConfig::default()
    }
}

/// Starts one server (required) and waits until it is ready; `principal`
/// is who acts (its grants against the entry's permission tags).
pub(crate) async fn start_one(
    origin: Origin<'_>,
    entry: &ServerEntry,
    options: StartOptions,
    discovery: Discovery,
    principal: Principal,
    yeses: Yeses,
) -> Result<Hub, CliError> {
    let spec = spec(origin, entry, options, discovery)?.required();
    let mut builder = Hub::builder(hub_config(CollisionPolicy::Prefix, false))
        .server(spec)
        .authority(authority([entry]))
        .principal(principal);
    if let Some(hook) = ConfirmCalls::for_entries([entry], yeses) {
        builder = builder.approval(hook);
    }
    Ok(builder.start().await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call the user allows 600 s is ended by its own deadline, not by the
    /// transport's shorter default (300 s) while the server still works.
    #[test]
    fn the_transport_waits_longer_than_any_deadline_a_user_can_set() {
        let config = http_config("https://mcp.example.com/mcp".to_owned());
        assert!(config.response_timeout > Duration::from_millis(MAX_TIMEOUT_MS));
        assert!(config.user_agent.starts_with("mcp-cli/"));
    }
}
