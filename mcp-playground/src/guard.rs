//! Who may talk to the playground: the checks every request passes before
//! anything else looks at it, and the one-time code's exchange. No IO here:
//! a request's method and headers in, a verdict out.
//!
//! The order: the `Host` (against DNS rebinding), then where the request
//! comes from (`Sec-Fetch-Site`, `Origin`), then — for the API — the
//! session (cookie and page token, both).

use std::net::SocketAddr;
use std::sync::Mutex;

use axum::http::{HeaderMap, Method, StatusCode, header};

use crate::PlaygroundError;
use crate::secret::Secret;

/// The header the page sends its token in.
pub(crate) const TOKEN_HEADER: &str = "x-playground-token";

/// What a request asks for, as far as the checks care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// The page and its assets: no session needed (there is nothing in
    /// them), but the host and the site are checked.
    Page,
    /// The one-time code's exchange: no session yet.
    Exchange,
    /// Everything under `/api/` but the exchange.
    Api,
}

/// Why a request was refused. Each says so in our own words; none names a
/// secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The `Host` is not the playground's own address.
    ForeignHost,
    /// The `Origin` is not the playground's own origin.
    ForeignOrigin,
    /// `Sec-Fetch-Site` says another site or origin sent it.
    CrossSite,
    /// A `POST` without an `Origin`.
    NoOrigin,
    /// The session cookie or the page token is missing or wrong.
    NoSession,
    /// The one-time code was exchanged already.
    CodeSpent,
    /// The code is not the one-time code.
    WrongCode,
}

impl Refusal {
    /// The HTTP status it is answered with.
    pub(crate) fn status(self) -> StatusCode {
        match self {
            Refusal::ForeignHost => StatusCode::MISDIRECTED_REQUEST,
            Refusal::NoSession => StatusCode::UNAUTHORIZED,
            Refusal::ForeignOrigin
            | Refusal::CrossSite
            | Refusal::NoOrigin
            | Refusal::CodeSpent
            | Refusal::WrongCode => StatusCode::FORBIDDEN,
        }
    }

    /// The answer's text (and the log's).
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Refusal::ForeignHost => "the Host header is not this playground's address",
            Refusal::ForeignOrigin => "the request comes from another origin",
            Refusal::CrossSite => "the request comes from another site or origin",
            Refusal::NoOrigin => "a POST must carry this playground's Origin",
            Refusal::NoSession => "no session: open the URL `mcp playground` printed",
            Refusal::CodeSpent => {
                "the one-time code was used already: start the playground again for a new one"
            }
            Refusal::WrongCode => "that is not this playground's one-time code",
        }
    }
}

/// The secrets of the one session a launch allows.
enum Session {
    /// Waiting for the one-time code.
    Waiting(Secret),
    /// The code was exchanged for these.
    Open { cookie: Secret, token: Secret },
}

/// What the exchange hands out: the cookie to set and the page's token.
pub(crate) struct Issued {
    /// The whole `Set-Cookie` value.
    pub(crate) set_cookie: String,
    /// The token, for the page to send back in [`TOKEN_HEADER`].
    pub(crate) token: String,
}

