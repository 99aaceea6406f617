//! Which OAuth grant an [`OAuthProvider`](crate::OAuthProvider) uses, and
//! where the machine grants' secrets come from.
//!
//! The authorization code grant (a person in a browser) is the default.
//! The machine grants need no person: client credentials (with a client
//! secret or a `private_key_jwt` assertion), the RFC 7523 JWT bearer grant
//! with a workload's identity token, and enterprise-managed authorization
//! (RFC 8693 token exchange at the enterprise identity provider, then the JWT
//! bearer grant at the MCP server's authorization server).
//!
//! Secrets are configured by *source* ([`SecretSource`]): an environment
//! variable or a file is read each time a token is requested (so a rotated
//! projected service-account token is picked up), and neither its value nor
//! any part of it reaches an error, a log line or `Debug`.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{AuthError, SourceProblem};
use crate::jose::{SigningKey, read_bounded, read_private_file};
use crate::secret::Secret;

/// Bound on a secret or an assertion read from a source.
pub const MAX_SOURCE_BYTES: u64 = 64 * 1024;

/// Where a secret or an assertion comes from. Read on every use.
#[derive(Clone)]
#[non_exhaustive]
pub enum SecretSource {
    /// A value the host holds.
    Value(Secret),
    /// The named environment variable.
    Env(String),
    /// A file holding a long-lived secret (a client secret): refused when
    /// group or others may access it. Surrounding whitespace is trimmed.
    File(PathBuf),
    /// A file holding a short-lived token that an orchestrator rotates and
    /// often mounts readable by others (a projected service-account token,
    /// an ID token): its permissions are not checked. Surrounding
    /// whitespace is trimmed.
    TokenFile(PathBuf),
}

impl SecretSource {
    /// Reads the value now (a named error, never the value, when it cannot
    /// be used).
    pub fn read(&self) -> Result<Secret, AuthError> {
        let fail = |problem| AuthError::Credential {
            origin: self.describe(),
            problem,
        };
        let text = match self {
            SecretSource::Value(secret) => secret.expose().to_owned(),
            SecretSource::Env(name) => {
                std::env::var(name).map_err(|_| fail(SourceProblem::Empty))?
            }
            SecretSource::File(path) => {
                let bytes = read_private_file(path, MAX_SOURCE_BYTES).map_err(|e| match e {
                    AuthError::Credential { problem, .. } => fail(problem),
                    other => other,
                })?;
                String::from_utf8(bytes).map_err(|_| fail(SourceProblem::Empty))?
            }
            SecretSource::TokenFile(path) => {
                let file = std::fs::File::open(path)
                    .map_err(|e| fail(SourceProblem::Unreadable(e.kind())))?;
                let bytes = read_bounded(file, MAX_SOURCE_BYTES).map_err(fail)?;
                String::from_utf8(bytes).map_err(|_| fail(SourceProblem::Empty))?
            }
        };
        let text = text.trim();
        if text.is_empty() {
            return Err(fail(SourceProblem::Empty));
        }
        if text.len() as u64 > MAX_SOURCE_BYTES {
            return Err(fail(SourceProblem::TooLarge {
                limit: MAX_SOURCE_BYTES,
            }));
        }
        Ok(Secret::new(text))
    }

    /// Reads a compact JWT: three base64url parts whose first two are JSON.
    pub(crate) fn read_jwt(&self) -> Result<Secret, AuthError> {
        let value = self.read()?;
        if !is_compact_jwt(value.expose()) {
            return Err(AuthError::Credential {
                origin: self.describe(),
                problem: SourceProblem::NotAJwt,
            });
        }
        Ok(value)
    }

    /// The source as configuration names it (never its value).
    pub fn describe(&self) -> String {
        match self {
            SecretSource::Value(_) => "value given by the host".to_owned(),
            SecretSource::Env(name) => format!("environment variable `{name}`"),
            SecretSource::File(path) | SecretSource::TokenFile(path) => {
                format!("file `{}`", path.display())
            }
        }
    }
}

