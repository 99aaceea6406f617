//! Accepting connections: at most `max_connections` at once (one more is
//! refused by name), TLS handshakes on their own tasks under a deadline.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
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

/// A connection, with its place under the bound.
pub(super) struct Conn {
    io: Io,
    _permit: OwnedSemaphorePermit,
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
    pub(super) fn new(listener: TcpListener, tls: Option<TlsAcceptor>, max: usize) -> Self {
        let (tx, ready) = mpsc::channel(max.max(1));
        let permits = Arc::new(Semaphore::new(max));
        let task = tokio::spawn(accept_loop(listener, tls, permits, tx));
        Self { ready, task }
    }
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    permits: Arc<Semaphore>,
    tx: mpsc::Sender<Conn>,
) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors and the like: wait a moment.
                tracing::debug!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tracing::warn!("a connection was refused: too many connections (bound)");
            if tls.is_none() {
                tokio::spawn(async move {
                    let mut stream = stream;
                    let _ = tokio::time::timeout(HANDSHAKE, stream.write_all(TOO_MANY)).await;
                });
            }
            continue;
        };
        match &tls {
            None => {
                let conn = Conn {
                    io: Io::Plain(stream),
                    _permit: permit,
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
