//! What an HTTP transport needs to know: the server URL, headers, time-outs,
//! bounds and the credential provider; and the checks made on a URL before
//! any byte goes out.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use url::{Host, Url};

use crate::TransportError;
use crate::http::credentials::CredentialProvider;

/// Default bound on one HTTP body or one SSE event (16 MiB).
pub const DEFAULT_MAX_BODY: usize = mcp_codec::DEFAULT_MAX_FRAME;
/// Default `User-Agent`.
pub const DEFAULT_USER_AGENT: &str = concat!("mcp-transport/", env!("CARGO_PKG_VERSION"));
/// Redirects followed at most (same origin only).
pub const MAX_REDIRECTS: usize = 5;

/// Settings of an HTTP transport (Streamable HTTP or legacy HTTP+SSE).
///
/// `Debug` shows header names but never their values, and never the
/// credential itself.
#[derive(Clone)]
pub struct HttpConfig {
    /// The server URL: the MCP endpoint (Streamable HTTP) or the SSE endpoint
    /// (legacy HTTP+SSE). Must be `https://`, or `http://` on loopback only,
    /// and must not carry `user:password@`.
    pub url: String,
    /// Extra headers sent with every request (name, value). Checked at
    /// connect: an illegal one is [`TransportError::InvalidHeader`].
    pub headers: Vec<(String, String)>,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// Bound on establishing a TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// Bound on waiting for a response's head, for a whole JSON body, and
    /// between two chunks of a reply's event stream (default 300 s).
    /// Sessions keep their own request deadlines; this is the transport's
    /// safety net, so a host that allows some request longer than this
    /// should raise it too (the `mcp` CLI sets it above its largest
    /// deadline, 600 s).
    pub response_timeout: Duration,
    /// Bound on the `DELETE` sent at shutdown, and on waiting for the legacy
    /// `endpoint` event at connect.
    pub shutdown_timeout: Duration,
    /// Bound on one HTTP body and on one SSE event, in bytes.
    pub max_body: usize,
    /// How many POSTs may be in flight at once; further frames wait in the
    /// outbound queue.
    pub max_in_flight: usize,
    /// The wait before resuming a broken stream when the server sent no
    /// `retry` field.
    pub default_retry: Duration,
    /// Consecutive failed attempts to resume one stream before giving up
    /// (a stream the server ended cleanly, polling, is not a failed one).
    pub max_resume_attempts: u32,
    /// Where the `Authorization` (or other credential) header comes from.
    pub credentials: Option<Arc<dyn CredentialProvider>>,
    /// The host's own HTTP client for the MCP requests (see
    /// [`HttpConfig::client`]); `None`: the transport builds its own.
    pub client: Option<reqwest::Client>,
}

impl HttpConfig {
    /// A config for `url` with the default bounds and no credentials.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            connect_timeout: Duration::from_secs(10),
            response_timeout: Duration::from_secs(300),
            shutdown_timeout: Duration::from_secs(5),
            max_body: DEFAULT_MAX_BODY,
            max_in_flight: 256,
            default_retry: Duration::from_secs(1),
            max_resume_attempts: 5,
            credentials: None,
            client: None,
        }
    }

    /// Adds a header sent with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the credential provider.
    pub fn credentials(mut self, provider: Arc<dyn CredentialProvider>) -> Self {
        self.credentials = Some(provider);
        self
    }

    /// Sends the MCP requests through the host's `client` (a proxy, a
    /// gateway, mTLS, its own root certificates) instead of a client the
    /// transport builds.
    ///
    /// The host is then responsible for that client's redirect policy and
    /// TLS settings: the transport's own client follows redirects only
    /// within the server's origin (so the credential never reaches another
    /// one), and that guard is not applied to an injected client, nor is
    /// [`connect_timeout`](HttpConfig::connect_timeout). The transport still
    /// checks the server URL (plain `http://` only to loopback, no
    /// credentials in it), still sends [`headers`](HttpConfig::headers),
    /// [`user_agent`](HttpConfig::user_agent) and the credential with each
    /// request, and still applies its time-outs and body bounds.
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpConfig")
            .field("url", &redacted_url(&self.url))
            .field("header_names", &names)
            .field("user_agent", &self.user_agent)
            .field("connect_timeout", &self.connect_timeout)
            .field("response_timeout", &self.response_timeout)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("max_body", &self.max_body)
            .field("max_in_flight", &self.max_in_flight)
            .field("default_retry", &self.default_retry)
            .field("max_resume_attempts", &self.max_resume_attempts)
            .field("credentials", &self.credentials)
            .field("injected_client", &self.client.is_some())
            .finish()
    }
}

/// The URL as it may be shown: scheme, host and port only (a path or query
/// may carry a session or a token).
pub(crate) fn redacted_url(url: &str) -> String {
    match Url::parse(url) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => "<invalid url>".to_owned(),
    }
}

/// Scheme, host, port and path (no credentials, query or fragment): names
/// an endpoint for per-process caches.
pub(crate) fn endpoint_key(url: &str) -> String {
    match Url::parse(url) {
        Ok(u) => format!("{}{}", u.origin().ascii_serialization(), u.path()),
        Err(_) => "<invalid url>".to_owned(),
    }
}

/// Parses and checks a server URL: `https`, or `http` to a loopback host;
/// no credentials in it.
pub(crate) fn check_url(raw: &str) -> Result<Url, TransportError> {
    let url = Url::parse(raw).map_err(TransportError::InvalidUrl)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(TransportError::CredentialsInUrl);
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(TransportError::InsecureUrl {
            host: url.host_str().unwrap_or_default().to_owned(),
        }),
        other => Err(TransportError::UnsupportedScheme {
            scheme: other.to_owned(),
        }),
    }
}

