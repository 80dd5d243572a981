//! The connections to one BMC, and one exchange on them: HTTP/1.1 over TCP, or over rustls for
//! `https://`. At most [`ClientBuilder::connections`](super::ClientBuilder::connections) are
//! open; each carries one request at a time, and an idle one is reused before another is
//! dialled.
//!
//! The pool is this small one rather than a general HTTP client's because of what a BMC is: one
//! origin that allows a handful of sessions and does a TLS handshake slowly. A general pool asked
//! for a connection while the previous answer's connection is still on its way back dials a
//! second one and keeps it, which for a drift check (six requests in turn) meant two TCP
//! connections and two full TLS handshakes per host, on the BMC too. Here a request first waits
//! for its permit, then for the idle connection to be ready, and dials only when there is none.

use bytes::Bytes;
use http::response::Parts;
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio_rustls::TlsConnector;
use url::{Host, Url};

/// A request as this module sends it.
pub(super) type Request = http::Request<Full<Bytes>>;

type Sender = SendRequest<Full<Bytes>>;

/// The cause of a failure, for [`Failure`]'s variants that have one.
pub(super) type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why an exchange did not produce a whole answer.
#[derive(Debug)]
pub(super) enum Failure {
    /// No connection could be made (refused, unreachable, a resolver that failed for now, TLS
    /// handshake failed): the request was not sent.
    Connect(Cause),
    /// The host name does not resolve: the resolver says no such name exists, or none with an
    /// address (`EAI_NONAME`, `EAI_NODATA`, `EAI_FAIL`). Asking again will not help, unlike a
    /// resolver that failed for now (`EAI_AGAIN`), which is [`Failure::Connect`].
    NoSuchName(Cause),
    /// An `http://` request was answered in TLS: the port serves `https://`. Nothing was
    /// processed (the server took the request for a broken handshake).
    TlsAnswer,
    /// The connection was not made within the connect timeout: the request was not sent.
    ConnectTimeout(Duration),
    /// The request or its answer broke off: the request may have been processed.
    Interrupted(Cause),
    /// No whole answer within the request timeout: the request may have been processed.
    Timeout(Duration),
    /// The answer's body is larger than the cap.
    TooLarge,
}

/// Where the connections go and how they are made.
pub(super) struct Wire {
    host: Host<String>,
    port: u16,
    /// `None` for `http://`.
    tls: Option<(TlsConnector, ServerName<'static>)>,
    connect_timeout: Duration,
    timeout: Duration,
    max_body: usize,
    /// Connections that finished their last exchange whole, most recent last.
    idle: Mutex<Vec<Sender>>,
    /// One per connection allowed; a request holds one from before it takes a connection until
    /// it gave it back (or dropped it).
    permits: Semaphore,
}

impl fmt::Debug for Wire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wire")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls.is_some())
            .field("connections", &self.permits.available_permits())
            .finish_non_exhaustive()
    }
}

/// How a [`Wire`] is set up; the [`ClientBuilder`](super::ClientBuilder) checked every value.
pub(super) struct WireConfig {
    pub(super) tls: Option<Arc<rustls::ClientConfig>>,
    pub(super) connections: usize,
    pub(super) connect_timeout: Duration,
    pub(super) timeout: Duration,
    pub(super) max_body: usize,
}

impl Wire {
    /// The wire to `base`'s origin. `base` has a host (the builder checked); `config.tls` is
    /// used for `https://` only.
    pub(super) fn new(base: &Url, config: WireConfig) -> Result<Self, String> {
        let host = base
            .host()
            .map(|h| h.to_owned())
            .ok_or_else(|| format!("{base} has no host"))?;
        let port = base
            .port_or_known_default()
            .ok_or_else(|| format!("{base} has no port"))?;
        let tls = match (base.scheme(), config.tls) {
            ("https", Some(tls)) => {
                let name = match &host {
                    Host::Domain(d) => ServerName::try_from(d.clone()).map_err(|e| format!("host name {d:?}: {e}"))?,
                    Host::Ipv4(ip) => ServerName::IpAddress((*ip).into()),
                    Host::Ipv6(ip) => ServerName::IpAddress((*ip).into()),
                };
                Some((TlsConnector::from(tls), name))
            }
            ("https", None) => return Err(format!("{base} needs a TLS configuration")),
            _ => None,
        };
        Ok(Self {
            host,
            port,
            tls,
            connect_timeout: config.connect_timeout,
            timeout: config.timeout,
            max_body: config.max_body,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(config.connections),
        })
    }

