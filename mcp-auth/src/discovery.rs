//! Finding the authorization server of an MCP server.
//!
//! 1. Protected resource metadata (RFC 9728): the challenge's
//!    `resource_metadata` URL, else the path-aware well-known URL, then the
//!    root one. Its `resource` must cover the server URL and is kept
//!    verbatim (it is what goes into every `resource` parameter).
//! 2. Authorization server metadata of the first acceptable entry of
//!    `authorization_servers`: RFC 8414 and OIDC discovery in the MCP spec's
//!    path-aware order. The document's `issuer` must equal the issuer the URL
//!    was built from, character for character.
//! 3. Without any protected resource metadata (servers of the 2025-03-26
//!    revision): metadata at the server's root, else the default endpoints
//!    `/authorize`, `/token` and `/register` there; the resource is then the
//!    server URL as configured.

use std::time::Duration;

use serde::Deserialize;
use url::Url;

use crate::challenge::BearerChallenge;
use crate::error::{AuthError, Step, UrlRole};
use crate::http::{self, AuthHttpClient, AuthHttpResponse};
use crate::urls::{self, UrlPolicy};

/// RFC 9728 document (the fields used).
#[derive(Debug, Deserialize)]
struct ResourceMetadata {
    resource: String,
    #[serde(default)]
    authorization_servers: Vec<String>,
    #[serde(default)]
    scopes_supported: Option<Vec<String>>,
}

/// RFC 8414 / OIDC discovery document (the fields used).
#[derive(Debug, Deserialize)]
struct ServerMetadata {
    issuer: String,
    authorization_endpoint: Option<String>,
    token_endpoint: Option<String>,
    registration_endpoint: Option<String>,
    revocation_endpoint: Option<String>,
    scopes_supported: Option<Vec<String>>,
    code_challenge_methods_supported: Option<Vec<String>>,
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    authorization_response_iss_parameter_supported: Option<bool>,
    client_id_metadata_document_supported: Option<bool>,
    grant_types_supported: Option<Vec<String>>,
    dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// An authorization server, its endpoints checked.
#[derive(Debug, Clone)]
pub(crate) struct AuthorizationServer {
    /// The issuer identifier, exactly as the protected resource named it.
    pub(crate) issuer: String,
    /// Absent at a server for machine grants only.
    pub(crate) authorization_endpoint: Option<Url>,
    /// `code_challenge_methods_supported` lists `S256`.
    pub(crate) pkce_s256: bool,
    pub(crate) token_endpoint: Url,
    pub(crate) registration_endpoint: Option<Url>,
    /// RFC 7009, when advertised (checked like the other endpoints; kept
    /// in the stored record for `logout`).
    pub(crate) revocation_endpoint: Option<Url>,
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// RFC 8414 default when absent: `client_secret_basic`.
    pub(crate) token_auth_methods: Vec<String>,
    /// RFC 9207 §2.3.
    pub(crate) iss_parameter_supported: bool,
    pub(crate) client_id_metadata_document_supported: bool,
    /// `grant_types_supported`, when listed.
    pub(crate) grant_types: Option<Vec<String>>,
    /// `dpop_signing_alg_values_supported` lists ES256.
    pub(crate) dpop_es256: bool,
    /// No metadata anywhere: the 2025-03-26 default endpoints, assumed.
    pub(crate) assumed: bool,
}

impl AuthorizationServer {
    /// Whether the metadata allows `grant` (RFC 8414's default when the
    /// list is absent: the authorization code and implicit grants; we do
    /// not hold an absent list against a machine grant, as many servers
    /// omit it).
    pub(crate) fn offers_grant(&self, grant: &str) -> bool {
        self.grant_types
            .as_ref()
            .is_none_or(|g| g.iter().any(|g| g == grant))
    }
}

/// What discovery found for one MCP server.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The `resource` parameter value, verbatim.
    pub(crate) resource: String,
    /// The resource's `scopes_supported`.
    pub(crate) resource_scopes: Option<Vec<String>>,
    pub(crate) server: AuthorizationServer,
}

/// The HTTP side of discovery.
pub(crate) struct Discovery<'a> {
    pub(crate) http: &'a dyn AuthHttpClient,
    pub(crate) timeout: Duration,
    pub(crate) policy: &'a UrlPolicy,
    /// The server URL as configured (the fallback resource, verbatim).
    pub(crate) server_raw: &'a str,
    pub(crate) server: &'a Url,
    /// Whether the 2025-03-26 fallbacks apply.
    pub(crate) legacy: bool,
}