/// The checks of one playground (one address, one launch).
pub(crate) struct Guard {
    /// `127.0.0.1:PORT` or `[::1]:PORT`.
    host: String,
    /// `http://` and the host.
    origin: String,
    /// Named after the port: cookies are shared by every port of a host,
    /// so two playgrounds must not overwrite each other's.
    cookie_name: String,
    session: Mutex<Session>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl Guard {
    /// The checks for a playground listening on `address`, with a fresh
    /// one-time code.
    pub(crate) fn new(address: SocketAddr) -> Result<(Self, Secret), PlaygroundError> {
        let code = Secret::random()?;
        let host = address.to_string();
        Ok((
            Self {
                origin: format!("http://{host}"),
                cookie_name: format!("mcp_playground_{}", address.port()),
                host,
                session: Mutex::new(Session::Waiting(code.clone())),
            },
            code,
        ))
    }

    /// The playground's origin (`http://127.0.0.1:PORT`).
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// Admits or refuses a request of `class`.
    pub(crate) fn admit(
        &self,
        method: &Method,
        class: Class,
        headers: &HeaderMap,
    ) -> Result<(), Refusal> {
        // One Host header, exactly ours (an HTTP/1.0 request without one
        // is refused too).
        let mut hosts = headers.get_all(header::HOST).iter();
        match (hosts.next(), hosts.next()) {
            (Some(host), None) if host.as_bytes().eq_ignore_ascii_case(self.host.as_bytes()) => {}
            _ => return Err(Refusal::ForeignHost),
        }
        // Browsers say where a request comes from; a page of ours loads
        // its assets and calls the API same-origin, and the page itself is
        // opened directly (`none`).
        if let Some(site) = single(headers, "sec-fetch-site") {
            let ok = match class {
                Class::Page => site == b"same-origin" || site == b"none",
                Class::Exchange | Class::Api => site == b"same-origin",
            };
            if !ok {
                return Err(Refusal::CrossSite);
            }
        }
        match single(headers, header::ORIGIN.as_str()) {
            Some(origin) if origin != self.origin.as_bytes() => return Err(Refusal::ForeignOrigin),
            None if headers.contains_key(header::ORIGIN) => return Err(Refusal::ForeignOrigin),
            None if method == Method::POST => return Err(Refusal::NoOrigin),
            _ => {}
        }
        if class == Class::Api {
            self.check_session(headers)?;
        }
        Ok(())
    }

    /// Both halves of the session: our cookie and the page's token.
    fn check_session(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let session = lock(&self.session);
        let Session::Open { cookie, token } = &*session else {
            return Err(Refusal::NoSession);
        };
        let cookie_ok = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == self.cookie_name && cookie.matches(value));
        let token_ok = single(headers, TOKEN_HEADER)
            .and_then(|t| std::str::from_utf8(t).ok())
            .is_some_and(|t| token.matches(t));
        if cookie_ok && token_ok {
            Ok(())
        } else {
            Err(Refusal::NoSession)
        }
    }

    /// Exchanges the one-time code for the session's secrets; the code is
    /// dead afterwards. A wrong code leaves the real one alive (it cannot
    /// be guessed: 256 bits).
    pub(crate) fn exchange(&self, code: &str) -> Result<Issued, Refusal> {
        let mut session = lock(&self.session);
        match &*session {
            Session::Open { .. } => Err(Refusal::CodeSpent),
            Session::Waiting(expected) if !expected.matches(code) => Err(Refusal::WrongCode),
            Session::Waiting(_) => {
                let (cookie, token) = match (Secret::random(), Secret::random()) {
                    (Ok(c), Ok(t)) => (c, t),
                    // No randomness now: the code stays alive for a retry.
                    _ => return Err(Refusal::NoSession),
                };
                let issued = Issued {
                    set_cookie: format!(
                        "{}={}; Path=/; HttpOnly; SameSite=Strict",
                        self.cookie_name,
                        cookie.expose()
                    ),
                    token: token.expose().to_owned(),
                };
                *session = Session::Open { cookie, token };
                Ok(issued)
            }
        }
    }
}

/// The value of a header that must appear at most once; `None` when it is
/// absent or repeated.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a [u8]> {
    let mut all = headers.get_all(name).iter();
    match (all.next(), all.next()) {
        (Some(value), None) => Some(value.as_bytes()),
        _ => None,
    }
}

