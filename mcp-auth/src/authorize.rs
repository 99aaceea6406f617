//! The authorization-code step as a host hook, and the checks made on what
//! comes back.
//!
//! The provider builds the authorization URL (PKCE S256, `state`,
//! `resource`, `scope`), checks it (https or loopback, never `javascript:`,
//! `data:` or `file:`) and hands it to an [`AuthorizationHandler`]: a CLI
//! opens a browser and listens on loopback ([`LoopbackBrowserFlow`]), a test
//! follows the redirect itself ([`HeadlessRedirectFlow`]). The response is
//! then checked in RFC 9207's order: `iss` first (a mismatch means nothing
//! else in the response may be acted on), then `state`, then the code.
//!
//! [`LoopbackBrowserFlow`]: crate::LoopbackBrowserFlow
//! [`HeadlessRedirectFlow`]: crate::HeadlessRedirectFlow

use std::fmt;

use mcp_transport::BoxFuture;
use url::Url;

use crate::discovery::AuthorizationServer;
use crate::error::{AuthError, ServerErrorCode};
use crate::pkce::constant_time_eq;
use crate::secret::Secret;

/// What a handler must have the user (or a test) visit.
#[derive(Clone)]
pub struct AuthorizationRequest {
    url: Url,
    redirect_uri: String,
    state: String,
}

impl AuthorizationRequest {
    /// A request (the provider builds these; a host tests its own handler
    /// with one).
    pub fn new(url: Url, redirect_uri: impl Into<String>, state: impl Into<String>) -> Self {
        let (redirect_uri, state) = (redirect_uri.into(), state.into());
        Self {
            url,
            redirect_uri,
            state,
        }
    }

    /// The authorization URL, already checked: `https`, or `http` on loopback.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The redirect URI the server will send the user-agent back to.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// The `state` the response must carry back (the provider checks it
    /// again; a handler may use it to ignore stray callbacks).
    pub fn state(&self) -> &str {
        &self.state
    }
}

impl fmt::Debug for AuthorizationRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationRequest")
            .field(
                "endpoint",
                &format_args!(
                    "{}{}",
                    self.url.origin().ascii_serialization(),
                    self.url.path()
                ),
            )
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// The parameters of the redirect back to the client.
#[derive(Clone, Default)]
pub struct AuthorizationResponse {
    code: Option<Secret>,
    state: Option<String>,
    iss: Option<String>,
    error: Option<String>,
}

impl AuthorizationResponse {
    /// A successful response.
    pub fn new(code: Secret, state: Option<String>, iss: Option<String>) -> Self {
        Self {
            code: Some(code),
            state,
            iss,
            error: None,
        }
    }

    /// Reads `code`, `state`, `iss` and `error` from a redirect URL's query
    /// (decoded once, as RFC 9207 §2.4 asks; nothing is normalised). The
    /// first occurrence of each parameter counts.
    pub fn from_redirect(url: &Url) -> Self {
        let mut out = Self::default();
        for (name, value) in url.query_pairs() {
            let slot = match name.as_ref() {
                "state" => &mut out.state,
                "iss" => &mut out.iss,
                "error" => &mut out.error,
                "code" => {
                    if out.code.is_none() {
                        out.code = Some(Secret::new(value.into_owned()));
                    }
                    continue;
                }
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value.into_owned());
            }
        }
        out
    }

    /// The authorization code.
    pub fn code(&self) -> Option<&Secret> {
        self.code.as_ref()
    }

    /// The returned `state`.
    pub fn state(&self) -> Option<&str> {
        self.state.as_deref()
    }

    /// The returned `iss` (RFC 9207).
    pub fn iss(&self) -> Option<&str> {
        self.iss.as_deref()
    }

    /// The OAuth `error` code of an error response (the server's words).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

impl fmt::Debug for AuthorizationResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationResponse")
            .field("has_code", &self.code.is_some())
            .field("has_state", &self.state.is_some())
            .field("iss", &self.iss)
            .field("error", &self.error.as_deref().map(ServerErrorCode::new))
            .finish()
    }
}

/// Obtains the authorization code: the host's part of the flow.
pub trait AuthorizationHandler: Send + Sync + fmt::Debug {
    /// The redirect URI to register and to send in the request. It must be
    /// stable across runs for a dynamically registered client to be reused.
    fn redirect_uri(&self) -> String;

    /// Whether this handler can have a user sign in at all. A handler that
    /// cannot (one that only uses stored credentials, say) answers `false`:
    /// the provider then fails with [`AuthError::SignInRequired`] before it
    /// registers a client or builds a request, instead of calling
    /// [`AuthorizationHandler::authorize`].
    fn interactive(&self) -> bool {
        true
    }

    /// Has the user agent visit `request.url()` and returns the parameters
    /// of the redirect to `request.redirect_uri()`.
    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'_, Result<AuthorizationResponse, AuthError>>;
}

/// The parameters of one authorization request.
pub(crate) struct AuthorizationParams<'a> {
    pub(crate) client_id: &'a str,
    pub(crate) redirect_uri: &'a str,
    pub(crate) code_challenge: &'a str,
    pub(crate) state: &'a str,
    pub(crate) resource: &'a str,
    pub(crate) scopes: &'a [String],
}

/// The authorization endpoint with the request's parameters appended (any
/// query the endpoint already has is kept).
pub(crate) fn authorization_url(endpoint: &Url, params: &AuthorizationParams<'_>) -> Url {
    let mut url = endpoint.clone();
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", params.client_id)
            .append_pair("redirect_uri", params.redirect_uri)
            .append_pair("code_challenge", params.code_challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", params.state)
            .append_pair("resource", params.resource);
        if !params.scopes.is_empty() {
            query.append_pair("scope", &params.scopes.join(" "));
        }
    }
    url
}

