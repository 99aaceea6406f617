//! [`OAuthProvider`]: the transport's [`CredentialProvider`] for servers
//! that demand OAuth.
//!
//! ```text
//!  request ──► authorization(): token due? ──► refresh (serialised) ──► Bearer header
//!     │
//!     └─ 401 ─► on_unauthorized(): discovery (PRM → AS metadata)
//!                 ├─ issuer or resource changed → authorize anew; the old
//!                 │  record stays until that succeeds, then goes
//!                 ├─ refresh token held → refresh
//!                 └─ else register (pre-registered / CIMD / DCR) → authorize
//!                    (handler) → iss / state checks → code exchange
//!     └─ 403 insufficient_scope ─► the same, authorizing with the union of
//!                                  the scopes asked before and the challenge's
//!                                  (at most `max_authorizations` step-ups,
//!                                  whatever the scopes)
//! ```
//!
//! One lock serialises every refresh and authorization, so concurrent
//! requests that meet an expired token cause one refresh, not many.
//!
//! Stored credentials are replaced only by new ones: a 401 naming another
//! metadata document or authorization server starts a new authorization,
//! but the record in use (refresh token included) is kept, in memory and
//! in the store, until that authorization succeeds. A hostile or confused
//! challenge can fail a request; it cannot log the user out.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mcp_transport::{BoxFuture, CredentialProvider, CredentialTarget, Refusal, TransportError};
use url::Url;

use crate::authorize::{
    AuthorizationHandler, AuthorizationParams, AuthorizationRequest, accept_response,
    authorization_url,
};
use crate::challenge::{BearerChallenge, parse_bearer};
use crate::config::{AUTHORIZATION_WINDOW, OAuthConfig};
use crate::discovery::{AuthorizationServer, Discovered, Discovery};
use crate::dpop::{self, NonceSlot};
use crate::error::{AuthError, AuthorizationLimit, NonceParty, UrlRole};
use crate::grant::{DpopMode, Grant};
use crate::http::{AuthHttpClient, default_http_client};
use crate::idp::IdentityProvider;
use crate::jose::SigningKey;
use crate::pkce::{Pkce, random_token};
use crate::registration::{self, ClientRegistration, Registrar, RegistrationKind, TokenAuthMethod};
use crate::revoke::{Revocation, revoke};
use crate::secret::Secret;
use crate::store::{MemoryTokenStore, RECORD_VERSION, StoredCredentials, TokenStore};
use crate::token::{ClientAuthn, DpopBinding, TokenEndpoint, TokenSet, unix_now};
use crate::urls::{self, UrlPolicy};
use crate::{FileTokenStore, LoopbackBrowserFlow};

/// Why credentials are being renewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    /// A 401: refresh if possible, else authorize.
    Unauthorized,
    /// A 403 `insufficient_scope`: authorize with more scopes.
    StepUp,
    /// The host asked for a login: authorize.
    Login,
}

/// What the lock protects.
#[derive(Default)]
struct State {
    /// Whether the store was consulted.
    loaded: bool,
    /// The binding (server, resource, issuer), client and tokens in use.
    current: Option<StoredCredentials>,
    /// Scopes asked for last: the base of a step-up.
    requested_scopes: Vec<String>,
    /// Recent authorizations (sorted scope set, when), for the retry limit.
    attempts: VecDeque<(Vec<String>, Instant)>,
    /// Step-ups since the provider was made or last asked to log in.
    step_ups: u32,
    /// Recent refreshes caused by a 401: a server that keeps refusing
    /// fresh tokens gets a new authorization (itself limited) instead of
    /// a refresh per request forever.
    refreshes_after_401: VecDeque<Instant>,
    /// The parsed DPoP key of `current` (its stored form, the key).
    key_cache: Option<(Secret, Arc<SigningKey>)>,
}

impl State {
    /// The DPoP key of the record in use, if it has one.
    fn dpop_key(&mut self) -> Result<Option<Arc<SigningKey>>, AuthError> {
        let Some(stored) = self.current.as_ref().and_then(|c| c.dpop_key.clone()) else {
            return Ok(None);
        };
        if let Some((cached, key)) = &self.key_cache
            && *cached == stored
        {
            return Ok(Some(key.clone()));
        }
        let key = Arc::new(SigningKey::from_stored(&stored)?);
        self.key_cache = Some((stored, key.clone()));
        Ok(Some(key))
    }
}

