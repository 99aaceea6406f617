//! Getting a client id from an authorization server, in the MCP spec's
//! priority: a pre-registered client for that issuer, then a Client ID
//! Metadata Document (when the server advertises support and the host has a
//! document URL), then dynamic registration (RFC 7591), else an error telling
//! the user what to configure.
//!
//! Registrations are bound to the issuer that issued them and are never
//! presented to another authorization server.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use url::Url;

use crate::discovery::AuthorizationServer;
use crate::error::{AuthError, Step};
use crate::http::{self, AuthHttpClient};
use crate::secret::Secret;
use crate::urls;

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TokenAuthMethod {
    /// A public client: `client_id` in the body, no secret.
    None,
    /// HTTP Basic with the form-encoded id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the body.
    ClientSecretPost,
}

impl TokenAuthMethod {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "none" => Some(Self::None),
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
        }
    }
}

/// Where a client id came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RegistrationKind {
    /// Configured by the host ([`PreRegisteredClient`]).
    PreRegistered,
    /// The client id is the URL of a Client ID Metadata Document.
    MetadataDocument,
    /// Dynamic client registration (RFC 7591).
    Dynamic,
}

/// A client registered out of band with one authorization server, keyed by
/// that server's issuer: it is used with no other.
#[derive(Clone)]
pub struct PreRegisteredClient {
    pub(crate) issuer: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<Secret>,
    pub(crate) auth_method: Option<TokenAuthMethod>,
}

impl PreRegisteredClient {
    /// A public client (no secret) for the authorization server `issuer`.
    pub fn new(issuer: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret: None,
            auth_method: None,
        }
    }

    /// Sets the client secret.
    pub fn secret(mut self, secret: Secret) -> Self {
        self.client_secret = Some(secret);
        self
    }

    /// Forces a token endpoint authentication method (otherwise chosen from
    /// what the server supports).
    pub fn auth_method(mut self, method: TokenAuthMethod) -> Self {
        self.auth_method = Some(method);
        self
    }
}

impl fmt::Debug for PreRegisteredClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreRegisteredClient")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("has_secret", &self.client_secret.is_some())
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// A client id usable with one authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ClientRegistration {
    pub(crate) issuer: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<Secret>,
    pub(crate) auth_method: TokenAuthMethod,
    pub(crate) redirect_uri: String,
    pub(crate) kind: RegistrationKind,
}

/// What registration needs from the provider's configuration.
pub(crate) struct Registrar<'a> {
    pub(crate) http: &'a dyn AuthHttpClient,
    pub(crate) timeout: Duration,
    pub(crate) client_name: &'a str,
    pub(crate) redirect_uri: &'a str,
    pub(crate) pre_registered: &'a [PreRegisteredClient],
    pub(crate) client_metadata_url: Option<&'a str>,
    pub(crate) dynamic_registration: bool,
}