impl fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretSource::Value(_) => f.write_str("SecretSource::Value(..)"),
            SecretSource::Env(name) => f.debug_tuple("SecretSource::Env").field(name).finish(),
            SecretSource::File(path) => f.debug_tuple("SecretSource::File").field(path).finish(),
            SecretSource::TokenFile(path) => f
                .debug_tuple("SecretSource::TokenFile")
                .field(path)
                .finish(),
        }
    }
}

/// Whether `text` has the shape of a compact JWS.
fn is_compact_jwt(text: &str) -> bool {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
        return false;
    }
    parts[..2].iter().all(|part| {
        URL_SAFE_NO_PAD
            .decode(part)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .is_some_and(|v| v.is_object())
    }) && parts[2]
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Where a signing key comes from.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum KeySource {
    /// A key the host holds.
    Key(Arc<SigningKey>),
    /// A PEM file (PKCS#8 or SEC1, P-256), refused when group or others
    /// may access it; read on every use.
    File(PathBuf),
}

impl KeySource {
    pub(crate) fn load(&self) -> Result<Arc<SigningKey>, AuthError> {
        match self {
            KeySource::Key(key) => Ok(key.clone()),
            KeySource::File(path) => SigningKey::from_pem_file(path).map(Arc::new),
        }
    }
}

/// How a client proves who it is at a token endpoint.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ClientAuth {
    /// A public client: `client_id` in the form, nothing else.
    None,
    /// HTTP Basic with the form-encoded id and secret (RFC 6749 §2.3.1);
    /// `client_id` in the form too (some servers insist).
    SecretBasic(SecretSource),
    /// `client_id` and `client_secret` in the form.
    SecretPost(SecretSource),
    /// A signed client assertion (RFC 7523 §2.2): `iss` and `sub` the
    /// client id, `aud` the authorization server's issuer, a short expiry.
    PrivateKeyJwt(KeySource),
}

/// A client registered out of band for a machine grant: its id and how it
/// authenticates.
#[derive(Clone, Debug)]
pub struct MachineClient {
    pub(crate) client_id: String,
    pub(crate) auth: ClientAuth,
    pub(crate) issuer: Option<String>,
}

impl MachineClient {
    /// The client `client_id`, authenticating with `auth`, usable with
    /// whatever authorization server the MCP server names (see
    /// [`issuer`](Self::issuer): a host should pin it).
    pub fn new(client_id: impl Into<String>, auth: ClientAuth) -> Self {
        Self {
            client_id: client_id.into(),
            auth,
            issuer: None,
        }
    }

    /// The authorization server the client is registered with (its issuer
    /// identifier, exactly): a server whose metadata names another one gets
    /// [`AuthError::IssuerNotPinned`] and nothing of this client — no
    /// secret, no assertion, no workload or ID token.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The client id.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}

/// An enterprise identity provider for enterprise-managed authorization.
#[derive(Clone, Debug)]
pub struct EnterpriseIdp {
    pub(crate) issuer: String,
    pub(crate) token_endpoint: Option<String>,
    pub(crate) client: MachineClient,
    pub(crate) id_token: SecretSource,
}

impl EnterpriseIdp {
    /// The identity provider `issuer`, where `client` (this application's
    /// registration with the identity provider) exchanges the user's
    /// `id_token` for an identity assertion grant. Its token endpoint comes
    /// from its OpenID metadata unless [set](Self::token_endpoint); either
    /// way it must be on the issuer's origin.
    pub fn new(issuer: impl Into<String>, client: MachineClient, id_token: SecretSource) -> Self {
        Self {
            issuer: issuer.into(),
            token_endpoint: None,
            client,
            id_token,
        }
    }

