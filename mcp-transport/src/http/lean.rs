//! The fast path of plain-http exchanges: hyper's HTTP/1.1 connection API
//! (`hyper::client::conn::http1`) over a small pool of keep-alive
//! connections of our own, instead of reqwest's client stack.
//!
//! Why: on loopback a Streamable HTTP exchange is a few microseconds of
//! work, and reqwest's layers around hyper (its redirect layer parses the
//! request URL again on every response, its pool and connector are general
//! purpose) cost as much as our own crates. hyper still does all of
//! HTTP/1.1 (writing the head, parsing the answer's head within its bounds,
//! chunked and content-length bodies, keep-alive); what is ours is only the
//! pool: one connection per exchange in flight, given back when its body
//! has been read to the end or dropped (see [`LeanBody`]); the rest of a
//! reply stream after its answer is read briefly in the background, and a
//! request that finds no idle connection meanwhile races a new connect
//! against that one coming back (as hyper-util's pool does for reqwest).
//!
//! When it applies ([`Lean::for_config`]): a plain `http://` server URL (so
//! loopback only, see `check_url`; reqwest speaks HTTP/1.1 there too, HTTP/2
//! only by ALPN over TLS), no client injected by the host, and no proxy
//! from the environment for that URL (decided by the same hyper-util
//! matcher reqwest uses). Everything else (https, proxies, an injected
//! client) and every exchange after a redirect takes reqwest.
//!
//! A connection that was idle in the pool may have been closed by the
//! server just as it is used: a request that hyper reports as never
//! written is sent on another connection. One that was written is never
//! sent again, even when the connection closed before any byte of an
//! answer came back (browsers resend then; the server may have acted on
//! it, and a tool call is never replayed): it fails.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::FutureExt;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::header::HeaderValue;
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use tracing::Instrument as _;
use url::Url;

use crate::http::config::HttpConfig;

/// How long the rest of a reply stream whose answer was delivered is read,
/// so that its connection can serve again.
const FINISH_WAIT: Duration = Duration::from_secs(1);
/// How much of that rest is read (and discarded) at most.
const FINISH_BYTES: usize = 64 * 1024;

/// Why the fast path produced no response.
#[derive(Debug)]
pub(crate) enum LeanError {
    /// Connecting took longer than the connect time-out.
    ConnectTimedOut,
    /// The connection failed, or the answer's head was not HTTP.
    Io(io::Error),
}

/// The pool of one server origin.
#[derive(Debug)]
pub(crate) struct Lean {
    host: String,
    port: u16,
    origin: url::Origin,
    /// The base URL and its origin-form target, made once.
    base: Url,
    base_target: Uri,
    /// The `Host` header.
    host_header: HeaderValue,
    connect_timeout: Duration,
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
    max_idle: usize,
    /// Replies being read to their end (`LeanBody::finish`): a request
    /// that finds no idle connection waits for one of them as it connects.
    finishing: std::sync::atomic::AtomicUsize,
    /// Told on every connection given back.
    returned: tokio::sync::Notify,
}

impl Lean {
    /// The fast path for this config, when it applies (see the module docs).
    pub(crate) fn for_config(config: &HttpConfig, base: &Url) -> Option<Arc<Lean>> {
        if config.client.is_some() || base.scheme() != "http" {
            return None;
        }
        let host = base.host_str()?.to_owned();
        let port = base.port_or_known_default()?;
        let uri: Uri = base.as_str().parse().ok()?;
        if hyper_util::client::proxy::matcher::Matcher::from_env()
            .intercept(&uri)
            .is_some()
        {
            return None;
        }
        let authority = uri.authority()?.as_str();
        let host_header = HeaderValue::from_str(authority).ok()?;
        Some(Arc::new(Lean {
            // `[::1]` is connected to as `::1`.
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port,
            origin: base.origin(),
            base_target: target_of(base)?,
            base: base.clone(),
            host_header,
            connect_timeout: config.connect_timeout,
            idle: Mutex::new(Vec::new()),
            max_idle: config.max_in_flight.clamp(1, 1024),
            finishing: std::sync::atomic::AtomicUsize::new(0),
            returned: tokio::sync::Notify::new(),
        }))
    }