/// `localhost`, 127.0.0.0/8 or `[::1]` (an IPv4-mapped loopback too).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => {
            ip.is_loopback()
                || ip
                    .to_ipv4_mapped()
                    .is_some_and(|v4| IpAddr::V4(v4).is_loopback())
        }
        None => false,
    }
}

/// The custom headers and the `User-Agent`, checked, as one map.
pub(crate) fn configured_headers(
    config: &HttpConfig,
) -> Result<reqwest::header::HeaderMap, TransportError> {
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in &config.headers {
        let (name, value) = header_pair(name, value)?;
        headers.append(name, value);
    }
    Ok(headers)
}

/// The reqwest client for one connector.
///
/// Redirects: followed only within the origin of the server URL (so neither
/// credentials nor custom headers ever reach another origin, and https is
/// never downgraded), at most [`MAX_REDIRECTS`] times; any other redirect is
/// handed back as its 3xx status. Custom headers are checked here.
pub(crate) fn build_client(
    config: &HttpConfig,
    base: &Url,
) -> Result<reqwest::Client, TransportError> {
    let defaults = configured_headers(config)?;
    let origin = base.origin();
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > MAX_REDIRECTS || attempt.url().origin() != origin {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    let mut builder = reqwest::Client::builder()
        .user_agent(config.user_agent.as_str())
        .default_headers(defaults)
        .connect_timeout(config.connect_timeout)
        .redirect(policy);
    if base.scheme() == "http" {
        // Plain http (loopback only, see `check_url`) never reaches TLS: no
        // redirect and no legacy `endpoint` leaves the origin. Without this
        // the platform verifier reads every CA certificate of the system
        // (~150 files here) for nothing, on every connect.
        builder = builder.tls_certs_only(Vec::new());
    } else if let Some(tls) = shared_tls() {
        builder = builder.tls_backend_preconfigured(tls);
    }
    builder
        .build()
        .map_err(|e| TransportError::HttpClient(e.without_url()))
}

/// The TLS settings of every https client this crate builds: what reqwest
/// would make itself (the process's default crypto provider, else
/// aws-lc-rs; TLS 1.2 and 1.3; the system's roots through the platform
/// verifier; SNI; ALPN `h2` then `http/1.1`), made once per process. The
/// verifier reads every CA certificate of the system when it is made: once
/// for a hub of a hundred https servers, not a hundred times. `None` when
/// it cannot be made; reqwest then builds its own and reports the error.
fn shared_tls() -> Option<rustls::ClientConfig> {
    static TLS: std::sync::OnceLock<Option<rustls::ClientConfig>> = std::sync::OnceLock::new();
    TLS.get_or_init(|| {
        let provider = rustls::crypto::CryptoProvider::get_default()
            .cloned()
            .unwrap_or_else(|| std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
        let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
            .map_err(|e| tracing::debug!(error = %e, "the platform's certificate verifier failed"))
            .ok()?;
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(rustls::ALL_VERSIONS)
            .ok()?
            // rustls's door to a verifier of one's own; this one checks
            // the chain, the name and the dates like reqwest's.
            .dangerous()
            .with_custom_certificate_verifier(std::sync::Arc::new(verifier))
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Some(tls)
    })
    .clone()
}

/// Checks one header for legality; the value is marked sensitive so that no
/// `Debug` of a request shows it.
pub(crate) fn header_pair(
    name: &str,
    value: &str,
) -> Result<(reqwest::header::HeaderName, reqwest::header::HeaderValue), TransportError> {
    let header_name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| TransportError::InvalidHeader { name: None })?;
    let mut header_value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
        TransportError::InvalidHeader {
            name: Some(header_name.as_str().to_owned()),
        }
    })?;
    header_value.set_sensitive(true);
    Ok((header_name, header_value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_is_required_except_on_loopback() {
        for ok in [
            "https://example.com/mcp",
            "http://localhost:8080/mcp",
            "http://LOCALHOST/mcp",
            "http://127.0.0.1:1/mcp",
            "http://127.3.2.1/mcp",
            "http://[::1]:9/mcp",
        ] {
            assert!(check_url(ok).is_ok(), "{ok} should be accepted");
        }
        for (bad, host) in [
            ("http://example.com/mcp", "example.com"),
            ("http://10.0.0.1/mcp", "10.0.0.1"),
            ("http://localhost.example.com/mcp", "localhost.example.com"),
        ] {
            match check_url(bad) {
                Err(TransportError::InsecureUrl { host: h }) => assert_eq!(h, host),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn credentials_and_other_schemes_in_urls_are_refused() {
        assert!(matches!(
            check_url("https://user:secret@example.com/"),
            Err(TransportError::CredentialsInUrl)
        ));
        assert!(matches!(
            check_url("ftp://example.com/"),
            Err(TransportError::UnsupportedScheme { scheme }) if scheme == "ftp"
        ));
        let err = check_url("not a url").unwrap_err();
        assert!(matches!(err, TransportError::InvalidUrl(_)));
        assert!(!format!("{err} {err:?}").contains("not a url"));
    }

    #[test]
    fn debug_shows_no_header_values_and_no_url_path() {
        let config = HttpConfig::new("https://example.com/mcp?token=sekrit")
            .header("X-Api-Key", "sekrit-key");
        let shown = format!("{config:?}");
        assert!(shown.contains("X-Api-Key"));
        assert!(!shown.contains("sekrit"));
    }

    #[test]
    fn illegal_headers_are_named_errors() {
        assert!(matches!(
            header_pair("Bad Name", "v"),
            Err(TransportError::InvalidHeader { name: None })
        ));
        assert!(matches!(
            header_pair("X-Ok", "line\nbreak"),
            Err(TransportError::InvalidHeader { name: Some(n) }) if n == "x-ok"
        ));
    }
}