/// OAuth 2.1 credentials for one MCP server, per the MCP authorization
/// specification (2025-06-18, 2025-11-25 and 2026-07-28, with the 2025-03-26
/// fallbacks). Plug it into the transport with
/// [`HttpConfig::credentials`](mcp_transport::HttpConfig::credentials).
pub struct OAuthProvider {
    config: OAuthConfig,
    server: Url,
    policy: UrlPolicy,
    handler: Arc<dyn AuthorizationHandler>,
    store: Arc<dyn TokenStore>,
    http: Arc<dyn AuthHttpClient>,
    state: tokio::sync::Mutex<State>,
    /// Bumped whenever new credentials are ready.
    generation: AtomicU64,
    last_error: std::sync::Mutex<Option<AuthError>>,
    /// The authorization server's last DPoP nonce.
    as_nonce: NonceSlot,
    /// The MCP server's last DPoP nonce.
    rs_nonce: NonceSlot,
}

impl OAuthProvider {
    /// A provider for `config`'s server that obtains authorization codes
    /// through `handler`, keeps credentials in memory and talks HTTP with
    /// the [default client](crate::default_http_client).
    pub fn new(
        config: OAuthConfig,
        handler: Arc<dyn AuthorizationHandler>,
    ) -> Result<Self, AuthError> {
        let server = Url::parse(&config.server_url).map_err(|_| AuthError::InvalidUrl {
            role: UrlRole::Server,
        })?;
        let policy = UrlPolicy::new(&server, config.allow_private_networks);
        policy.check(&server, UrlRole::Server)?;
        if let Some(url) = &config.client_metadata_url {
            registration::check_metadata_url(url)?;
        }
        Ok(Self {
            server,
            policy,
            handler,
            store: Arc::new(MemoryTokenStore::new()),
            http: Arc::new(default_http_client()?),
            state: tokio::sync::Mutex::new(State::default()),
            generation: AtomicU64::new(0),
            last_error: std::sync::Mutex::new(None),
            as_nonce: NonceSlot::default(),
            rs_nonce: NonceSlot::default(),
            config,
        })
    }

    /// The CLI's setup: a [`LoopbackBrowserFlow`] on the default port and a
    /// [`FileTokenStore`] under the XDG data directory.
    pub fn interactive(config: OAuthConfig) -> Result<Self, AuthError> {
        let store = FileTokenStore::default_location()?;
        Ok(Self::new(config, Arc::new(LoopbackBrowserFlow::new()))?.with_store(Arc::new(store)))
    }

    /// Keeps credentials in `store` instead of memory.
    pub fn with_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// Sends discovery, registration and token requests through `http`.
    pub fn with_http_client(mut self, http: Arc<dyn AuthHttpClient>) -> Self {
        self.http = http;
        self
    }

    /// The last failure that reached no caller: a refresh before a request
    /// that failed (the request then goes without a token, and the server's
    /// 401 starts a new authorization), or a token store write that failed.
    /// A failed authorization after a 401 / 403 is not kept here: it is the
    /// error of [`CredentialProvider::on_unauthorized`].
    pub fn take_last_error(&self) -> Option<AuthError> {
        self.lock_last_error().take()
    }

    /// A snapshot of the credentials in use (`Debug` shows no secret).
    pub async fn credentials(&self) -> Option<StoredCredentials> {
        self.state.lock().await.current.clone()
    }

