//! https URLs: the client the transport builds speaks TLS with the system's
//! roots (one configuration per process, see `http/config.rs`), offers
//! HTTP/2 and HTTP/1.1 by ALPN, and refuses a certificate no root of the
//! system signed, on every connection that uses the shared settings.

use std::sync::Arc;
use std::time::Duration;

use mcp_transport::{Connector, HttpConfig, HttpConnector, Inbound, OutboundFrame, RequestFailure};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::LazyConfigAcceptor;
use tokio_rustls::rustls;

const WAIT: Duration = Duration::from_secs(10);

/// What one TLS handshake on the server showed.
#[derive(Debug)]
struct Hello {
    alpn: Vec<Vec<u8>>,
    sni: Option<String>,
    /// Whether the client finished the handshake (it must not: it cannot
    /// trust the certificate).
    completed: bool,
}

/// A TLS listener on 127.0.0.1 with a self-signed certificate for
/// `localhost`, reporting every client hello.
async fn tls_listener() -> (u16, mpsc::UnboundedReceiver<Hello>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let server = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .unwrap(),
    );
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = tcp.accept().await {
            let (tx, server) = (tx.clone(), Arc::clone(&server));
            tokio::spawn(async move {
                let acceptor = LazyConfigAcceptor::new(rustls::server::Acceptor::default(), stream);
                let Ok(start) = acceptor.await else { return };
                let hello = start.client_hello();
                let alpn = hello
                    .alpn()
                    .map(|protocols| protocols.map(<[u8]>::to_vec).collect())
                    .unwrap_or_default();
                let sni = hello.server_name().map(str::to_owned);
                let completed = start.into_stream(server).await.is_ok();
                let _ = tx.send(Hello {
                    alpn,
                    sni,
                    completed,
                });
            });
        }
    });
    (port, rx)
}

fn initialize(id: i64) -> OutboundFrame {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}});
    OutboundFrame::request(body.to_string(), id, "initialize".into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_certificate_is_refused_on_every_connection() {
    let (port, mut hellos) = tls_listener().await;
    let url = format!("https://localhost:{port}/mcp");
    for attempt in 1..=2 {
        let mut conn = HttpConnector::new(HttpConfig::new(&url))
            .connect()
            .await
            .expect("connect (nothing is sent yet)");
        conn.outbound.send(initialize(attempt)).await.unwrap();
        let failure = loop {
            match tokio::time::timeout(WAIT, conn.inbound.recv()).await {
                Ok(Some(Inbound::RequestFailed { id, failure })) if id == attempt => break failure,
                Ok(Some(Inbound::Frame(frame))) => {
                    panic!("a frame over an untrusted connection: {frame:?}")
                }
                Ok(Some(_)) => {}
                Ok(None) => panic!("the connection ended without failing the request"),
                Err(_) => panic!("no failure in time"),
            }
        };
        let RequestFailure::Tls { reason } = &failure else {
            panic!("attempt {attempt}: not a TLS failure: {failure:?}");
        };
        assert!(
            reason.contains("certificate"),
            "attempt {attempt}: {reason}"
        );
        let hello = tokio::time::timeout(WAIT, hellos.recv())
            .await
            .expect("a client hello in time")
            .expect("the listener runs");
        assert!(!hello.completed, "attempt {attempt}: {hello:?}");
        assert_eq!(hello.sni.as_deref(), Some("localhost"), "attempt {attempt}");
        assert_eq!(
            hello.alpn,
            [b"h2".to_vec(), b"http/1.1".to_vec()],
            "attempt {attempt}"
        );
    }
}
