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
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
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
    /// No connection could be made (refused, unreachable, name not found, TLS handshake
    /// failed): the request was not sent.
    Connect(Cause),
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

    async fn exchange_holding_permit(&self, mut request: Request) -> Result<(Parts, Vec<u8>), Failure> {
        loop {
            let (mut sender, reused) = match self.take_idle().await {
                Some(sender) => (sender, true),
                None => (self.dial().await?, false),
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
                Host::Domain(name) => TcpStream::connect((name.as_str(), self.port)).await,
                Host::Ipv4(ip) => TcpStream::connect((*ip, self.port)).await,
                Host::Ipv6(ip) => TcpStream::connect((*ip, self.port)).await,
            }
            .map_err(|e| Failure::Connect(Box::new(e)))?;
            // Requests are small and whole: send each at once.
            let _ = tcp.set_nodelay(true);
            match &self.tls {
                None => start(tcp).await,
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

/// HTTP/1.1 on `stream`, its connection task spawned.
async fn start<S>(stream: S) -> Result<Sender, Failure>
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (mut sender, connection) = http1::handshake(TokioIo::new(stream))
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
