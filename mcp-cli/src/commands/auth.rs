//! `mcp login` / `mcp logout`: OAuth for HTTP servers, through `mcp-auth`.
//!
//! `login` discovers the server's authorization server, registers (or
//! reuses) a client, prints the authorization URL (opening a browser when
//! there is a display) and waits for the redirect on
//! `http://127.0.0.1:33418/callback`; the credentials are stored with 0600
//! permissions under `$XDG_DATA_HOME/mcp/oauth`. Other commands then use
//! (and refresh) them, but never start a browser themselves: without
//! credentials a server's 401 is exit code 3 with a hint to log in.
//! `logout` asks the authorization server to revoke the tokens (RFC 7009,
//! when it advertises a revocation endpoint), then forgets the server's
//! stored credentials whatever it answered, and says both (or that there
//! were none). A server that is not in a file is named by its URL
//! (`--url`), the key its credentials are stored under; `mcp inspect --url`
//! and the other commands then find them.

use std::path::Path;
use std::sync::Arc;

use mcp_auth::{
    AuthError, AuthorizationHandler, AuthorizationRequest, AuthorizationResponse, FileTokenStore,
    LoopbackBrowserFlow, OAuthConfig, OAuthProvider, TokenStore,
};
use mcp_transport::BoxFuture;

use crate::args::AuthArgs;
use crate::commands::{Context, interruptible};
use crate::config::{self, EntryKind, UrlProblem, check_url, expand_only};
use crate::connect::{Origin, oauth_config};
use crate::error::{AddRefusal, CliError};
use crate::output;
use mcp_types::text::escape_line;

/// The `client_name` registered with authorization servers.
const CLIENT_NAME: &str = "mcp-cli";

/// The OAuth settings of a server at `url` without an `auth` object.
pub(crate) fn base_oauth_config(url: &str) -> OAuthConfig {
    OAuthConfig::new(url).client_name(CLIENT_NAME)
}

/// The OAuth provider other commands use: stored credentials, refreshed as
/// needed (and, for a machine grant, requested anew), but no interactive
/// authorization. `None` when there is no data directory to keep
/// credentials in.
pub(crate) fn stored_credentials(config: OAuthConfig) -> Option<OAuthProvider> {
    let store = FileTokenStore::default_location().ok()?;
    let handler = Arc::new(LoginFirst {
        redirect_uri: LoopbackBrowserFlow::new().redirect_uri(),
    });
    OAuthProvider::new(config, handler)
        .ok()
        .map(|p| p.with_store(Arc::new(store)))
}

/// Uses stored credentials only: never registers a client or authorizes
/// (that is `mcp login`'s job). Its redirect URI is the one `login`
/// registers with.
#[derive(Debug)]
struct LoginFirst {
    redirect_uri: String,
}

impl AuthorizationHandler for LoginFirst {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn interactive(&self) -> bool {
        false
    }

    fn authorize(
        &self,
        _request: AuthorizationRequest,
    ) -> BoxFuture<'_, Result<AuthorizationResponse, AuthError>> {
        Box::pin(async { Err(AuthError::SignInRequired) })
    }
}

/// The URL of the configured HTTP server `name`, `${VAR}`-expanded, and
/// its OAuth settings.
fn server_url(ctx: &Context, name: &str) -> Result<(String, OAuthConfig), CliError> {
    let config = config::load(ctx.config.as_deref(), ctx.prompt())?;
    let entry = config.server(name)?;
    match &entry.kind {
        EntryKind::Remote(remote) => {
            let url = expand_only(&remote.url, config.variables.as_ref()).map_err(|problem| {
                CliError::config(
                    &config.file,
                    &format!("{}.url", config::child("mcpServers", name)),
                    problem,
                )
            })?;
            let origin = Origin {
                file: &config.file,
                command_line: false,
                variables: config.variables.as_ref(),
            };
            let oauth = oauth_config(origin, entry, remote, &url)?;
            Ok((url, oauth))
        }
        EntryKind::Stdio(_) | EntryKind::OpenApi(_) => Err(CliError::NotRemote {
            name: name.to_owned(),
        }),
    }
}

