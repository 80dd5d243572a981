//! Many emulated iDRACs in one process: consecutive ports, shared fixture data and certificate,
//! per-host state, the listen lines and the inventory file of product.md.

use crate::config::{ModelSource, SimConfig};
use crate::fixture::{Fixture, FixtureError};
use crate::host::{Host, HostFaults};
use crate::server;
use crate::tls::{Identity, TlsError, TlsListener};
use redfish_client::Fingerprint;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Why a fleet could not start.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The fixture tree.
    #[error(transparent)]
    Fixture(#[from] FixtureError),
    /// The certificate.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// Binding ports.
    #[error("binding {what}")]
    Bind {
        /// Which addresses.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Nonsense configuration.
    #[error("invalid emulator configuration: {0}")]
    Config(String),
}

/// One serving host.
#[derive(Debug, Clone)]
pub struct RunningHost {
    /// The emulated iDRAC.
    pub host: Arc<Host>,
    /// Its base URL (`https://127.0.0.1:9001`).
    pub url: String,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its inventory name (`r7625-0001`).
    pub name: String,
}

/// A running fleet; dropping it stops every host.
#[derive(Debug)]
pub struct Fleet {
    hosts: Vec<RunningHost>,
    identity: Option<Identity>,
    tasks: Vec<JoinHandle<()>>,
}

impl Fleet {
    /// Loads the fixture once, binds consecutive ports and starts serving.
    pub async fn start(config: SimConfig) -> Result<Self, SimError> {
        if config.hosts == 0 {
            return Err(SimError::Config("--hosts must be at least 1".into()));
        }
        if config.session_limit == 0 {
            return Err(SimError::Config("the session limit must be at least 1".into()));
        }
        let (fixture, label) = match &config.model {
            ModelSource::Builtin(m) => (Fixture::builtin(m)?, m.clone()),
            ModelSource::Dir(d) => (
                Fixture::from_dir(d)?,
                d.file_name()
                    .map_or_else(|| "sim".to_owned(), |n| n.to_string_lossy().into_owned()),
            ),
        };
        let fixture = Arc::new(fixture);
        let identity = if config.tls { Some(Identity::generate()?) } else { None };
        let listeners = bind_consecutive(config.listen, config.hosts).await?;
        let faults = resolve_faults(&config);
        let config = Arc::new(config);
        let scheme = if identity.is_some() { "https" } else { "http" };
        let mut hosts = Vec::with_capacity(listeners.len());
        let mut tasks = Vec::with_capacity(listeners.len());
        for (index, (listener, host_faults)) in listeners.into_iter().zip(faults).enumerate() {
            let addr = listener.local_addr().map_err(|e| SimError::Bind {
                what: "a local address".into(),
                source: e,
            })?;
            let host = Arc::new(Host::new(index, fixture.clone(), config.clone(), host_faults));
            let app = server::router(host.clone());
            let task = match &identity {
                Some(id) => {
                    let tls = TlsListener::new(listener, id).map_err(|e| SimError::Bind {
                        what: addr.to_string(),
                        source: e,
                    })?;
                    tokio::spawn(async move {
                        let _ = axum::serve(tls, app).await;
                    })
                }
                None => tokio::spawn(async move {
                    let _ = axum::serve(listener, app).await;
                }),
            };
            tasks.push(task);
            hosts.push(RunningHost {
                host,
                url: format!("{scheme}://{addr}"),
                addr,
                name: format!("{label}-{:04}", index + 1),
            });
        }
        Ok(Self { hosts, identity, tasks })
    }

    /// The hosts, in port order.
    pub fn hosts(&self) -> &[RunningHost] {
        &self.hosts
    }

    /// The certificate fingerprint every host presents (HTTPS only).
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        self.identity.as_ref().map(|i| i.fingerprint)
    }

    /// The certificate, PEM (HTTPS only).
    pub fn certificate_pem(&self) -> Option<&str> {
        self.identity.as_ref().map(|i| i.cert_pem.as_str())
    }

    /// One line per host: `rftune-sim: listening URL fingerprint sha256:HEX` (the fingerprint
    /// part only with HTTPS).
    pub fn listen_lines(&self) -> Vec<String> {
        self.hosts
            .iter()
            .map(|h| match self.fingerprint() {
                Some(fp) => format!("rftune-sim: listening {} fingerprint {fp}", h.url),
                None => format!("rftune-sim: listening {}", h.url),
            })
            .collect()
    }

    /// The fleet in the inventory format of product.md.
    pub fn inventory_toml(&self) -> String {
        let mut out = String::from("# Written by rftune sim: one entry per emulated iDRAC.\n");
        for h in &self.hosts {
            let _ = write!(out, "\n[[bmc]]\nname = {:?}\nurl = {:?}\n", h.name, h.url);
            if let Some(fp) = self.fingerprint() {
                let _ = writeln!(out, "fingerprint = \"{fp}\"");
            }
            let _ = writeln!(out, "tags = [\"rftune-sim\", {:?}]", h.host.service_tag);
        }
        out
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Binds `count` listeners on consecutive ports from `first`; port 0 finds a free range.
async fn bind_consecutive(first: SocketAddr, count: usize) -> Result<Vec<TcpListener>, SimError> {
    let span =
        u16::try_from(count).map_err(|_| SimError::Config(format!("{count} hosts do not fit in a port range")))?;
    if first.port() != 0 {
        let mut out = Vec::with_capacity(count);
        for i in 0..span {
            let Some(port) = first.port().checked_add(i) else {
                return Err(SimError::Config(format!(
                    "{count} hosts from port {} run past 65535",
                    first.port()
                )));
            };
            let addr = SocketAddr::new(first.ip(), port);
            out.push(TcpListener::bind(addr).await.map_err(|e| SimError::Bind {
                what: addr.to_string(),
                source: e,
            })?);
        }
        return Ok(out);
    }
    let mut last_error = None;
    for _ in 0..32 {
        let l0 = TcpListener::bind(first).await.map_err(|e| SimError::Bind {
            what: first.to_string(),
            source: e,
        })?;
        let base = l0
            .local_addr()
            .map_err(|e| SimError::Bind {
                what: first.to_string(),
                source: e,
            })?
            .port();
        if u32::from(base) + u32::from(span) > 65_535 {
            continue;
        }
        let mut out = vec![l0];
        let mut ok = true;
        for i in 1..span {
            let addr = SocketAddr::new(first.ip(), base + i);
            match TcpListener::bind(addr).await {
                Ok(l) => out.push(l),
                Err(e) => {
                    last_error = Some(SimError::Bind {
                        what: addr.to_string(),
                        source: e,
                    });
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            return Ok(out);
        }
    }
    Err(last_error.unwrap_or_else(|| SimError::Config(format!("no free range of {count} ports"))))
}

/// Decides, for every host, which faults apply (deterministic for the seed).
fn resolve_faults(config: &SimConfig) -> Vec<HostFaults> {
    use crate::config::FaultKind;
    let mut out = vec![HostFaults::default(); config.hosts];
    for (n, spec) in config.faults.iter().enumerate() {
        let seed = config.seed.wrapping_add(n as u64);
        let mut rng = fastrand::Rng::with_seed(seed ^ 0xFA17);
        for index in spec.selector.hosts(config.hosts, seed) {
            let f = &mut out[index];
            if spec.kind.per_request() {
                f.request.push((spec.kind, spec.rate));
                continue;
            }
            if rng.f64() >= spec.rate {
                continue;
            }
            match spec.kind {
                FaultKind::StuckJob => f.stuck_job = true,
                FaultKind::JobFails => f.job_fails = true,
                FaultKind::NoReturn => f.no_return = true,
                _ => {}
            }
        }
    }
    out
}