fn lock(session: &Mutex<Session>) -> std::sync::MutexGuard<'_, Session> {
    // Plain data: a panic elsewhere cannot leave it half-written.
    match session.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const ADDRESS: &str = "127.0.0.1:4321";

    fn guard() -> (Guard, Secret) {
        Guard::new(ADDRESS.parse().unwrap()).unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn session_headers(g: &Guard, code: &Secret) -> Vec<(&'static str, String)> {
        let issued = g.exchange(code.expose()).unwrap();
        let cookie = issued.set_cookie.split(';').next().unwrap().to_owned();
        vec![
            ("host", ADDRESS.to_owned()),
            ("origin", format!("http://{ADDRESS}")),
            ("sec-fetch-site", "same-origin".to_owned()),
            ("cookie", format!("other=1; {cookie}")),
            (TOKEN_HEADER, issued.token),
        ]
    }

    fn map(pairs: &[(&'static str, String)]) -> HeaderMap {
        let borrowed: Vec<(&'static str, &str)> =
            pairs.iter().map(|(n, v)| (*n, v.as_str())).collect();
        headers(&borrowed)
    }

    fn without(pairs: &[(&'static str, String)], name: &str) -> Vec<(&'static str, String)> {
        pairs.iter().filter(|(n, _)| *n != name).cloned().collect()
    }

    fn with(
        pairs: &[(&'static str, String)],
        name: &'static str,
        value: &str,
    ) -> Vec<(&'static str, String)> {
        let mut out = without(pairs, name);
        out.push((name, value.to_owned()));
        out
    }

    #[test]
    fn the_host_must_be_the_playgrounds_own_address() {
        let (g, _) = guard();
        let get = Method::GET;
        assert_eq!(
            g.admit(&get, Class::Page, &headers(&[("host", ADDRESS)])),
            Ok(())
        );
        for host in [
            "evil.example:4321",
            "localhost:4321",
            "127.0.0.1:4322",
            "127.0.0.1",
        ] {
            assert_eq!(
                g.admit(&get, Class::Page, &headers(&[("host", host)])),
                Err(Refusal::ForeignHost),
                "{host}"
            );
        }
        assert_eq!(
            g.admit(&get, Class::Page, &HeaderMap::new()),
            Err(Refusal::ForeignHost)
        );
        assert_eq!(
            g.admit(
                &get,
                Class::Page,
                &headers(&[("host", ADDRESS), ("host", "evil.example")])
            ),
            Err(Refusal::ForeignHost)
        );
    }

    #[test]
    fn other_sites_and_origins_are_refused_and_posts_need_an_origin() {
        let (g, _) = guard();
        let page =
            |pairs: &[(&'static str, &str)]| g.admit(&Method::GET, Class::Page, &headers(pairs));
        assert_eq!(
            page(&[("host", ADDRESS), ("sec-fetch-site", "none")]),
            Ok(())
        );
        for site in ["cross-site", "same-site"] {
            assert_eq!(
                page(&[("host", ADDRESS), ("sec-fetch-site", site)]),
                Err(Refusal::CrossSite)
            );
        }
        assert_eq!(
            page(&[("host", ADDRESS), ("origin", "http://127.0.0.2:4321")]),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(
            page(&[("host", ADDRESS), ("origin", "null")]),
            Err(Refusal::ForeignOrigin)
        );
        let exchange = |pairs: &[(&'static str, &str)]| {
            g.admit(&Method::POST, Class::Exchange, &headers(pairs))
        };
        let ours = format!("http://{ADDRESS}");
        assert_eq!(exchange(&[("host", ADDRESS), ("origin", &ours)]), Ok(()));
        assert_eq!(exchange(&[("host", ADDRESS)]), Err(Refusal::NoOrigin));
        assert_eq!(
            exchange(&[
                ("host", ADDRESS),
                ("origin", &ours),
                ("sec-fetch-site", "none")
            ]),
            Err(Refusal::CrossSite)
        );
        assert_eq!(
            exchange(&[("host", ADDRESS), ("origin", &ours), ("origin", &ours)]),
            Err(Refusal::ForeignOrigin)
        );
    }

    #[test]
    fn the_api_needs_both_the_cookie_and_the_token() {
        let (g, code) = guard();
        let before = map(&[("host", ADDRESS.to_owned())]);
        assert_eq!(
            g.admit(&Method::GET, Class::Api, &before),
            Err(Refusal::NoSession)
        );
        let full = session_headers(&g, &code);
        assert_eq!(g.admit(&Method::POST, Class::Api, &map(&full)), Ok(()));
        assert_eq!(
            g.admit(&Method::GET, Class::Api, &map(&without(&full, "cookie"))),
            Err(Refusal::NoSession)
        );
        assert_eq!(
            g.admit(
                &Method::GET,
                Class::Api,
                &map(&without(&full, TOKEN_HEADER))
            ),
            Err(Refusal::NoSession)
        );
        let wrong_cookie = with(&full, "cookie", "mcp_playground_4321=00");
        assert_eq!(
            g.admit(&Method::GET, Class::Api, &map(&wrong_cookie)),
            Err(Refusal::NoSession)
        );
        // The right value under another port's name is not our cookie.
        let cookie = full.iter().find(|(n, _)| *n == "cookie").unwrap().1.clone();
        let renamed = with(&full, "cookie", &cookie.replace("_4321=", "_4322="));
        assert_eq!(
            g.admit(&Method::GET, Class::Api, &map(&renamed)),
            Err(Refusal::NoSession)
        );
    }

    #[test]
    fn the_code_is_exchanged_once_and_a_wrong_code_does_not_spend_it() {
        let (g, code) = guard();
        assert!(matches!(g.exchange("0000"), Err(Refusal::WrongCode)));
        let issued = g.exchange(code.expose()).unwrap();
        assert!(
            issued
                .set_cookie
                .ends_with("; Path=/; HttpOnly; SameSite=Strict")
        );
        assert!(issued.set_cookie.starts_with("mcp_playground_4321="));
        assert!(!issued.set_cookie.contains(code.expose()));
        assert!(matches!(g.exchange(code.expose()), Err(Refusal::CodeSpent)));
        assert!(!format!("{g:?}").contains(&issued.token));
    }
}