impl Registrar<'_> {
    /// A client id for `server`; `stored` is a registration kept from an
    /// earlier run (used only when it belongs to this very issuer).
    pub(crate) async fn client_for(
        &self,
        server: &AuthorizationServer,
        stored: Option<&ClientRegistration>,
    ) -> Result<ClientRegistration, AuthError> {
        if let Some(pre) = self
            .pre_registered
            .iter()
            .find(|p| p.issuer == server.issuer)
        {
            let auth_method = pre.auth_method.unwrap_or_else(|| {
                choose_method(
                    pre.client_secret.is_some(),
                    None,
                    &server.token_auth_methods,
                )
            });
            return Ok(ClientRegistration {
                issuer: server.issuer.clone(),
                client_id: pre.client_id.clone(),
                client_secret: pre.client_secret.clone(),
                auth_method,
                redirect_uri: self.redirect_uri.to_owned(),
                kind: RegistrationKind::PreRegistered,
            });
        }
        if let Some(url) = self.client_metadata_url
            && server.client_id_metadata_document_supported
        {
            return Ok(ClientRegistration {
                issuer: server.issuer.clone(),
                client_id: url.to_owned(),
                client_secret: None,
                auth_method: TokenAuthMethod::None,
                redirect_uri: self.redirect_uri.to_owned(),
                kind: RegistrationKind::MetadataDocument,
            });
        }
        if let Some(stored) = stored
            && stored.kind == RegistrationKind::Dynamic
            && stored.issuer == server.issuer
            && stored.redirect_uri == self.redirect_uri
        {
            return Ok(stored.clone());
        }
        match &server.registration_endpoint {
            Some(endpoint) if self.dynamic_registration => self.register(server, endpoint).await,
            _ => Err(AuthError::NoRegistration {
                issuer: server.issuer.clone(),
            }),
        }
    }

    /// RFC 7591 registration, with `application_type` as the MCP spec asks:
    /// `native` for a loopback redirect, `web` otherwise.
    async fn register(
        &self,
        server: &AuthorizationServer,
        endpoint: &Url,
    ) -> Result<ClientRegistration, AuthError> {
        let supported = &server.token_auth_methods;
        // A public client when allowed; else the secret in the form when
        // offered: the Python SDK's authorization server revokes (RFC 7009)
        // only with `client_secret` in the form, and for a Basic client
        // also wants Basic, which together would send the secret twice.
        let requested = if supported.iter().any(|m| m == "none") {
            TokenAuthMethod::None
        } else if supported.iter().any(|m| m == "client_secret_post") {
            TokenAuthMethod::ClientSecretPost
        } else {
            TokenAuthMethod::ClientSecretBasic
        };
        let native = Url::parse(self.redirect_uri).is_ok_and(|u| urls::is_loopback(&u));
        let body = json!({
            "client_name": self.client_name,
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": requested.name(),
            "application_type": if native { "native" } else { "web" },
        });
        let request = http::post_json(endpoint.clone(), Step::Registration, &body);
        let response = http::send(self.http, request, self.timeout).await?;
        if response.status == 404 && server.assumed {
            // Nothing published and nothing at the assumed endpoint: most
            // likely a server without OAuth, not a broken one.
            return Err(AuthError::NoOAuth);
        }
        if !(200..300).contains(&response.status) {
            return Err(AuthError::UnexpectedStatus {
                step: Step::Registration,
                status: response.status,
            });
        }
        #[derive(Deserialize)]
        struct Registered {
            client_id: Option<String>,
            client_secret: Option<String>,
            token_endpoint_auth_method: Option<String>,
        }
        let registered: Registered = http::parse_json(&response, Step::Registration)?;
        let client_id = registered
            .client_id
            .filter(|id| !id.is_empty())
            .ok_or(AuthError::RegistrationIncomplete)?;
        let client_secret = registered
            .client_secret
            .filter(|s| !s.is_empty())
            .map(Secret::new);
        let auth_method = choose_method(
            client_secret.is_some(),
            registered.token_endpoint_auth_method.as_deref(),
            supported,
        );
        Ok(ClientRegistration {
            issuer: server.issuer.clone(),
            client_id,
            client_secret,
            auth_method,
            redirect_uri: self.redirect_uri.to_owned(),
            kind: RegistrationKind::Dynamic,
        })
    }
}

/// The token endpoint authentication method: what the registration said,
/// else the first of basic / post / none the server supports. A client
/// without a secret is always `none`.
pub(crate) fn choose_method(
    has_secret: bool,
    declared: Option<&str>,
    supported: &[String],
) -> TokenAuthMethod {
    if !has_secret {
        return TokenAuthMethod::None;
    }
    if let Some(method) = declared.and_then(TokenAuthMethod::from_name) {
        return method;
    }
    [
        TokenAuthMethod::ClientSecretBasic,
        TokenAuthMethod::ClientSecretPost,
        TokenAuthMethod::None,
    ]
    .into_iter()
    .find(|m| supported.iter().any(|s| s == m.name()))
    .unwrap_or(TokenAuthMethod::ClientSecretBasic)
}

/// Checks a Client ID Metadata Document URL: https with a path.
pub(crate) fn check_metadata_url(raw: &str) -> Result<(), AuthError> {
    let url = Url::parse(raw).map_err(|_| AuthError::InvalidClientMetadataUrl)?;
    let has_path = !url.path().trim_matches('/').is_empty();
    if url.scheme() != "https" || !has_path || url.fragment().is_some() {
        return Err(AuthError::InvalidClientMetadataUrl);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_method_follows_the_registration_then_the_server() {
        use TokenAuthMethod::{ClientSecretBasic, ClientSecretPost};
        assert_eq!(
            choose_method(false, Some("client_secret_basic"), &[]),
            TokenAuthMethod::None
        );
        assert_eq!(
            choose_method(
                true,
                Some("client_secret_post"),
                &names(&["client_secret_basic"])
            ),
            ClientSecretPost
        );
        assert_eq!(
            choose_method(
                true,
                None,
                &names(&["client_secret_post", "client_secret_basic"])
            ),
            ClientSecretBasic
        );
        assert_eq!(
            choose_method(true, None, &names(&["client_secret_post"])),
            ClientSecretPost
        );
        assert_eq!(
            choose_method(true, None, &names(&["none"])),
            TokenAuthMethod::None
        );
        assert_eq!(
            choose_method(true, Some("private_key_jwt"), &names(&["private_key_jwt"])),
            ClientSecretBasic
        );
    }

    #[test]
    fn metadata_document_urls_must_be_https_with_a_path() {
        assert!(check_metadata_url("https://app.example.com/client.json").is_ok());
        for bad in [
            "http://app.example.com/client.json",
            "https://app.example.com",
            "https://app.example.com/",
            "https://app.example.com/c.json#x",
            "not a url",
        ] {
            assert!(check_metadata_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn debug_of_a_pre_registered_client_hides_the_secret() {
        let client = PreRegisteredClient::new("https://as", "id").secret(Secret::new("sekrit"));
        assert!(!format!("{client:?}").contains("sekrit"));
    }
}