    /// Whether requests to `url` can take this pool.
    pub(crate) fn serves(&self, url: &Url) -> bool {
        // The base URL itself (nearly every request) without making an
        // `Origin`, which allocates.
        *url == self.base || url.origin() == self.origin
    }

    /// The `Host` header every request carries.
    pub(crate) fn host_header(&self) -> &HeaderValue {
        &self.host_header
    }

    /// The request target (`/path?query`) of `url`.
    pub(crate) fn target(&self, url: &Url) -> Option<Uri> {
        if *url == self.base {
            Some(self.base_target.clone())
        } else {
            target_of(url)
        }
    }

    /// Sends `request` (on another connection when an idle one turns out
    /// closed before it was written, see the module docs) and returns the
    /// answer's head and its body.
    pub(crate) async fn send(
        self: &Arc<Self>,
        mut request: Request<Full<Bytes>>,
    ) -> Result<(hyper::http::response::Parts, LeanBody), LeanError> {
        loop {
            let (mut sender, reused) = self.acquire().await?;
            match sender.try_send_request(request).await {
                Ok(response) => {
                    let (head, incoming) = response.into_parts();
                    let body = LeanBody::new(incoming, Arc::clone(self), sender);
                    return Ok((head, body));
                }
                Err(mut e) => match e.take_message() {
                    // Never written: another connection may take it. A
                    // request that was written is never sent again, even
                    // when the connection closed before any answer: the
                    // server may have acted on it (a tool call is never
                    // replayed).
                    Some(unsent) if reused => request = unsent,
                    _ => {
                        let e = e.into_error();
                        tracing::debug!(error = %e, "HTTP request failed");
                        return Err(LeanError::Io(io::Error::other(e)));
                    }
                },
            }
        }
    }

    /// An idle connection, else a new one; while replies are being
    /// finished, whichever comes first (as hyper-util's pool does).
    async fn acquire(&self) -> Result<(SendRequest<Full<Bytes>>, bool), LeanError> {
        if let Some(sender) = self.checkout().await {
            return Ok((sender, true));
        }
        // Boxed: a connect (with its handshake) happens once per
        // connection, and would make every exchange's future larger.
        Box::pin(self.connect_or_reuse()).await
    }

    /// A new connection, or an idle one if a finishing reply gives one
    /// back before the connect is done.
    async fn connect_or_reuse(&self) -> Result<(SendRequest<Full<Bytes>>, bool), LeanError> {
        if self.finishing.load(std::sync::atomic::Ordering::Relaxed) == 0 {
            return Ok((self.connect().await?, false));
        }
        let connect = self.connect();
        tokio::pin!(connect);
        loop {
            tokio::select! {
                biased;
                () = self.returned.notified() => {
                    if let Some(sender) = self.checkout().await {
                        return Ok((sender, true));
                    }
                }
                sender = &mut connect => return Ok((sender?, false)),
            }
        }
    }

    /// An idle connection that is still open and ready, if there is one.
    async fn checkout(&self) -> Option<SendRequest<Full<Bytes>>> {
        loop {
            let mut sender = self.lock().pop()?;
            if sender.is_closed() {
                continue;
            }
            if sender.ready().await.is_ok() {
                return Some(sender);
            }
        }
    }

