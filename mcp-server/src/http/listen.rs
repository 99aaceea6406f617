//! Accepting connections: at most `max_connections` at once, and at most
//! `max_connections_per_peer` from one peer address (one more is refused
//! by name), TLS handshakes on their own tasks under a deadline.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

use super::TlsFiles;
use crate::ServerError;

/// How long a TLS handshake may take.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// The answer to a connection over the bound (plain HTTP only).
const TOO_MANY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
content-length: 48\r\nconnection: close\r\n\r\ntoo many connections to this MCP server (bound)\n";

/// The answer to a connection over its peer's bound (plain HTTP only).
const TOO_MANY_FROM_PEER: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
content-length: 66\r\nconnection: close\r\n\r\ntoo many connections from your address to this MCP server (bound)\n";

/// The TLS acceptor of `files` (rustls with aws-lc-rs, TLS 1.2 and 1.3,
/// HTTP/1.1 by ALPN).
pub(super) fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, ServerError> {
    let read = |path: &std::path::Path| {
        std::fs::read(path).map_err(|source| ServerError::TlsFile {
            path: path.to_owned(),
            problem: "it could not be read",
            source: Some(source),
        })
    };
    let bad = |path: &std::path::Path, problem: &'static str| ServerError::TlsFile {
        path: path.to_owned(),
        problem,
        source: None,
    };
    let cert_pem = read(&files.cert)?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|_| bad(&files.cert, "it is not a PEM certificate chain"))?;
    if certs.is_empty() {
        return Err(bad(&files.cert, "it holds no certificate"));
    }
    let key_pem = read(&files.key)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|_| bad(&files.key, "it holds no PEM private key"))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(ServerError::Tls)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(ServerError::Tls)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A connection, with its places under the bounds.
pub(super) struct Conn {
    io: Io,
    _permit: OwnedSemaphorePermit,
    _peer: Option<PeerPlace>,
}

/// The connections each peer holds, for the bound per peer. A peer is an
/// IPv4 address, or an IPv6 address's /64 (what one host is commonly
/// given). Each key holds at least one connection, so the map is bounded
/// by the connection bound.
#[derive(Debug)]
pub(super) struct Peers {
    max: usize,
    held: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection's place under its peer's bound; given back on drop.
#[derive(Debug)]
pub(super) struct PeerPlace {
    peers: Arc<Peers>,
    key: IpAddr,
}

impl Peers {
    /// At most `max` connections per peer.
    pub(super) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            held: Mutex::new(HashMap::new()),
        })
    }

    /// The key `address` is counted under.
    fn key(address: IpAddr) -> IpAddr {
        match address.to_canonical() {
            IpAddr::V6(v6) => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(prefix.into())
            }
            v4 => v4,
        }
    }

    /// A place for one more connection of `address`, unless its peer holds
    /// the most it may.
    pub(super) fn enter(self: &Arc<Self>, address: IpAddr) -> Option<PeerPlace> {
        let key = Self::key(address);
        let mut held = lock(&self.held);
        let count = held.entry(key).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(PeerPlace {
            peers: Arc::clone(self),
            key,
        })
    }

    #[cfg(test)]
    fn holding(&self) -> usize {
        lock(&self.held).len()
    }
}

