//! One-call connections to HTTP servers (the `http` feature).

use mcp_session::{Ready, Session, SessionConfig, SessionError};
use mcp_transport::{HttpConfig, HttpConnector};

use crate::connect;

/// Connects to a Streamable HTTP server at `url` (`https://`, or `http://`
/// on loopback) and negotiates with it.
pub async fn connect_http(url: &str) -> Result<Session<Ready>, SessionError> {
    connect_http_with(url, SessionConfig::default()).await
}

/// [`connect_http`] with session settings (handlers, deadlines, bounds).
pub async fn connect_http_with(
    url: &str,
    config: SessionConfig,
) -> Result<Session<Ready>, SessionError> {
    connect(HttpConnector::new(HttpConfig::new(url)), config).await
}