    /// Sends `request` and reads the whole answer, within the request timeout (which counts
    /// from here, a wait for a connection and the connecting included).
    pub(super) async fn exchange(&self, request: Request) -> Result<(Parts, Vec<u8>), Failure> {
        // Never closed, so acquiring cannot fail.
        let _permit = self.permits.acquire().await.ok();
        tokio::time::timeout(self.timeout, self.exchange_holding_permit(request))
            .await
            .unwrap_or(Err(Failure::Timeout(self.timeout)))
    }

    /// A connection ready for the next request: an idle one, else one dialled now. For a caller
    /// that wants to know the BMC can be reached before sending it anything.
    pub(super) async fn warm(&self) -> Result<(), Failure> {
        // Never closed, so acquiring cannot fail.
        let _permit = self.permits.acquire().await.ok();
        let sender = match self.take_idle().await {
            Some(sender) => sender,
            None => Box::pin(self.dial()).await?,
        };
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(sender);
        Ok(())
    }

    async fn exchange_holding_permit(&self, mut request: Request) -> Result<(Parts, Vec<u8>), Failure> {
        loop {
            let (mut sender, reused) = match self.take_idle().await {
                Some(sender) => (sender, true),
                // On the heap: the handshake's state is large and needed once per connection,
                // while every exchange's future would otherwise carry it.
                None => (Box::pin(self.dial()).await?, false),
            };
            let response = match sender.try_send_request(request).await {
                Ok(response) => response,
                Err(mut e) => match e.take_message() {
                    // The idle connection had been closed by the BMC; nothing was sent on it.
                    Some(unsent) if reused => {
                        request = unsent;
                        continue;
                    }
                    Some(_) => return Err(Failure::Connect(Box::new(e.into_error()))),
                    None if answered_with_tls(e.error()) => return Err(Failure::TlsAnswer),
                    None => return Err(Failure::Interrupted(Box::new(e.into_error()))),
                },
            };
            let answer = self.read(response).await?;
            // Only a connection whose answer was read whole is fit for another request.
            self.idle
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(sender);
            return Ok(answer);
        }
    }

    /// An idle connection ready for a request, if one is still open. Waits for the one just
    /// given back to finish its last exchange rather than dialling another.
    async fn take_idle(&self) -> Option<Sender> {
        loop {
            let mut sender = self
                .idle
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .pop()?;
            if !sender.is_closed() && sender.ready().await.is_ok() {
                return Some(sender);
            }
        }
    }

    async fn read(&self, response: http::Response<hyper::body::Incoming>) -> Result<(Parts, Vec<u8>), Failure> {
        let (parts, mut body) = response.into_parts();
        // hyper's reading of `Content-Length`, when the answer has one.
        let declared = body.size_hint().exact();
        if declared.is_some_and(|n| n > self.max_body as u64) {
            return Err(Failure::TooLarge);
        }
        let mut bytes = Vec::with_capacity(declared.map_or(0, |n| usize::try_from(n).unwrap_or(0)));
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| Failure::Interrupted(Box::new(e)))?;
            if let Ok(data) = frame.into_data() {
                if bytes.len() + data.len() > self.max_body {
                    return Err(Failure::TooLarge);
                }
                bytes.extend_from_slice(&data);
            }
        }
        Ok((parts, bytes))
    }

    /// A new connection: TCP, then TLS for `https://`, then HTTP/1.1, within the connect
    /// timeout. The connection's own task runs until the last handle to it is dropped.
    async fn dial(&self) -> Result<Sender, Failure> {
        tokio::time::timeout(self.connect_timeout, async {
            let tcp = match &self.host {
                Host::Domain(name) => TcpStream::connect(&resolve(name, self.port).await?[..]).await,
                Host::Ipv4(ip) => TcpStream::connect((*ip, self.port)).await,
                Host::Ipv6(ip) => TcpStream::connect((*ip, self.port)).await,
            }
            .map_err(|e| Failure::Connect(Box::new(e)))?;
            // Requests are small and whole: send each at once.
            let _ = tcp.set_nodelay(true);
            match &self.tls {
                None => start(PlainHttp { tcp, first_read: true }).await,
                Some((connector, name)) => {
                    let tls = connector
                        .connect(name.clone(), tcp)
                        .await
                        .map_err(|e| Failure::Connect(Box::new(e)))?;
                    start(tls).await
                }
            }
        })
        .await
        .unwrap_or(Err(Failure::ConnectTimeout(self.connect_timeout)))
    }
}