    /// Authorizes now, without waiting for the server to ask (`mcp login`):
    /// discovery without a challenge, then registration and authorization.
    ///
    /// The count of step-ups starts again (see
    /// [`OAuthConfig::max_authorizations`]).
    pub async fn login(&self) -> Result<(), AuthError> {
        let mut st = self.state.lock().await;
        st.step_ups = 0;
        self.renew(&mut st, Trigger::Login, None).await?;
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Forgets every credential of this server, in memory and in the store,
    /// after asking the authorization server to revoke them where it
    /// advertised a revocation endpoint (RFC 7009: the refresh token, else
    /// the access token). The revocation's outcome is returned, not
    /// raised: the credentials are forgotten whatever it is.
    pub async fn logout(&self) -> Result<Revocation, AuthError> {
        let mut st = self.state.lock().await;
        let current = st.current.take();
        st.requested_scopes.clear();
        st.step_ups = 0;
        st.loaded = true;
        self.generation.fetch_add(1, Ordering::SeqCst);
        let stored = self.store.load(&self.config.server_url).await?;
        // The record in use is the freshest of its issuer's.
        let held = current.iter().chain(
            stored
                .iter()
                .filter(|r| current.as_ref().is_none_or(|c| c.issuer != r.issuer)),
        );
        let mut revocation = Revocation::NothingHeld;
        for record in held {
            let auth = self.client_authn(&record.client);
            let timeout = self.config.request_timeout;
            let outcome = revoke(self.http.as_ref(), timeout, &self.policy, record, auth).await;
            revocation = revocation.or(outcome);
        }
        for record in &stored {
            self.store
                .remove(&self.config.server_url, &record.issuer)
                .await?;
        }
        Ok(revocation)
    }

    fn lock_last_error(&self) -> std::sync::MutexGuard<'_, Option<AuthError>> {
        // The slot is replaced whole; a panic elsewhere cannot leave it torn.
        self.last_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn remember(&self, error: AuthError) {
        tracing::warn!(error = %error, "OAuth failure");
        *self.lock_last_error() = Some(error);
    }

    async fn ensure_loaded(&self, st: &mut State) -> Result<(), AuthError> {
        if st.loaded {
            return Ok(());
        }
        let records = self.store.load(&self.config.server_url).await?;
        st.loaded = true;
        // A record is used only for the server it names, and only if its
        // resource covers that server and its token endpoint passes today's
        // URL rules. One holding tokens wins over a bare registration (an
        // authorization that never finished), then the newest.
        let usable = records
            .into_iter()
            .filter(|r| {
                r.server_url == self.config.server_url
                    && urls::resource_covers(&r.resource, &self.server)
                    && self
                        .policy
                        .parse(&r.token_endpoint, UrlRole::TokenEndpoint)
                        .is_ok()
            })
            .max_by_key(|r| (r.tokens.is_some(), r.saved_at));
        if let Some(record) = usable {
            st.requested_scopes = record.requested_scopes.clone();
            st.current = Some(record);
        }
        Ok(())
    }

    /// Saves `record`; a failure is remembered. Whether it was saved.
    async fn save(&self, record: StoredCredentials) -> bool {
        match self.store.save(record).await {
            Ok(()) => true,
            Err(e) => {
                self.remember(e);
                false
            }
        }
    }

    /// Removes the stored records of this server bound to another issuer
    /// than `issuer`: called once new credentials from `issuer` are saved.
    async fn forget_other_issuers(&self, issuer: &str) {
        let records = match self.store.load(&self.config.server_url).await {
            Ok(records) => records,
            Err(e) => return self.remember(e),
        };
        for old in records.iter().filter(|r| r.issuer != issuer) {
            if let Err(e) = self.store.remove(&old.server_url, &old.issuer).await {
                self.remember(e);
            }
        }
    }

    /// The headers for the next request to `target`, refreshing (or, for a
    /// machine grant, requesting anew) first when the token is (nearly)
    /// expired.
    async fn headers(
        &self,
        target: CredentialTarget<'_>,
    ) -> Result<Vec<(String, String)>, AuthError> {
        let mut st = self.state.lock().await;
        self.ensure_loaded(&mut st).await?;
        let now = unix_now();
        let Some(tokens) = st.current.as_ref().and_then(|c| c.tokens.as_ref()) else {
            return Ok(Vec::new());
        };
        if tokens.needs_refresh(now) {
            let expired = tokens.expired(now);
            let mut renewed = match self.refresh(&mut st).await {
                Ok(done) => done,
                Err(e) => {
                    self.remember(e);
                    false
                }
            };
            if !renewed && !self.config.grant.is_interactive() {
                renewed = match self.reacquire(&mut st).await {
                    Ok(()) => true,
                    Err(e) => {
                        self.remember(e);
                        false
                    }
                };
            }
            if renewed {
                self.generation.fetch_add(1, Ordering::SeqCst);
            } else if expired {
                // Sending an expired token only earns a 401; without one the
                // server's challenge starts a new authorization.
                if let Some(current) = st.current.as_mut() {
                    current.tokens = None;
                }
                return Ok(Vec::new());
            }
        }
        let Some(tokens) = st.current.as_ref().and_then(|c| c.tokens.clone()) else {
            return Ok(Vec::new());
        };
        let token = tokens.access_token.expose();
        if !tokens.dpop_bound {
            return Ok(vec![(
                "Authorization".to_owned(),
                format!("Bearer {token}"),
            )]);
        }
        // A bound token never goes out as Bearer, nor without its proof.
        let key = st.dpop_key()?.ok_or(AuthError::DpopKeyMissing)?;
        let nonce = self.rs_nonce.get();
        let proof = dpop::proof(
            &key,
            target.method,
            target.url,
            nonce.as_deref(),
            Some(token),
        )?;
        Ok(vec![
            ("Authorization".to_owned(), format!("DPoP {token}")),
            ("DPoP".to_owned(), proof),
        ])
    }

    /// The token endpoint at `url` of `issuer`, for `client_id`
    /// authenticating with `auth`, tokens for `resource`, bound to `key`
    /// (with the authorization server's nonce) when one is given.
    fn token_endpoint<'a>(
        &'a self,
        url: &'a Url,
        issuer: &'a str,
        client_id: &'a str,
        auth: &'a ClientAuthn,
        resource: &'a str,
        key: Option<&'a SigningKey>,
    ) -> TokenEndpoint<'a> {
        TokenEndpoint {
            http: self.http.as_ref(),
            timeout: self.config.request_timeout,
            url,
            issuer,
            client_id,
            auth,
            resource: Some(resource),
            dpop: key.map(|key| DpopBinding {
                key,
                nonce: &self.as_nonce,
            }),
        }
    }

    /// How the client of `record` authenticates: the configured machine
    /// client's secret or key (read now) when the record is that client's,
    /// else what its registration holds.
    fn client_authn(&self, client: &ClientRegistration) -> Result<ClientAuthn, AuthError> {
        match self.config.grant.machine_client() {
            Some(machine) if machine.client_id == client.client_id => {
                ClientAuthn::of_machine(&machine.auth)
            }
            _ => Ok(ClientAuthn::of_registration(client)),
        }
    }

    /// Refreshes the current token. `Ok(false)`: there is no refresh token.
    async fn refresh(&self, st: &mut State) -> Result<bool, AuthError> {
        let Some(current) = st.current.as_mut() else {
            return Ok(false);
        };
        let Some(tokens) = current.tokens.clone() else {
            return Ok(false);
        };
        let Some(refresh_token) = tokens.refresh_token.clone() else {
            return Ok(false);
        };
        // Another process sharing the store may have refreshed already (and
        // the server may have rotated the refresh token we hold).
        if let Ok(records) = self.store.load(&self.config.server_url).await
            && let Some(newer) = records.into_iter().find(|r| {
                r.issuer == current.issuer
                    && r.resource == current.resource
                    && r.client == current.client
                    && r.tokens.as_ref().is_some_and(|t| {
                        t.obtained_at > tokens.obtained_at && !t.needs_refresh(unix_now())
                    })
            })
        {
            *current = newer;
            return Ok(true);
        }
        let endpoint = self
            .policy
            .parse(&current.token_endpoint, UrlRole::TokenEndpoint)?;
        let auth = self.client_authn(&current.client)?;
        let current = st.current.clone().ok_or(AuthError::SignInRequired)?;
        let key = st.dpop_key()?;
        let result = self
            .token_endpoint(
                &endpoint,
                &current.issuer,
                &current.client.client_id,
                &auth,
                &current.resource,
                key.as_deref(),
            )
            .refresh(&refresh_token, &tokens.scopes)
            .await;
        let Some(current) = st.current.as_mut() else {
            return Ok(false);
        };
        match result {
            Ok(new_tokens) => {
                current.tokens = Some(new_tokens);
                let record = current.clone();
                self.save(record).await;
                Ok(true)
            }
            Err(e) => {
                if matches!(e, AuthError::TokenRefused { .. }) {
                    // The grant is gone; keep the client, drop the tokens.
                    current.tokens = None;
                    let record = current.clone();
                    self.save(record).await;
                }
                Err(e)
            }
        }
    }

    /// Discovery, then refresh or a new authorization.
    async fn renew(
        &self,
        st: &mut State,
        trigger: Trigger,
        challenge: Option<&BearerChallenge>,
    ) -> Result<(), AuthError> {
        let limit = self.config.max_authorizations;
        if trigger == Trigger::StepUp && st.step_ups >= limit {
            // Refused before any request: each step-up is a new
            // authorization, and a server can name a new scope every time.
            return Err(AuthError::TooManyAuthorizations {
                limit,
                counted: AuthorizationLimit::StepUps,
            });
        }
        self.ensure_loaded(st).await?;
        let discovered = Discovery {
            http: self.http.as_ref(),
            timeout: self.config.request_timeout,
            policy: &self.policy,
            server_raw: &self.config.server_url,
            server: &self.server,
            legacy: self.config.legacy_discovery,
        }
        .run(challenge)
        .await?;
        let same_binding = st.current.as_ref().is_some_and(|c| {
            c.issuer == discovered.server.issuer && c.resource == discovered.resource
        });
        if !same_binding && st.current.is_some() {
            // Registrations and tokens are bound to their issuer and
            // resource: nothing is carried over to a new one. But the old
            // record stays in use and in the store until a new
            // authorization succeeds: a challenge alone (hostile, or a
            // confused server) must not log the user out.
            tracing::info!("OAuth: the authorization server or resource changed; authorizing anew");
        }
        if trigger == Trigger::Unauthorized && same_binding {
            let now = Instant::now();
            st.refreshes_after_401
                .retain(|at| now.duration_since(*at) < AUTHORIZATION_WINDOW);
            if st.refreshes_after_401.len() < self.config.max_authorizations as usize {
                match self.refresh(st).await {
                    Ok(true) => {
                        st.refreshes_after_401.push_back(now);
                        return Ok(());
                    }
                    Ok(false) => {}
                    Err(e) => tracing::info!(error = %e, "OAuth: refresh failed; authorizing anew"),
                }
            }
        }
        // Scopes asked of another resource are not asked of this one.
        let keep_scopes = st
            .current
            .as_ref()
            .is_none_or(|c| c.resource == discovered.resource);
        let previous = if keep_scopes {
            st.requested_scopes.as_slice()
        } else {
            &[]
        };
        let scopes = self.select_scopes(previous, &discovered, challenge);
        self.count_attempt(st, &scopes)?;
        if trigger == Trigger::StepUp {
            st.step_ups += 1;
        }
        let dpop = self.use_dpop(&discovered.server, challenge)?;
        if self.config.grant.is_interactive() {
            self.authorize(st, &discovered, scopes, dpop).await
        } else {
            if !discovered
                .server
                .offers_grant(self.config.grant.grant_type())
            {
                return Err(AuthError::GrantNotOffered {
                    grant: self.config.grant.grant_type(),
                });
            }
            let binding = Binding {
                issuer: discovered.server.issuer.clone(),
                token_endpoint: discovered.server.token_endpoint.clone(),
                resource: discovered.resource.clone(),
                revocation_endpoint: discovered
                    .server
                    .revocation_endpoint
                    .as_ref()
                    .map(Url::to_string),
            };
            self.acquire(st, &binding, scopes, dpop).await
        }
    }

    /// Whether to bind the next tokens to a DPoP key.
    fn use_dpop(
        &self,
        server: &AuthorizationServer,
        challenge: Option<&BearerChallenge>,
    ) -> Result<bool, AuthError> {
        let required = self.config.dpop == DpopMode::Required
            || (self.config.dpop != DpopMode::Off && challenge.is_some_and(|c| c.dpop_only));
        match (server.dpop_es256, required) {
            (_, _) if self.config.dpop == DpopMode::Off => Ok(false),
            (true, _) => Ok(true),
            (false, true) => Err(AuthError::DpopNotSupported),
            (false, false) => Ok(false),
        }
    }

    /// The DPoP key for new tokens of `issuer` and `resource`: the record's
    /// when it is bound to the same pair, else a new one.
    fn key_for(
        &self,
        st: &mut State,
        issuer: &str,
        resource: &str,
    ) -> Result<Arc<SigningKey>, AuthError> {
        let same = st
            .current
            .as_ref()
            .is_some_and(|c| c.issuer == issuer && c.resource == resource);
        if same && let Some(key) = st.dpop_key()? {
            return Ok(key);
        }
        Ok(Arc::new(SigningKey::generate()?))
    }

    /// A machine grant for the record in use, without discovery (its token
    /// expired and there is no refresh token).
    async fn reacquire(&self, st: &mut State) -> Result<(), AuthError> {
        let Some(current) = st.current.clone() else {
            return Err(AuthError::SignInRequired);
        };
        let binding = Binding {
            token_endpoint: self
                .policy
                .parse(&current.token_endpoint, UrlRole::TokenEndpoint)?,
            issuer: current.issuer,
            resource: current.resource,
            revocation_endpoint: current.revocation_endpoint,
        };
        let dpop = current.dpop_key.is_some();
        self.acquire(st, &binding, current.requested_scopes, dpop)
            .await
    }

    /// Requests tokens with the configured machine grant.
    async fn acquire(
        &self,
        st: &mut State,
        binding: &Binding,
        scopes: Vec<String>,
        dpop: bool,
    ) -> Result<(), AuthError> {
        let Some(machine) = self.config.grant.machine_client() else {
            return Err(AuthError::SignInRequired);
        };
        if machine
            .issuer
            .as_ref()
            .is_some_and(|pinned| *pinned != binding.issuer)
        {
            // The MCP server's metadata chose this authorization server;
            // the client's credentials are for the pinned one only.
            return Err(AuthError::IssuerNotPinned);
        }
        let auth = ClientAuthn::of_machine(&machine.auth)?;
        let key = if dpop {
            Some(self.key_for(st, &binding.issuer, &binding.resource)?)
        } else {
            None
        };
        let endpoint = self.token_endpoint(
            &binding.token_endpoint,
            &binding.issuer,
            &machine.client_id,
            &auth,
            &binding.resource,
            key.as_deref(),
        );
        let tokens = match &self.config.grant {
            Grant::ClientCredentials(_) => endpoint.client_credentials(&scopes).await?,
            Grant::JwtBearer { assertion, .. } => {
                endpoint.jwt_bearer(&assertion.read_jwt()?, &scopes).await?
            }
            Grant::Enterprise { idp, .. } => {
                let grant = IdentityProvider {
                    http: self.http.as_ref(),
                    timeout: self.config.request_timeout,
                    policy: &self.policy,
                    idp,
                }
                .identity_assertion(&binding.issuer, &binding.resource, &scopes)
                .await?;
                endpoint.jwt_bearer(&grant, &scopes).await?
            }
            Grant::AuthorizationCode => return Err(AuthError::SignInRequired),
        };
        let client = ClientRegistration {
            issuer: binding.issuer.clone(),
            client_id: machine.client_id.clone(),
            // The secret stays in its source; nothing of it is stored.
            client_secret: None,
            auth_method: TokenAuthMethod::None,
            redirect_uri: String::new(),
            kind: RegistrationKind::PreRegistered,
        };
        self.finish(st, binding, client, tokens, scopes, key.as_deref())
            .await
    }

    /// Makes `tokens` the credentials in use, saves them and forgets the
    /// records of other issuers.
    async fn finish(
        &self,
        st: &mut State,
        binding: &Binding,
        client: ClientRegistration,
        tokens: TokenSet,
        scopes: Vec<String>,
        key: Option<&SigningKey>,
    ) -> Result<(), AuthError> {
        let dpop_key = match (tokens.dpop_bound, key) {
            (true, Some(key)) => Some(key.to_stored()?),
            _ => None,
        };
        let record = StoredCredentials {
            version: RECORD_VERSION,
            server_url: self.config.server_url.clone(),
            resource: binding.resource.clone(),
            issuer: binding.issuer.clone(),
            token_endpoint: binding.token_endpoint.to_string(),
            client,
            tokens: Some(tokens),
            requested_scopes: scopes.clone(),
            saved_at: 0,
            dpop_key,
            revocation_endpoint: binding.revocation_endpoint.clone(),
        };
        st.requested_scopes = scopes;
        st.current = Some(record.clone());
        let issuer = record.issuer.clone();
        if self.save(record).await {
            // The new credentials replace those of any other issuer.
            self.forget_other_issuers(&issuer).await;
        }
        Ok(())
    }

    /// The challenge's scopes, else the resource's `scopes_supported`, else
    /// none; united with the scopes asked before; `offline_access` added
    /// only when the authorization server offers it.
    fn select_scopes(
        &self,
        previous: &[String],
        discovered: &Discovered,
        challenge: Option<&BearerChallenge>,
    ) -> Vec<String> {
        let challenged = challenge.map(BearerChallenge::scopes).unwrap_or_default();
        let base = if challenged.is_empty() {
            discovered.resource_scopes.clone().unwrap_or_default()
        } else {
            challenged
        };
        let mut scopes: Vec<String> = Vec::new();
        for scope in previous.iter().chain(&base) {
            if scope != "offline_access" && !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        let offered = discovered
            .server
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
        if self.config.offline_access
            && self.config.grant.is_interactive()
            && offered
            && !scopes.is_empty()
        {
            scopes.push("offline_access".to_owned());
        }
        scopes
    }

    fn count_attempt(&self, st: &mut State, scopes: &[String]) -> Result<(), AuthError> {
        let mut key = scopes.to_vec();
        key.sort();
        let now = Instant::now();
        st.attempts
            .retain(|(_, at)| now.duration_since(*at) < AUTHORIZATION_WINDOW);
        let limit = self.config.max_authorizations;
        let count = st.attempts.iter().filter(|(k, _)| *k == key).count();
        if count >= limit as usize {
            return Err(AuthError::TooManyAuthorizations {
                limit,
                counted: AuthorizationLimit::SameScopes,
            });
        }
        st.attempts.push_back((key, now));
        Ok(())
    }

    async fn authorize(
        &self,
        st: &mut State,
        discovered: &Discovered,
        scopes: Vec<String>,
        dpop: bool,
    ) -> Result<(), AuthError> {
        if !self.handler.interactive() {
            // Nothing registered, nothing asked: only a sign-in could help.
            return Err(AuthError::SignInRequired);
        }
        let server = &discovered.server;
        if !server.pkce_s256 {
            return Err(AuthError::PkceNotSupported);
        }
        let authorization_endpoint =
            server
                .authorization_endpoint
                .as_ref()
                .ok_or(AuthError::InvalidDocument {
                    step: crate::error::Step::ServerMetadata,
                })?;
        let redirect_uri = self.handler.redirect_uri();
        let stored_client = st.current.as_ref().map(|c| &c.client);
        let client = Registrar {
            http: self.http.as_ref(),
            timeout: self.config.request_timeout,
            client_name: &self.config.client_name,
            redirect_uri: &redirect_uri,
            pre_registered: &self.config.pre_registered,
            client_metadata_url: self.config.client_metadata_url.as_deref(),
            dynamic_registration: self.config.dynamic_registration,
        }
        .client_for(server, stored_client)
        .await?;
        let record = StoredCredentials {
            version: RECORD_VERSION,
            server_url: self.config.server_url.clone(),
            resource: discovered.resource.clone(),
            issuer: server.issuer.clone(),
            token_endpoint: server.token_endpoint.to_string(),
            client: client.clone(),
            tokens: None,
            requested_scopes: scopes.clone(),
            saved_at: 0,
            dpop_key: None,
            revocation_endpoint: server.revocation_endpoint.as_ref().map(Url::to_string),
        };
        // The record in use, when it is stored under the same key (this
        // server and issuer) and holds tokens: a bare registration must not
        // replace it before the new tokens are there.
        let would_replace_tokens = st
            .current
            .as_ref()
            .is_some_and(|c| c.issuer == server.issuer && c.tokens.is_some());
        if stored_client != Some(&client) && !would_replace_tokens {
            // Keep a new registration even if the user never finishes, so
            // the next attempt does not register again.
            self.save(record.clone()).await;
        }

        let pkce = Pkce::generate()?;
        let state = random_token()?;
        let url = authorization_url(
            authorization_endpoint,
            &AuthorizationParams {
                client_id: &client.client_id,
                redirect_uri: &client.redirect_uri,
                code_challenge: &pkce.challenge,
                state: &state,
                resource: &discovered.resource,
                scopes: &scopes,
            },
        );
        self.policy.check(&url, UrlRole::AuthorizationEndpoint)?;
        let request = AuthorizationRequest::new(url, client.redirect_uri.clone(), state.clone());
        let response = self.handler.authorize(request).await?;
        let code = accept_response(&response, &state, server)?;
        let key = if dpop {
            Some(self.key_for(st, &server.issuer, &discovered.resource)?)
        } else {
            None
        };
        let auth = self.client_authn(&client)?;
        let tokens = self
            .token_endpoint(
                &server.token_endpoint,
                &server.issuer,
                &client.client_id,
                &auth,
                &discovered.resource,
                key.as_deref(),
            )
            .exchange_code(&code, &pkce.verifier, &client.redirect_uri, &scopes)
            .await?;
        let binding = Binding {
            issuer: server.issuer.clone(),
            token_endpoint: server.token_endpoint.clone(),
            resource: discovered.resource.clone(),
            revocation_endpoint: server.revocation_endpoint.as_ref().map(Url::to_string),
        };
        drop(record);
        self.finish(st, &binding, client, tokens, scopes, key.as_deref())
            .await
    }
}