/// The server `args` name: its URL (the key its credentials are stored
/// under, `${VAR}`-expanded as everywhere), its OAuth settings and how
/// messages call it.
fn target(ctx: &Context, args: &AuthArgs) -> Result<(String, OAuthConfig, String), CliError> {
    match (&args.server, &args.url) {
        (Some(name), _) => {
            let (url, oauth) = server_url(ctx, name)?;
            Ok((url, oauth, format!("`{name}`")))
        }
        (None, Some(given)) => {
            // The same URL `--url` gives other commands, expanded the same
            // way, so that they find what is stored under it.
            let url = expand_only(given, None).map_err(|problem| {
                CliError::config(Path::new("(command line)"), "--url", problem)
            })?;
            match check_url(&url) {
                Ok(()) => {}
                Err(UrlProblem::Credentials) => {
                    return Err(CliError::FlagRefused {
                        flag: "--url",
                        refusal: AddRefusal::CredentialsInUrl,
                    });
                }
                Err(UrlProblem::Invalid) => {
                    return Err(CliError::AddRefused {
                        flag: "--url",
                        value: given.clone(),
                        refusal: AddRefusal::InvalidUrl,
                    });
                }
            }
            let label = escape_line(&url).into_owned();
            let oauth = base_oauth_config(&url);
            Ok((url, oauth, label))
        }
        // (clap requires one of them.)
        (None, None) => Err(CliError::NoServerGiven),
    }
}

/// `mcp login SERVER` / `mcp login --url URL`.
pub(crate) async fn login(ctx: &Context, args: &AuthArgs) -> Result<(), CliError> {
    let (_url, oauth, label) = target(ctx, args)?;
    // A machine grant requests its tokens itself: no browser, no listener.
    let provider = if oauth.selected_grant().is_interactive() {
        OAuthProvider::interactive(oauth).map_err(CliError::Auth)?
    } else {
        stored_credentials(oauth).ok_or(CliError::Auth(AuthError::NoDataDirectory))?
    };
    interruptible(async { provider.login().await.map_err(CliError::Auth) }).await?;
    let issuer = provider
        .credentials()
        .await
        .map(|c| {
            // The issuer and scopes are the authorization server's words.
            let scopes = escape_line(&c.granted_scopes().join(" ")).into_owned();
            let issuer = escape_line(c.issuer());
            if scopes.is_empty() {
                format!(" (issuer {issuer})")
            } else {
                format!(" (issuer {issuer}, scopes: {scopes})")
            }
        })
        .unwrap_or_default();
    output::print(&format!("logged in to {label}{issuer}\n"))
}

/// `mcp logout SERVER` / `mcp logout --url URL`: forgets what is stored,
/// and says so when nothing was.
pub(crate) async fn logout(ctx: &Context, args: &AuthArgs) -> Result<(), CliError> {
    let (url, oauth, label) = target(ctx, args)?;
    let store = Arc::new(FileTokenStore::default_location().map_err(CliError::Auth)?);
    if store.load(&url).await.map_err(CliError::Auth)?.is_empty() {
        return output::print(&format!(
            "nothing was stored for {label}: there were no credentials to forget\n"
        ));
    }
    let provider = OAuthProvider::new(
        oauth,
        Arc::new(LoginFirst {
            redirect_uri: LoopbackBrowserFlow::new().redirect_uri(),
        }),
    )
    .map_err(CliError::Auth)?
    .with_store(store);
    let revocation = provider.logout().await.map_err(CliError::Auth)?;
    output::print(&format!(
        "logged out of {label} (its stored credentials are gone)\n"
    ))?;
    say_revocation(&revocation, ctx.ui.err())
}

/// One line on what the authorization server did with the tokens at
/// logout: on stdout when it revoked them, else a note or a warning on
/// stderr (the credentials are gone here either way). Its `error` code is
/// its own words, escaped and labelled.
fn say_revocation(
    revocation: &mcp_auth::Revocation,
    paint: crate::output::Paint,
) -> Result<(), CliError> {
    use mcp_auth::Revocation;
    match revocation {
        Revocation::Revoked { refresh_token } => output::print(&format!(
            "the authorization server revoked the {} token\n",
            if *refresh_token { "refresh" } else { "access" }
        )),
        Revocation::NotOffered => {
            eprintln!(
                "{} the authorization server offers no token revocation: its tokens stay valid there until they expire",
                paint.yellow("note:")
            );
            Ok(())
        }
        Revocation::Failed(error) => {
            let code = error
                .oauth_error()
                .map(|c| format!(" (the server's error code: {})", escape_line(c)))
                .unwrap_or_default();
            let why = mcp_types::text::Chain(error).to_string();
            eprintln!(
                "{} the tokens were not revoked: {}{code}",
                paint.yellow("warning:"),
                escape_line(&why)
            );
            Ok(())
        }
        _ => Ok(()),
    }
}