    /// The token endpoint, instead of the one in the provider's metadata.
    pub fn token_endpoint(mut self, url: impl Into<String>) -> Self {
        self.token_endpoint = Some(url.into());
        self
    }
}

/// The OAuth grant a provider uses.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE, through the provider's
    /// [`AuthorizationHandler`](crate::AuthorizationHandler): a person
    /// signs in.
    #[default]
    AuthorizationCode,
    /// `client_credentials`: the client acts on its own behalf.
    ClientCredentials(MachineClient),
    /// The RFC 7523 JWT bearer grant with an assertion from `assertion` (a
    /// workload identity token, say), read anew for every token request.
    JwtBearer {
        /// The client (often [`ClientAuth::None`]).
        client: MachineClient,
        /// Where the assertion comes from.
        assertion: SecretSource,
    },
    /// Enterprise-managed authorization: RFC 8693 token exchange of the
    /// user's ID token at `idp` for an identity assertion grant, then the
    /// JWT bearer grant with it at the MCP server's authorization server.
    Enterprise {
        /// This application's client at the MCP server's authorization
        /// server.
        client: MachineClient,
        /// The enterprise identity provider.
        idp: EnterpriseIdp,
    },
}

impl Grant {
    /// Whether a person takes part (the authorization code grant).
    pub fn is_interactive(&self) -> bool {
        matches!(self, Grant::AuthorizationCode)
    }

    /// The machine client, for the grants that have one.
    pub(crate) fn machine_client(&self) -> Option<&MachineClient> {
        match self {
            Grant::AuthorizationCode => None,
            Grant::ClientCredentials(client)
            | Grant::JwtBearer { client, .. }
            | Grant::Enterprise { client, .. } => Some(client),
        }
    }

    /// The `grant_type` sent to the MCP server's authorization server.
    pub(crate) fn grant_type(&self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization_code",
            Grant::ClientCredentials(_) => "client_credentials",
            Grant::JwtBearer { .. } | Grant::Enterprise { .. } => JWT_BEARER,
        }
    }
}

/// RFC 7523's grant type.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// When DPoP (RFC 9449) binds tokens to a key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DpopMode {
    /// When the authorization server advertises ES256 proofs or the MCP
    /// server's challenge is `DPoP`.
    #[default]
    WhenOffered,
    /// Always; an authorization server without ES256 proofs is
    /// [`AuthError::DpopNotSupported`].
    Required,
    /// Never (Bearer tokens only).
    Off,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_themselves_never_their_values() {
        let value = SecretSource::Value(Secret::new("sekrit-v"));
        assert!(!format!("{value:?} {}", value.describe()).contains("sekrit"));
        let unset = SecretSource::Env("MCP_AUTH_TEST_SURELY_UNSET_VAR".into());
        let err = unset.read().unwrap_err();
        assert!(
            err.to_string().contains("MCP_AUTH_TEST_SURELY_UNSET_VAR"),
            "{err}"
        );
        assert!(matches!(
            err,
            AuthError::Credential {
                problem: SourceProblem::Empty,
                ..
            }
        ));
    }

    #[test]
    fn an_oversize_source_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, "x".repeat(MAX_SOURCE_BYTES as usize + 1)).unwrap();
        let err = SecretSource::TokenFile(path).read().unwrap_err();
        assert!(matches!(
            err,
            AuthError::Credential {
                problem: SourceProblem::TooLarge { .. },
                ..
            }
        ));
        let big = SecretSource::Value(Secret::new("y".repeat(MAX_SOURCE_BYTES as usize + 1)));
        assert!(big.read().is_err());
    }

    #[test]
    fn a_jwt_source_refuses_what_is_not_a_jwt() {
        let jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";
        assert!(is_compact_jwt(jwt));
        for bad in [
            "abc",
            "a.b.c",
            "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0",
            "x.y.z.w",
        ] {
            assert!(!is_compact_jwt(bad), "{bad}");
        }
        let err = SecretSource::Value(Secret::new("sekrit.not.jwt"))
            .read_jwt()
            .unwrap_err();
        assert!(!format!("{err} {err:?}").contains("sekrit"));
    }
}