impl Discovery<'_> {
    pub(crate) async fn run(
        &self,
        challenge: Option<&BearerChallenge>,
    ) -> Result<Discovered, AuthError> {
        match self.resource_metadata(challenge).await? {
            Some(prm) => self.use_resource_metadata(prm).await,
            None if self.legacy => self.legacy_server().await,
            None => Err(AuthError::NoResourceMetadata),
        }
    }

    async fn get(&self, url: Url, step: Step) -> Result<AuthHttpResponse, AuthError> {
        http::send(self.http, http::get_json(url, step), self.timeout).await
    }

    async fn resource_metadata(
        &self,
        challenge: Option<&BearerChallenge>,
    ) -> Result<Option<ResourceMetadata>, AuthError> {
        let mut candidates = Vec::new();
        if let Some(raw) = challenge.and_then(|c| c.resource_metadata.as_deref()) {
            candidates.push(self.policy.parse(raw, UrlRole::ResourceMetadata)?);
        }
        candidates.extend(urls::resource_metadata_urls(self.server));
        for url in candidates {
            let response = self.get(url, Step::ResourceMetadata).await?;
            if (200..300).contains(&response.status) {
                return http::parse_json(&response, Step::ResourceMetadata).map(Some);
            }
            tracing::debug!(
                status = response.status,
                "no protected resource metadata here"
            );
        }
        Ok(None)
    }

    async fn use_resource_metadata(&self, prm: ResourceMetadata) -> Result<Discovered, AuthError> {
        if !urls::resource_covers(&prm.resource, self.server) {
            return Err(AuthError::ResourceMismatch);
        }
        let mut first_refusal = None;
        let mut chosen = None;
        for raw in &prm.authorization_servers {
            match self.policy.parse(raw, UrlRole::AuthorizationServer) {
                Ok(url) => {
                    chosen = Some((raw.clone(), url));
                    break;
                }
                Err(e) => {
                    first_refusal.get_or_insert(e);
                }
            }
        }
        let Some((issuer, issuer_url)) = chosen else {
            return Err(first_refusal.unwrap_or(AuthError::NoAuthorizationServer));
        };
        let server = self
            .server_metadata(&issuer, urls::server_metadata_urls(&issuer_url))
            .await?
            .ok_or(AuthError::NoServerMetadata)?;
        Ok(Discovered {
            resource: prm.resource,
            resource_scopes: prm.scopes_supported,
            server,
        })
    }

    /// Tries `candidates` in order; a 4xx / 5xx moves on, a document whose
    /// issuer differs stops everything.
    async fn server_metadata(
        &self,
        issuer: &str,
        candidates: Vec<Url>,
    ) -> Result<Option<AuthorizationServer>, AuthError> {
        for url in candidates {
            self.policy.check(&url, UrlRole::AuthorizationServer)?;
            let response = self.get(url, Step::ServerMetadata).await?;
            if !(200..300).contains(&response.status) {
                continue;
            }
            let doc: ServerMetadata = http::parse_json(&response, Step::ServerMetadata)?;
            if doc.issuer != issuer {
                return Err(AuthError::IssuerMismatch);
            }
            return self.checked(doc).map(Some);
        }
        Ok(None)
    }

    fn checked(&self, doc: ServerMetadata) -> Result<AuthorizationServer, AuthError> {
        let pkce_s256 = doc
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"));
        let required = |raw: Option<&String>, role| match raw {
            Some(raw) => self.policy.parse(raw, role),
            None => Err(AuthError::InvalidDocument {
                step: Step::ServerMetadata,
            }),
        };
        let authorization_endpoint = doc
            .authorization_endpoint
            .as_deref()
            .map(|raw| self.policy.parse(raw, UrlRole::AuthorizationEndpoint))
            .transpose()?;
        let token_endpoint = required(doc.token_endpoint.as_ref(), UrlRole::TokenEndpoint)?;
        let registration_endpoint = doc
            .registration_endpoint
            .as_deref()
            .map(|raw| self.policy.parse(raw, UrlRole::RegistrationEndpoint))
            .transpose()?;
        let revocation_endpoint = doc
            .revocation_endpoint
            .as_deref()
            .map(|raw| self.policy.parse(raw, UrlRole::RevocationEndpoint))
            .transpose()?;
        Ok(AuthorizationServer {
            issuer: doc.issuer,
            authorization_endpoint,
            pkce_s256,
            token_endpoint,
            registration_endpoint,
            revocation_endpoint,
            scopes_supported: doc.scopes_supported,
            token_auth_methods: doc
                .token_endpoint_auth_methods_supported
                .unwrap_or_else(|| vec!["client_secret_basic".to_owned()]),
            iss_parameter_supported: doc
                .authorization_response_iss_parameter_supported
                .unwrap_or(false),
            client_id_metadata_document_supported: doc
                .client_id_metadata_document_supported
                .unwrap_or(false),
            grant_types: doc.grant_types_supported,
            dpop_es256: doc
                .dpop_signing_alg_values_supported
                .is_some_and(|a| a.iter().any(|a| a == "ES256")),
            assumed: false,
        })
    }

    /// The 2025-03-26 revision: the authorization server is the MCP
    /// server's origin.
    async fn legacy_server(&self) -> Result<Discovered, AuthError> {
        let issuer = urls::origin_string(self.server);
        let metadata_url = urls::with_path(self.server, "/.well-known/oauth-authorization-server");
        let server = match self.server_metadata(&issuer, vec![metadata_url]).await? {
            Some(server) => server,
            None => {
                tracing::debug!("no metadata at all: using the 2025-03-26 default endpoints");
                AuthorizationServer {
                    issuer,
                    authorization_endpoint: Some(urls::with_path(self.server, "/authorize")),
                    // The 2025-03-26 revision made PKCE mandatory.
                    pkce_s256: true,
                    token_endpoint: urls::with_path(self.server, "/token"),
                    registration_endpoint: Some(urls::with_path(self.server, "/register")),
                    revocation_endpoint: None,
                    scopes_supported: None,
                    token_auth_methods: vec!["client_secret_basic".to_owned()],
                    iss_parameter_supported: false,
                    client_id_metadata_document_supported: false,
                    grant_types: None,
                    dpop_es256: false,
                    assumed: true,
                }
            }
        };
        Ok(Discovered {
            resource: self.server_raw.to_owned(),
            resource_scopes: None,
            server,
        })
    }
}