    /// A new connection, its task spawned.
    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, LeanError> {
        let connect = tokio::net::TcpStream::connect((self.host.as_str(), self.port));
        let stream = match tokio::time::timeout(self.connect_timeout, connect).await {
            Err(_) => return Err(LeanError::ConnectTimedOut),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "connecting failed");
                return Err(LeanError::Io(e));
            }
            Ok(Ok(stream)) => stream,
        };
        // Small requests and answers: no Nagle delay (reqwest does the same).
        let _ = stream.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| LeanError::Io(io::Error::other(e)))?;
        tokio::spawn(
            async move {
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "HTTP connection ended");
                }
            }
            .in_current_span(),
        );
        Ok(sender)
    }

    /// Gives a connection whose exchange is over back to the pool.
    fn checkin(&self, sender: SendRequest<Full<Bytes>>) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.lock();
        if idle.len() < self.max_idle {
            idle.push(sender);
            drop(idle);
            self.returned.notify_one();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SendRequest<Full<Bytes>>>> {
        // Pushes and pops only: a poisoned lock still holds a valid list.
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `/path?query` of a URL, as a request target.
fn target_of(url: &Url) -> Option<Uri> {
    url[url::Position::BeforePath..url::Position::AfterQuery]
        .parse()
        .ok()
}

/// The body of an answer, holding its connection until the body has been
/// read to its end or dropped; the connection then goes back to the pool.
/// A body dropped before its end is drained by hyper when the rest has
/// already arrived, else the connection is closed (so dropping a reply
/// stream closes it, which is how a 2026-07-28 request is cancelled); the
/// next checkout waits for hyper's verdict (`ready`) before using it.
#[derive(Debug)]
pub(crate) struct LeanBody {
    incoming: Incoming,
    checkout: Option<(Arc<Lean>, SendRequest<Full<Bytes>>)>,
}

impl LeanBody {
    fn new(incoming: Incoming, pool: Arc<Lean>, sender: SendRequest<Full<Bytes>>) -> Self {
        let mut body = Self {
            incoming,
            checkout: Some((pool, sender)),
        };
        if body.incoming.is_end_stream() {
            body.release();
        }
        body
    }

    /// The body's length, when the head gave it.
    pub(crate) fn exact_len(&self) -> Option<u64> {
        self.incoming.size_hint().exact()
    }

    /// The next piece of the body; `Ok(None)` at its end.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, hyper::Error> {
        loop {
            match self.incoming.frame().await {
                None => {
                    self.release();
                    return Ok(None);
                }
                Some(Err(e)) => {
                    // Not reused: the connection is broken.
                    self.checkout = None;
                    return Err(e);
                }
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data()
                        && !data.is_empty()
                    {
                        if self.incoming.is_end_stream() {
                            self.release();
                        }
                        return Ok(Some(data));
                    }
                }
            }
        }
    }

    /// Nothing more of this body is wanted: the rest is read in the
    /// background (for at most a second and 64 KiB) so that the connection
    /// can serve again when it ends, instead of being closed now.
    pub(crate) fn finish(mut self) {
        // Usually the end is already here (a server ends the reply stream
        // right after the answer): take it now, without a task and a timer.
        let mut read = 0usize;
        loop {
            if self.checkout.is_none() {
                return;
            }
            match self.chunk().now_or_never() {
                Some(Ok(Some(chunk))) => {
                    read += chunk.len();
                    if read > FINISH_BYTES {
                        self.checkout = None;
                        return;
                    }
                }
                Some(Ok(None) | Err(_)) => return,
                None => break,
            }
        }
        let Some((pool, _)) = &self.checkout else {
            return;
        };
        let pool = Arc::clone(pool);
        pool.finishing
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tokio::spawn(async move {
            let rest = async {
                while let Ok(Some(chunk)) = self.chunk().await {
                    read += chunk.len();
                    if read > FINISH_BYTES {
                        self.checkout = None;
                        return;
                    }
                }
            };
            let _ = tokio::time::timeout(FINISH_WAIT, rest).await;
            drop(self);
            pool.finishing
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        });
    }

    fn release(&mut self) {
        if let Some((pool, sender)) = self.checkout.take() {
            pool.checkin(sender);
        }
    }
}

impl Drop for LeanBody {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_origin_form() {
        for (url, target) in [
            ("http://127.0.0.1:8/mcp", "/mcp"),
            ("http://127.0.0.1:8", "/"),
            ("http://localhost/a/b?x=1&y=%20", "/a/b?x=1&y=%20"),
            ("http://[::1]:9/m?q", "/m?q"),
        ] {
            let url = Url::parse(url).unwrap();
            assert_eq!(target_of(&url).unwrap().to_string(), target);
        }
    }
}
