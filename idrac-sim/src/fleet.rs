//! Many emulated iDRACs in one process: consecutive ports, shared fixture data and certificate,
//! per-host state, the listen lines and the inventory file every `--inventory` command reads.

use crate::config::{ModelSource, SimConfig};
use crate::fixture::{Fixture, FixtureError};
use crate::host::{Host, HostFaults};
use crate::personality::Personality;
use crate::server;
use crate::tls::{Identity, TlsError, TlsListener};
use redfish_client::Fingerprint;
use std::fmt::Write;
use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr};
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
    /// Loads each model's tree once, binds consecutive ports and starts serving: the hosts of
    /// `model`, then each group of `more`, numbered on through the fleet (`r7625-0001`,
    /// `r7625-0002`, `dl385-0003`), as fault selectors count them.
    pub async fn start(config: SimConfig) -> Result<Self, SimError> {
        if config.hosts == 0 || config.more.iter().any(|(_, n)| *n == 0) {
            return Err(SimError::Config("--hosts must be at least 1 for every model".into()));
        }
        if config.session_limit == 0 {
            return Err(SimError::Config("the session limit must be at least 1".into()));
        }
        // Each model's tree is loaded once and shared by its hosts.
        let mut groups = Vec::with_capacity(1 + config.more.len());
        for (source, count) in
            std::iter::once((&config.model, config.hosts)).chain(config.more.iter().map(|(m, n)| (m, *n)))
        {
            let (fixture, label) = load(source)?;
            groups.push((Arc::new(fixture), label, count));
        }
        let models = groups
            .iter()
            .flat_map(|(fixture, label, count)| std::iter::repeat_n((fixture.clone(), label.clone()), *count));
        // Generated over HTTP too: the hosts describe the certificate an iDRAC always has.
        let generated = Identity::generate()?;
        let certificate = generated.certificate.clone();
        let identity = config.tls.then_some(generated);
        let listeners = bind_consecutive(config.listen, config.total_hosts()).await?;
        let faults = resolve_faults(&config);
        let config = Arc::new(config);
        let scheme = if identity.is_some() { "https" } else { "http" };
        let mut hosts = Vec::with_capacity(listeners.len());
        let mut tasks = Vec::with_capacity(listeners.len());
        for (index, ((listener, host_faults), (fixture, label))) in
            listeners.into_iter().zip(faults).zip(models).enumerate()
        {
            let addr = listener.local_addr().map_err(|e| SimError::Bind {
                what: "a local address".into(),
                source: e,
            })?;
            let host =
                Arc::new(Host::new(index, fixture.clone(), config.clone(), host_faults).serving(certificate.clone()));
            // Each host answers as the iDRAC its tree records.
            let personality = Arc::new(Personality::of(&host.fixture));
            let app = server::router(host.clone(), personality);
            let gate = host.clone();
            let reachable = move || gate.reachable();
            let task = match &identity {
                Some(id) => {
                    let tls = TlsListener::new(listener, id).map_err(|e| SimError::Bind {
                        what: addr.to_string(),
                        source: e,
                    })?;
                    let gated = Gated::new(tls, reachable);
                    tokio::spawn(async move {
                        let _ = axum::serve(gated, app).await;
                    })
                }
                None => {
                    // No Nagle (as the TLS listener): replies are small and latency-bound.
                    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                        let _ = tcp.set_nodelay(true);
                    });
                    let gated = Gated::new(listener, reachable);
                    tokio::spawn(async move {
                        let _ = axum::serve(gated, app).await;
                    })
                }
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

    /// The fleet in the inventory format (`[[bmc]]` entries with name, url, fingerprint).
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

/// A listener that closes every connection it accepts while its host is unreachable (an iDRAC
/// rebooting after `Manager.Reset`), as a rebooting iDRAC refuses them.
struct Gated<L, F> {
    inner: L,
    open: F,
}

impl<L, F> Gated<L, F> {
    fn new(inner: L, open: F) -> Self {
        Self { inner, open }
    }
}

impl<L, F> axum::serve::Listener for Gated<L, F>
where
    L: axum::serve::Listener,
    F: Fn() -> bool + Send + 'static,
{
    type Io = L::Io;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (io, addr) = self.inner.accept().await;
            if (self.open)() {
                return (io, addr);
            }
            drop(io);
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// The tree `source` names and the label its hosts' names start with.
fn load(source: &ModelSource) -> Result<(Fixture, String), SimError> {
    Ok(match source {
        ModelSource::Builtin(m) => (Fixture::builtin(m)?, m.clone()),
        // A bare word that names no directory was meant as a model name.
        ModelSource::Dir(d) if !d.exists() && d.components().count() == 1 => {
            return Err(FixtureError::UnknownModel(
                d.display().to_string(),
                crate::fixture::builtin_models().join(", "),
            )
            .into());
        }
        ModelSource::Dir(d) => (
            Fixture::from_dir(d)?,
            d.file_name()
                .map_or_else(|| "sim".to_owned(), |n| n.to_string_lossy().into_owned()),
        ),
    })
}

/// Binds `count` listeners on consecutive ports from `first`. A given port must be free with
/// the `count - 1` after it; port 0 searches for a free block (see [`bind_free_block`]).
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
    if span == 1 {
        // One host: the kernel picks a free port.
        let one = TcpListener::bind(first).await.map_err(|e| SimError::Bind {
            what: first.to_string(),
            source: e,
        })?;
        return Ok(vec![one]);
    }
    // A block: start below Linux's ephemeral range (32768-60999), where the kernel also puts
    // every outgoing connection's local port (a client talking to a large fleet holds
    // thousands), at a random base so that parallel emulators rarely meet.
    let base = 10_000 + u16::try_from(fastrand::u32(0..20_000)).unwrap_or(0);
    bind_free_block(first.ip(), span, base, None).await
}

/// Binds `count` consecutive ports starting at `base`, or, when a port of that block is in use
/// (by another process), the next block after the busy port, wrapping to 1024 at the top of
/// the port space. `first` is an already bound listener on `base`, if any. Every port is tried
/// at most once (each busy port moves the block past it), so the search covers the whole port
/// space however many ports are busy on the way — a machine whose outgoing connections hold
/// hundreds of ports spread over the range included — and gives up, with the last error, only
/// when no block is free anywhere.
async fn bind_free_block(
    ip: IpAddr,
    count: u16,
    mut base: u16,
    mut first: Option<TcpListener>,
) -> Result<Vec<TcpListener>, SimError> {
    const WRAP_TO: u16 = 1024;
    let mut last_error = None;
    // Ports the search has moved past: once it has gone all the way round, nothing is free.
    let mut scanned = 0u32;
    while scanned <= 65_536 - u32::from(WRAP_TO) {
        if u32::from(base) + u32::from(count) > 65_536 {
            scanned += 65_536 - u32::from(base);
            base = WRAP_TO;
            first = None;
        }
        let mut out = Vec::with_capacity(usize::from(count));
        let mut busy = None;
        for i in 0..count {
            let addr = SocketAddr::new(ip, base + i);
            if i == 0
                && let Some(l) = first.take()
            {
                out.push(l);
                continue;
            }
            match TcpListener::bind(addr).await {
                Ok(l) => out.push(l),
                Err(e) if matches!(e.kind(), ErrorKind::AddrInUse | ErrorKind::PermissionDenied) => {
                    busy = Some(addr.port());
                    last_error = Some(SimError::Bind {
                        what: addr.to_string(),
                        source: e,
                    });
                    break;
                }
                Err(e) => {
                    return Err(SimError::Bind {
                        what: addr.to_string(),
                        source: e,
                    });
                }
            }
        }
        match busy {
            None => return Ok(out),
            // Every block that contains the busy port fails too: skip past it.
            Some(port) => {
                scanned += u32::from(port - base) + 1;
                base = port.saturating_add(1);
            }
        }
    }
    Err(last_error.unwrap_or_else(|| SimError::Config(format!("no free block of {count} ports on {ip}"))))
}

/// Decides, for every host, which faults apply (the same for the same `--seed`).
fn resolve_faults(config: &SimConfig) -> Vec<HostFaults> {
    use crate::config::FaultKind;
    let hosts = config.total_hosts();
    let mut out = vec![HostFaults::default(); hosts];
    for (n, spec) in config.faults.iter().enumerate() {
        let seed = config.seed.wrapping_add(n as u64);
        let mut rng = fastrand::Rng::with_seed(seed ^ 0xFA17);
        for index in spec.selector.hosts(hosts, seed) {
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
                FaultKind::PostRefuses => f.post_refuses = true,
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

    /// Another process holds a port inside the first candidate block: the search moves past it
    /// instead of failing with "Address already in use".
    #[tokio::test]
    async fn a_busy_port_inside_the_first_block_moves_the_block_past_it() {
        let held = std::net::TcpListener::bind((LOCALHOST, 0)).unwrap();
        let busy = held.local_addr().unwrap().port();
        assert!(busy > 1024 && busy < 65_000, "an ephemeral port: {busy}");
        let listeners = bind_free_block(LOCALHOST, 4, busy - 2, None).await.unwrap();
        let ports: Vec<u16> = listeners.iter().map(|l| l.local_addr().unwrap().port()).collect();
        assert_eq!(ports.len(), 4);
        assert!(ports.windows(2).all(|w| w[1] == w[0] + 1), "consecutive: {ports:?}");
        assert!(
            ports[0] > busy,
            "the block starts after the busy port: {ports:?}, busy {busy}"
        );
        drop(held);
    }

    /// Hundreds of busy ports spread over the range (another process's connections), none of
    /// the gaps wide enough: the search moves past all of them to a free block.
    #[tokio::test]
    async fn many_busy_ports_spread_over_the_range_are_all_skipped() {
        // An address of its own in 127/8, so that fleets other tests or benchmarks start on
        // 127.0.0.1 cannot hold the ports this test means to hold.
        let ip = IpAddr::V4(Ipv4Addr::new(127, 83, 0, 7));
        let base = 20_000u16;
        // Every third port of 600, where another process may already hold some: either way,
        // they are busy and no block of four fits between them.
        let held: Vec<std::net::TcpListener> = (0..200)
            .filter_map(|k| std::net::TcpListener::bind((ip, base + 3 * k)).ok())
            .collect();
        assert!(held.len() > 100, "held {} ports", held.len());
        let listeners = bind_free_block(ip, 4, base, None).await.unwrap();
        let ports: Vec<u16> = listeners.iter().map(|l| l.local_addr().unwrap().port()).collect();
        assert!(ports.windows(2).all(|w| w[1] == w[0] + 1), "consecutive: {ports:?}");
        assert!(ports[0] >= base + 3 * 199, "past the busy region: {ports:?}");
        drop(held);
    }

    #[tokio::test]
    async fn port_zero_finds_a_block_and_a_given_port_must_be_free() {
        let fleet = bind_consecutive(SocketAddr::from((LOCALHOST, 0)), 5).await.unwrap();
        let ports: Vec<u16> = fleet.iter().map(|l| l.local_addr().unwrap().port()).collect();
        assert!(ports.windows(2).all(|w| w[1] == w[0] + 1), "{ports:?}");
        let taken = SocketAddr::from((LOCALHOST, ports[1]));
        let err = bind_consecutive(SocketAddr::from((LOCALHOST, ports[1])), 2)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, SimError::Bind { what, .. } if *what == taken.to_string()),
            "{err}"
        );
    }
}