/// Where tokens come from and what they are for.
struct Binding {
    issuer: String,
    token_endpoint: Url,
    resource: String,
    /// RFC 7009, kept in the record for `logout`.
    revocation_endpoint: Option<String>,
}

impl fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("server", &urls::origin_string(&self.server))
            .field("handler", &self.handler)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl CredentialProvider for OAuthProvider {
    fn authorization<'a>(
        &'a self,
        target: CredentialTarget<'a>,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, TransportError>> {
        Box::pin(async move {
            self.headers(target)
                .await
                .map_err(AuthError::into_transport)
        })
    }

    fn dpop_nonce(&self, nonce: &str) -> bool {
        self.rs_nonce.offer(nonce)
    }

    fn on_unauthorized<'a>(
        &'a self,
        refusal: Refusal<'a>,
    ) -> BoxFuture<'a, Result<bool, TransportError>> {
        Box::pin(async move {
            let status = refusal.status;
            let challenge = refusal.www_authenticate.and_then(parse_bearer);
            if challenge
                .as_ref()
                .is_some_and(BearerChallenge::wants_dpop_nonce)
                && self
                    .state
                    .lock()
                    .await
                    .current
                    .as_ref()
                    .is_some_and(StoredCredentials::is_dpop_bound)
            {
                // The transport already retried once with the server's
                // nonce (or the nonce was malformed): no more.
                let e = AuthError::DpopNonceLoop {
                    party: NonceParty::ResourceServer,
                };
                tracing::info!(error = %e, "OAuth: no new credentials");
                return Err(e.into_transport());
            }
            let trigger = match status {
                401 => Trigger::Unauthorized,
                403 if challenge
                    .as_ref()
                    .is_some_and(BearerChallenge::is_insufficient_scope) =>
                {
                    Trigger::StepUp
                }
                _ => return Ok(false),
            };
            let seen = self.generation.load(Ordering::SeqCst);
            let mut st = self.state.lock().await;
            if self.generation.load(Ordering::SeqCst) != seen {
                // Someone renewed the credentials while this request waited.
                return Ok(true);
            }
            match self.renew(&mut st, trigger, challenge.as_ref()).await {
                Ok(()) => {
                    self.generation.fetch_add(1, Ordering::SeqCst);
                    Ok(true)
                }
                Err(e) => {
                    tracing::info!(error = %e, "OAuth: no new credentials");
                    Err(e.into_transport())
                }
            }
        })
    }
}
