//! The checks every request passes before anything is read: `Host` (on
//! loopback, against DNS rebinding), `Origin`, the bearer token.

use axum::http::{HeaderMap, StatusCode, header};

use super::{BearerToken, HttpConfig};

/// Why a request was refused at the door.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// On loopback, a `Host` that is not a loopback name.
    ForeignHost,
    /// An `Origin` that is not allowed.
    ForeignOrigin,
    /// No bearer token, or not ours.
    Unauthorized,
}

impl Refusal {
    pub(super) fn status(self) -> StatusCode {
        match self {
            Refusal::ForeignHost => StatusCode::FORBIDDEN,
            Refusal::ForeignOrigin => StatusCode::FORBIDDEN,
            Refusal::Unauthorized => StatusCode::UNAUTHORIZED,
        }
    }

    pub(super) fn message(self) -> &'static str {
        match self {
            Refusal::ForeignHost => {
                "the Host header is not a loopback name (this server serves loopback only)"
            }
            Refusal::ForeignOrigin => "the Origin header is not an allowed origin",
            Refusal::Unauthorized => "a valid bearer token is required",
        }
    }
}

/// The checks of one endpoint.
#[derive(Debug)]
pub(super) struct Guard {
    loopback: bool,
    origins: Vec<String>,
    bearer: Option<BearerToken>,
}

/// Whether `host` (a name without port) is a loopback name.
fn loopback_name(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
        || host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .and_then(|h| h.parse::<std::net::Ipv6Addr>().ok())
            .is_some_and(|ip| ip.is_loopback())
}

/// The host part of `authority` (`host[:port]`, `[v6][:port]`).
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

impl Guard {
    pub(super) fn new(config: &HttpConfig, loopback: bool) -> Self {
        Self {
            loopback,
            origins: config
                .allowed_origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
            bearer: config.bearer.clone(),
        }
    }

    pub(super) fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        if self.loopback {
            let mut hosts = headers.get_all(header::HOST).iter();
            match (hosts.next(), hosts.next()) {
                (Some(host), None) if host.to_str().is_ok_and(|h| loopback_name(host_of(h))) => {}
                _ => return Err(Refusal::ForeignHost),
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().map_err(|_| Refusal::ForeignOrigin)?;
            if !self.origin_allowed(origin) {
                return Err(Refusal::ForeignOrigin);
            }
        }
        if let Some(token) = &self.bearer {
            let offered = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| {
                    let v = v.as_bytes();
                    (v.len() > 7 && v[..7].eq_ignore_ascii_case(b"bearer ")).then(|| &v[7..])
                })
                .ok_or(Refusal::Unauthorized)?;
            if !token.matches(offered) {
                return Err(Refusal::Unauthorized);
            }
        }
        Ok(())
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.to_ascii_lowercase();
        if !self.origins.is_empty() {
            return self.origins.contains(&origin);
        }
        if !self.loopback {
            return false;
        }
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        !rest.contains('/') && loopback_name(host_of(rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn loopback_hosts_and_origins_pass_others_are_refused() {
        let guard = Guard::new(&HttpConfig::default(), true);
        assert_eq!(guard.check(&headers(&[("host", "127.0.0.1:8931")])), Ok(()));
        assert_eq!(guard.check(&headers(&[("host", "localhost")])), Ok(()));
        assert_eq!(guard.check(&headers(&[("host", "[::1]:80")])), Ok(()));
        assert_eq!(
            guard.check(&headers(&[("host", "evil.example:8931")])),
            Err(Refusal::ForeignHost)
        );
        assert_eq!(guard.check(&headers(&[])), Err(Refusal::ForeignHost));
        assert_eq!(
            guard.check(&headers(&[
                ("host", "127.0.0.1:1"),
                ("origin", "http://localhost:3000")
            ])),
            Ok(())
        );
        assert_eq!(
            guard.check(&headers(&[
                ("host", "127.0.0.1:1"),
                ("origin", "http://evil.example")
            ])),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(
            guard.check(&headers(&[("host", "127.0.0.1:1"), ("origin", "null")])),
            Err(Refusal::ForeignOrigin)
        );
    }

    #[test]
    fn configured_origins_replace_the_loopback_ones_and_tokens_must_match() {
        let config = HttpConfig::default()
            .allow_origin("https://app.example")
            .bearer(BearerToken::new("s3cret").unwrap());
        let guard = Guard::new(&config, false);
        let ok = [
            ("host", "gw.example"),
            ("origin", "https://app.example"),
            ("authorization", "Bearer s3cret"),
        ];
        assert_eq!(guard.check(&headers(&ok)), Ok(()));
        assert_eq!(
            guard.check(&headers(&[
                ("origin", "http://localhost:1"),
                ("authorization", "Bearer s3cret")
            ])),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(
            guard.check(&headers(&[("authorization", "Bearer s3cre")])),
            Err(Refusal::Unauthorized)
        );
        assert_eq!(
            guard.check(&headers(&[("authorization", "Bearer s3cret2")])),
            Err(Refusal::Unauthorized)
        );
        assert_eq!(guard.check(&headers(&[])), Err(Refusal::Unauthorized));
        assert!(BearerToken::new("").is_none());
        assert!(BearerToken::new("with space").is_none());
        assert_eq!(
            format!("{:?}", BearerToken::new("s3cret").unwrap()),
            "BearerToken(..)"
        );
    }
}