/// The addresses of `name` from the system's resolver (`/etc/hosts`, DNS, … as configured),
/// on a blocking thread as `TcpStream::connect` would ask, but keeping the resolver's answer:
/// a name that does not exist fails at once as [`Failure::NoSuchName`], while a resolver that
/// failed for now is a [`Failure::Connect`], retried like a refused connection.
async fn resolve(name: &str, port: u16) -> Result<Vec<SocketAddr>, Failure> {
    use dns_lookup::LookupErrorKind::{Fail, NoData, NoName};
    let owned = name.to_owned();
    let looked_up =
        tokio::task::spawn_blocking(move || dns_lookup::lookup_host(&owned).map(Iterator::collect::<Vec<_>>))
            .await
            .map_err(|e| Failure::Connect(Box::new(e)))?;
    match looked_up {
        Ok(ips) if ips.is_empty() => Err(Failure::NoSuchName(
            format!("the resolver knows no address for {name}").into(),
        )),
        Ok(ips) => Ok(ips.into_iter().map(|ip| SocketAddr::new(ip, port)).collect()),
        Err(e) if matches!(e.kind(), NoName | NoData | Fail) => Err(Failure::NoSuchName(Box::new(e))),
        Err(e) => Err(Failure::Connect(Box::new(e))),
    }
}

/// Why the first read of a plain-HTTP connection failed: the server answered in TLS.
#[derive(Debug)]
struct TlsAnswered;

impl fmt::Display for TlsAnswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the server answered with a TLS record, not HTTP")
    }
}

impl std::error::Error for TlsAnswered {}

/// Whether `e`, or an error under it, is the [`TlsAnswered`] of a [`PlainHttp`] connection.
fn answered_with_tls(e: &hyper::Error) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        let inner = err.downcast_ref::<io::Error>().and_then(io::Error::get_ref);
        if inner.is_some_and(|i| i.is::<TlsAnswered>()) {
            return true;
        }
        next = err.source();
    }
    false
}

/// A plain-HTTP connection that recognises a TLS server. Such a server answers an HTTP request
/// with a TLS record (an alert: content type 20–23, then version 3.x), which an HTTP answer
/// (`HTTP/1.1 …`) never starts with; the first read then fails with [`TlsAnswered`] instead of
/// leaving hyper to report an unreadable answer, which would be retried as a broken
/// connection.
struct PlainHttp {
    tcp: TcpStream,
    first_read: bool,
}

impl AsyncRead for PlainHttp {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.tcp).poll_read(cx, buf))?;
        let read = &buf.filled()[before..];
        if this.first_read && !read.is_empty() {
            this.first_read = false;
            if is_tls_record(read) {
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, TlsAnswered)));
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for PlainHttp {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

/// Whether `bytes` open a TLS record: a content type (change_cipher_spec 20, alert 21,
/// handshake 22, application_data 23) and, when there, the major version 3 (RFC 8446, 5.1).
fn is_tls_record(bytes: &[u8]) -> bool {
    matches!(bytes.first(), Some(20..=23)) && bytes.get(1).is_none_or(|major| *major == 3)
}

/// HTTP/1.1 on `stream`, its connection task spawned.
async fn start<S>(stream: S) -> Result<Sender, Failure>
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    // hyper's read buffer grows past 8 KiB with a long answer (a BIOS's values) and keeps
    // that size while the connection lives: held at hyper's smallest, 8 KiB, a long answer is
    // read in more pieces (it is gathered whole anyway), and each host in flight holds less.
    let (mut sender, connection) = http1::Builder::new()
        .max_buf_size(8192)
        .handshake(TokioIo::new(stream))
        .await
        .map_err(|e| Failure::Connect(Box::new(e)))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::trace!(error = %e, "connection ended");
        }
    });
    sender.ready().await.map_err(|e| Failure::Connect(Box::new(e)))?;
    Ok(sender)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tls_alert_is_told_from_an_http_answer() {
        // What a TLS 1.2/1.3 server sends for bytes that are no ClientHello: a fatal alert.
        assert!(is_tls_record(&[21, 3, 3, 0, 2, 2, 50]));
        assert!(is_tls_record(&[22, 3, 1]));
        assert!(is_tls_record(&[21]), "a first read of one byte");
        assert!(!is_tls_record(b"HTTP/1.1 200 OK\r\n"));
        assert!(!is_tls_record(&[21, 4]));
        assert!(!is_tls_record(&[]));
    }

    #[tokio::test]
    async fn a_name_that_does_not_exist_is_not_a_connection_to_retry() {
        // A 64-character label is no DNS name (at most 63): the resolver answers EAI_NONAME
        // without asking any server, so this stays on the machine.
        let name = format!("{}.example", "a".repeat(64));
        let failure = resolve(&name, 80).await.unwrap_err();
        assert!(matches!(failure, Failure::NoSuchName(_)), "{failure:?}");
        let found = resolve("localhost", 80).await.unwrap();
        assert!(
            found.iter().all(|a| a.ip().is_loopback() && a.port() == 80),
            "{found:?}"
        );
    }
}
