//! The gateway's settings.

use std::path::PathBuf;
use std::time::Duration;

use mcp_server::ServerLimits;
use mcp_types::Implementation;

/// How the gateway presents itself and what it bounds.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GatewayConfig {
    /// The identity the host sees (default `mcp-gateway` and this crate's
    /// version).
    pub server_info: Implementation,
    /// Guidance for the host's model, sent with the handshake.
    pub instructions: Option<String>,
    /// Tools per `tools/list` page (default 100, 1 to 1000).
    pub page_size: usize,
    /// How long a server's request to the host (sampling, elicitation) and
    /// the gateway's own `roots/list` wait for the host's answer (default
    /// 5 minutes: a person may be answering).
    pub host_request_timeout: Duration,
    /// The bounds of the host's connection (frames, requests in flight …).
    pub limits: ServerLimits,
    /// A Unix socket where the operator reviews changed tool lists
    /// ([`crate::control`]); none by default. Made with permissions 0600;
    /// an existing socket file at the path is replaced, anything else there
    /// is refused.
    pub control: Option<PathBuf>,
    /// Whether the roots of hosts connected over HTTP are handed to the
    /// stdio servers (default no: a remote host's directories mean nothing
    /// here). The host on stdio always gives its roots.
    pub roots_from_http_hosts: bool,
    /// On stdio: how long the gateway keeps polling, instead of sleeping,
    /// after each message to or from the host ([`mcp_server::BusyPoll`]):
    /// the reply of a server then needs no wake-up of the gateway. Costs up
    /// to this much CPU after each message; none by default (the `mcp`
    /// command sets 500 µs). Over HTTP the endpoint's own setting applies
    /// (`mcp_server::http::HttpConfig::busy_poll`).
    pub busy_poll: Option<Duration>,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        Self {
            server_info: Implementation::new("mcp-gateway", env!("CARGO_PKG_VERSION")),
            instructions: None,
            page_size: 100,
            host_request_timeout: Duration::from_secs(300),
            limits: ServerLimits::default(),
            control: None,
            roots_from_http_hosts: false,
            busy_poll: None,
        }
    }
}

impl GatewayConfig {
    /// Sets [`page_size`](Self::page_size).
    pub fn page_size(mut self, tools: usize) -> Self {
        self.page_size = tools;
        self
    }

    /// Sets [`host_request_timeout`](Self::host_request_timeout).
    pub fn host_request_timeout(mut self, timeout: Duration) -> Self {
        self.host_request_timeout = timeout;
        self
    }

    /// Sets [`control`](Self::control).
    pub fn control(mut self, path: impl Into<PathBuf>) -> Self {
        self.control = Some(path.into());
        self
    }

    /// Sets [`roots_from_http_hosts`](Self::roots_from_http_hosts).
    pub fn roots_from_http_hosts(mut self, take: bool) -> Self {
        self.roots_from_http_hosts = take;
        self
    }

    /// Sets [`busy_poll`](Self::busy_poll) (zero: none).
    pub fn busy_poll(mut self, window: Duration) -> Self {
        self.busy_poll = (!window.is_zero()).then_some(window);
        self
    }

    /// Sets [`instructions`](Self::instructions).
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    pub(crate) fn validate(&self) -> Result<(), crate::GatewayError> {
        if !(1..=1000).contains(&self.page_size) {
            return Err(crate::GatewayError::InvalidSetting {
                setting: "page_size",
                problem: "it must be between 1 and 1000",
            });
        }
        if self.busy_poll.is_some_and(|w| w > Duration::from_secs(1)) {
            return Err(crate::GatewayError::InvalidSetting {
                setting: "busy_poll",
                problem: "it must be at most a second",
            });
        }
        if self.host_request_timeout.is_zero() {
            return Err(crate::GatewayError::InvalidSetting {
                setting: "host_request_timeout",
                problem: "it must be positive",
            });
        }
        Ok(())
    }
}