/// RFC 9207 §2.4 as the MCP spec tabulates it, then `state`, then the code.
pub(crate) fn accept_response(
    response: &AuthorizationResponse,
    expected_state: &str,
    server: &AuthorizationServer,
) -> Result<Secret, AuthError> {
    match response.iss() {
        // Simple string comparison: no case folding, no trailing-slash or
        // default-port normalisation.
        Some(iss) if iss != server.issuer => return Err(AuthError::IssuerResponseMismatch),
        Some(_) => {}
        None if server.iss_parameter_supported => return Err(AuthError::IssuerResponseMissing),
        None => {}
    }
    let state_matches = response
        .state()
        .is_some_and(|state| constant_time_eq(state.as_bytes(), expected_state.as_bytes()));
    if !state_matches {
        return Err(AuthError::StateMismatch);
    }
    if let Some(error) = response.error() {
        return Err(AuthError::AuthorizationRefused {
            error: ServerErrorCode::new(error),
        });
    }
    response.code().cloned().ok_or(AuthError::MissingCode)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(iss_supported: bool) -> AuthorizationServer {
        let url = Url::parse("https://as.example/x").unwrap();
        AuthorizationServer {
            issuer: "https://as.example".into(),
            authorization_endpoint: Some(url.clone()),
            pkce_s256: true,
            token_endpoint: url,
            registration_endpoint: None,
            revocation_endpoint: None,
            scopes_supported: None,
            token_auth_methods: vec![],
            iss_parameter_supported: iss_supported,
            client_id_metadata_document_supported: false,
            grant_types: None,
            dpop_es256: false,
            assumed: false,
        }
    }

    fn response(query: &str) -> AuthorizationResponse {
        AuthorizationResponse::from_redirect(
            &Url::parse(&format!("http://127.0.0.1/callback?{query}")).unwrap(),
        )
    }

    #[test]
    fn the_iss_table_of_the_spec() {
        let ok = |q: &str, supported| accept_response(&response(q), "s1", &server(supported));
        // advertised + present: compared exactly.
        assert!(ok("code=c&state=s1&iss=https%3A%2F%2Fas.example", true).is_ok());
        assert!(matches!(
            ok("code=c&state=s1&iss=https%3A%2F%2Fas.example%2F", true),
            Err(AuthError::IssuerResponseMismatch)
        ));
        assert!(matches!(
            ok("code=c&state=s1&iss=HTTPS%3A%2F%2FAS.EXAMPLE", true),
            Err(AuthError::IssuerResponseMismatch)
        ));
        // advertised + absent: refused.
        assert!(matches!(
            ok("code=c&state=s1", true),
            Err(AuthError::IssuerResponseMissing)
        ));
        // not advertised + present: still compared.
        assert!(matches!(
            ok("code=c&state=s1&iss=https%3A%2F%2Fevil.example", false),
            Err(AuthError::IssuerResponseMismatch)
        ));
        // not advertised + absent: proceed.
        assert_eq!(ok("code=c&state=s1", false).unwrap().expose(), "c");
        // a mismatched iss hides the error response entirely.
        assert!(matches!(
            ok(
                "error=access_denied&state=s1&iss=https%3A%2F%2Fevil.example",
                false
            ),
            Err(AuthError::IssuerResponseMismatch)
        ));
    }

    #[test]
    fn state_error_and_code_are_checked_in_order() {
        let check = |q: &str| accept_response(&response(q), "s1", &server(false));
        assert!(matches!(
            check("code=c&state=s2"),
            Err(AuthError::StateMismatch)
        ));
        assert!(matches!(check("code=c"), Err(AuthError::StateMismatch)));
        let refused = check("error=access_denied&state=s1").unwrap_err();
        assert_eq!(refused.oauth_error(), Some("access_denied"));
        assert!(matches!(check("state=s1"), Err(AuthError::MissingCode)));
        // The first occurrence of a parameter counts.
        assert_eq!(
            check("code=c1&code=c2&state=s1&state=s2").unwrap().expose(),
            "c1"
        );
    }

    #[test]
    fn the_url_carries_pkce_state_resource_and_scope() {
        let endpoint = Url::parse("https://as.example/authorize?tenant=t1").unwrap();
        let scopes = vec!["a".to_owned(), "b".to_owned()];
        let url = authorization_url(
            &endpoint,
            &AuthorizationParams {
                client_id: "cid",
                redirect_uri: "http://127.0.0.1:9/callback",
                code_challenge: "chal",
                state: "st",
                resource: "https://mcp.example",
                scopes: &scopes,
            },
        );
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let get = |n: &str| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("tenant"), Some("t1"));
        assert_eq!(get("response_type"), Some("code"));
        assert_eq!(get("code_challenge_method"), Some("S256"));
        assert_eq!(get("code_challenge"), Some("chal"));
        assert_eq!(get("resource"), Some("https://mcp.example"));
        assert_eq!(get("scope"), Some("a b"));
        let none = authorization_url(
            &endpoint,
            &AuthorizationParams {
                client_id: "cid",
                redirect_uri: "r",
                code_challenge: "c",
                state: "s",
                resource: "x",
                scopes: &[],
            },
        );
        assert!(!none.query_pairs().any(|(k, _)| k == "scope"));
    }

    #[test]
    fn debug_never_shows_the_code() {
        let r = response("code=sekrit-code&state=s1");
        assert!(!format!("{r:?}").contains("sekrit"));
    }
}