impl Drop for PeerPlace {
    fn drop(&mut self) {
        let mut held = lock(&self.peers.held);
        if let Some(count) = held.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.remove(&self.key);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

enum Io {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().io {
            Io::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(s) => Pin::new(s).poll_flush(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Connections accepted (and TLS ones shaken hands with) by a task of its
/// own, handed over ready.
pub(super) struct Listener {
    ready: mpsc::Receiver<Conn>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Listener {
    /// Accepts on `listener`: at most `max` connections at once, and, with
    /// `peers`, at most its bound from one peer.
    pub(super) fn new(
        listener: TcpListener,
        tls: Option<TlsAcceptor>,
        max: usize,
        peers: Option<Arc<Peers>>,
    ) -> Self {
        let (tx, ready) = mpsc::channel(max.max(1));
        let permits = Arc::new(Semaphore::new(max));
        let task = tokio::spawn(accept_loop(listener, tls, permits, peers, tx));
        Self { ready, task }
    }
}

/// The warnings of refused connections: one a second at most, the
/// refusals in between counted in the next, so a flood of connections
/// cannot flood the log.
#[derive(Debug, Default)]
struct Warned {
    last: Option<std::time::Instant>,
    unsaid: u64,
}

impl Warned {
    /// `Some(refusals not logged since the last warning)` when one may be
    /// logged at `now`; `None` (and one more counted) otherwise.
    fn admit(&mut self, now: std::time::Instant) -> Option<u64> {
        if self
            .last
            .is_some_and(|last| now.saturating_duration_since(last) < Duration::from_secs(1))
        {
            self.unsaid += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.unsaid))
    }
}

/// Turns a connection away with `answer` (plain HTTP; a TLS peer is just
/// closed: nothing can be said before the handshake).
fn turn_away(stream: TcpStream, tls: bool, answer: &'static [u8]) {
    if !tls {
        tokio::spawn(async move {
            let mut stream = stream;
            let _ = tokio::time::timeout(HANDSHAKE, stream.write_all(answer)).await;
        });
    }
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    permits: Arc<Semaphore>,
    peers: Option<Arc<Peers>>,
    tx: mpsc::Sender<Conn>,
) {
    let mut warned = Warned::default();
    loop {
        let (stream, address): (TcpStream, SocketAddr) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors and the like: wait a moment.
                tracing::debug!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let peer = match &peers {
            None => None,
            Some(peers) => match peers.enter(address.ip()) {
                Some(place) => Some(place),
                None => {
                    if let Some(unsaid) = warned.admit(std::time::Instant::now()) {
                        tracing::warn!(
                            peer = %address.ip(),
                            refused_unlogged = unsaid,
                            "a connection was refused: too many connections from its address (bound)"
                        );
                    }
                    turn_away(stream, tls.is_some(), TOO_MANY_FROM_PEER);
                    continue;
                }
            },
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            if let Some(unsaid) = warned.admit(std::time::Instant::now()) {
                tracing::warn!(
                    refused_unlogged = unsaid,
                    "a connection was refused: too many connections (bound)"
                );
            }
            turn_away(stream, tls.is_some(), TOO_MANY);
            continue;
        };
        match &tls {
            None => {
                let conn = Conn {
                    io: Io::Plain(stream),
                    _permit: permit,
                    _peer: peer,
                };
                if tx.send(conn).await.is_err() {
                    return;
                }
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let conn = Conn {
                                io: Io::Tls(Box::new(tls)),
                                _permit: permit,
                                _peer: peer,
                            };
                            let _ = tx.send(conn).await;
                        }
                        Ok(Err(e)) => tracing::debug!(error = %e, "a TLS handshake failed"),
                        Err(_) => tracing::debug!("a TLS handshake took too long"),
                    }
                });
            }
        }
    }
}

impl Listener {
    /// The next connection, ready to be served.
    async fn accept(&mut self) -> Conn {
        match self.ready.recv().await {
            Some(conn) => conn,
            // The accept task ended (it never does on its own).
            None => std::future::pending().await,
        }
    }
}

/// Serves `router` on every connection `listener` hands over until
/// `shutdown` resolves; then stops accepting, lets each connection finish
/// its exchange in progress, and returns once all are closed.
///
/// Each connection is hyper's HTTP/1.1 server with a timer: a request's
/// head must arrive within `head_timeout` of the connection's being ready
/// for it, so a peer that opens a connection and sends nothing, or half a
/// head, gives its place under the connection bound back instead of
/// holding it forever (a kept-alive connection idle that long is closed
/// too). A request's body is read under the same time in `session.rs`.
pub(super) async fn serve(
    mut listener: Listener,
    router: axum::Router,
    head_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()>,
) {
    // Told once, at shutdown; every connection holds a `closed` receiver
    // until it is closed.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let (closed_tx, closed) = tokio::sync::watch::channel(());
    tokio::pin!(shutdown);
    loop {
        let conn = tokio::select! {
            conn = listener.accept() => conn,
            () = &mut shutdown => break,
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let mut stopping = stopping.clone();
        let closed = closed.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(head_timeout);
            let connection = builder.serve_connection(hyper_util::rt::TokioIo::new(conn), service);
            tokio::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => Some(ended),
                _ = stopping.wait_for(|stop| *stop) => None,
            };
            let ended = match ended {
                Some(ended) => ended,
                None => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!(error = %e, "an HTTP connection ended with an error");
            }
            drop(closed);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    drop(closed);
    closed_tx.closed().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn the_refusals_say_their_own_length() {
        for answer in [TOO_MANY, TOO_MANY_FROM_PEER] {
            let text = std::str::from_utf8(answer).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            assert!(
                head.contains(&format!("content-length: {}\r\n", body.len())),
                "{text}"
            );
        }
    }

    #[test]
    fn a_peer_is_an_ipv4_address_or_an_ipv6_slash_64_and_its_places_come_back() {
        let peers = Peers::new(2);
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let first = peers.enter(ip("203.0.113.7")).unwrap();
        // The same address written as IPv4-mapped IPv6 is the same peer.
        let second = peers.enter(ip("::ffff:203.0.113.7")).unwrap();
        assert!(peers.enter(ip("203.0.113.7")).is_none());
        assert!(peers.enter(ip("203.0.113.8")).is_some(), "another peer");
        // Addresses of one /64 are one peer; the next /64 is another.
        let _a = peers.enter(ip("2001:db8:1:2::1")).unwrap();
        let _b = peers.enter(ip("2001:db8:1:2:ffff:ffff:ffff:ffff")).unwrap();
        assert!(peers.enter(ip("2001:db8:1:2:abcd::9")).is_none());
        assert!(peers.enter(ip("2001:db8:1:3::1")).is_some());
        drop(first);
        let third = peers.enter(ip("203.0.113.7")).unwrap();
        drop((second, third));
        assert_eq!(peers.holding(), 1, "only the /64 holds places");
    }

    #[test]
    fn refusals_are_logged_once_a_second_and_the_rest_counted() {
        let mut warned = Warned::default();
        let start = std::time::Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        assert_eq!(warned.admit(at(0)), Some(0));
        assert_eq!(warned.admit(at(1)), None);
        assert_eq!(warned.admit(at(500)), None);
        assert_eq!(warned.admit(at(1000)), Some(2));
        assert_eq!(warned.admit(at(3000)), Some(0));
    }

    /// Over real sockets: one peer past its bound is answered 503 by name
    /// and closed, and a place given back lets it in again.
    #[tokio::test]
    async fn a_peer_past_its_bound_is_turned_away_until_a_place_comes_back() {
        let socket = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = socket.local_addr().unwrap();
        let mut listener = Listener::new(socket, None, 8, Some(Peers::new(2)));
        let _one = TcpStream::connect(address).await.unwrap();
        let held = listener.accept().await;
        let _two = TcpStream::connect(address).await.unwrap();
        let _held_too = listener.accept().await;
        let mut three = TcpStream::connect(address).await.unwrap();
        let mut answer = String::new();
        three.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(
            answer.ends_with("too many connections from your address to this MCP server (bound)\n")
        );
        drop(held);
        let _four = TcpStream::connect(address).await.unwrap();
        let again = listener.accept().await;
        drop(again);
    }
}
