//! Token revocation (RFC 7009) at logout: the refresh token if there is
//! one (revoking it ends the access tokens of the same grant too, §2.1),
//! else the access token, at the revocation endpoint the authorization
//! server advertised, with the client's usual authentication.
//!
//! Over `https` the request is the `oauth2` crate's (`revoke_token`). Over
//! plain `http` it is ours, because the crate refuses every revocation URL
//! whose scheme is not `https` (`ConfigurationError::InsecureUrl`, in its
//! `revocation.rs`, with no exception for loopback), while our URL rules
//! allow `http` on loopback only, exactly as for the token endpoint:
//! where a refresh token may be *used* over loopback `http`, revoking it
//! there sends nothing new, and refusing would leave a live grant behind
//! on a local authorization server (the conformance suite's, the Python
//! SDK's in `cargo xtask interop`, a developer's). Both requests go through
//! the same HTTP adapter, and their answers map to the same errors.
//!
//! Whatever the answer, the caller forgets its credentials: a failed
//! revocation is reported ([`Revocation::Failed`]), never a reason to keep
//! them.

use std::time::Duration;

use oauth2::{AccessToken, RefreshToken, RevocationUrl, StandardRevocableToken};

use crate::error::{AuthError, Step, UrlRole};
use crate::http::{AuthHttpClient, OAuthHttp};
use crate::store::StoredCredentials;
use crate::token::{ClientAuthn, TokenEndpoint, from_oauth2, refused, with_params};
use crate::urls::UrlPolicy;

/// What became of the authorization server's side of the credentials at
/// [`OAuthProvider::logout`](crate::OAuthProvider::logout). The local
/// credentials are gone in every case.
#[derive(Debug)]
#[non_exhaustive]
pub enum Revocation {
    /// No token was held: nothing to revoke.
    NothingHeld,
    /// The authorization server advertised no revocation endpoint (or the
    /// credentials were stored before it was kept): the tokens stay valid
    /// at the server until they expire.
    NotOffered,
    /// The authorization server answered the revocation with success (RFC
    /// 7009 answers the same for a token it did not know).
    Revoked {
        /// Whether the refresh token was revoked (else the access token).
        refresh_token: bool,
    },
    /// The revocation failed (refused, unreachable, or not attempted
    /// because the endpoint or the client's secret could not be used).
    Failed(AuthError),
}

impl Revocation {
    /// Of two records' outcomes, the one to report: a failure first, then
    /// a revocation, then an endpoint missing.
    pub(crate) fn or(self, other: Revocation) -> Revocation {
        fn rank(r: &Revocation) -> u8 {
            match r {
                Revocation::NothingHeld => 0,
                Revocation::NotOffered => 1,
                Revocation::Revoked { .. } => 2,
                Revocation::Failed(_) => 3,
            }
        }
        if rank(&other) > rank(&self) {
            other
        } else {
            self
        }
    }
}

/// Revokes the tokens of `record`, authenticating as `auth` says.
pub(crate) async fn revoke(
    http: &dyn AuthHttpClient,
    timeout: Duration,
    policy: &UrlPolicy,
    record: &StoredCredentials,
    auth: Result<ClientAuthn, AuthError>,
) -> Revocation {
    let Some(tokens) = &record.tokens else {
        return Revocation::NothingHeld;
    };
    let Some(endpoint) = &record.revocation_endpoint else {
        return Revocation::NotOffered;
    };
    let refresh_token = tokens.refresh_token.is_some();
    let (secret, hint) = match &tokens.refresh_token {
        Some(refresh) => (refresh.expose(), "refresh_token"),
        None => (tokens.access_token.expose(), "access_token"),
    };
    let outcome = async {
        // Checked again: the record may predate today's rules.
        let url = policy.parse(endpoint, UrlRole::RevocationEndpoint)?;
        let auth = auth?;
        let step = Step::Revocation;
        let adapter = OAuthHttp::new(http, timeout, step, None);
        let client_id = &record.client.client_id;
        if url.scheme() == "https" {
            let (client, params) = auth.oauth_client(client_id, &record.issuer)?;
            let client = client.set_revocation_url(RevocationUrl::from_url(url));
            let token: StandardRevocableToken = if refresh_token {
                RefreshToken::new(secret.to_owned()).into()
            } else {
                AccessToken::new(secret.to_owned()).into()
            };
            let request = client
                .revoke_token(token)
                .map_err(|_| AuthError::InsecureUrl {
                    role: UrlRole::RevocationEndpoint,
                })?;
            let answer = with_params!(request, &params).request_async(&adapter).await;
            return match (answer, adapter.last_status()) {
                (Ok(()), _) => Ok(()),
                // The crate wants exactly 200; any success will do.
                (Err(_), Some(200..=299)) => Ok(()),
                (Err(e), status) => Err(from_oauth2(e, step, status)),
            };
        }
        // Plain http: on loopback only (the URL rules refused it
        // elsewhere), and refused by the crate, so sent by us.
        let response = TokenEndpoint {
            http,
            timeout,
            url: &url,
            issuer: &record.issuer,
            client_id,
            auth: &auth,
            resource: None,
            dpop: None,
        }
        .post(step, &[("token", secret), ("token_type_hint", hint)])
        .await?;
        if (200..300).contains(&response.status) {
            Ok(())
        } else {
            Err(refused(&response, step))
        }
    }
    .await;
    match outcome {
        Ok(()) => Revocation::Revoked { refresh_token },
        Err(e) => Revocation::Failed(e),
    }
}
