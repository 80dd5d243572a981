//! `rftune exporter`: the engine's [`watch`] loop over an inventory, its board served as
//! Prometheus metrics on `GET /metrics` with `GET /healthz`, until SIGTERM or Ctrl-C; or, with
//! `--once`, one check per host printed on stdout; or, with `--probe`, one check per
//! `GET /probe?target=…` of a host the inventory or allowlist admits.

use crate::Exit;
use crate::args::ExporterArgs;
use crate::render;
use anyhow::{Context, Result, bail};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use host_bench::exposition::CONTENT_TYPE;
use rftune_engine::assess::LoadedProfile;
use rftune_engine::lifecycle::Access;
use rftune_engine::state::StateDirs;
use rftune_engine::watch::check::Checker;
use rftune_engine::watch::probe::{Admission, Prober};
use rftune_engine::watch::{self, Board, HostStatus, Schedule, SharedBoard};
use std::io::Write as _;
use std::sync::Arc;

/// Runs `rftune exporter`.
pub async fn run(args: &ExporterArgs, dirs: &StateDirs) -> Result<Exit> {
    if args.interval.is_zero() || args.check_timeout.is_zero() {
        bail!("--interval and --check-timeout must be longer than 0s");
    }
    let chosen = Arc::new(LoadedProfile::load(&args.profile)?);
    if args.probe {
        return probe(args, chosen, dirs).await;
    }
    let entries = crate::config::Hosts::of(&args.target)?.entries;
    if entries.is_empty() {
        bail!("no host to watch: the shard given is empty");
    }
    let mut connect = crate::credentials::connect_config(&args.target.connect, &entries)?;
    // No request may outlast the check it belongs to.
    connect.timeout = connect.timeout.min(args.check_timeout);
    connect.retry_for = connect.retry_for.min(args.check_timeout);
    let cache = dirs.registry_cache();
    cache.prefetch_newest();
    let checker = Checker {
        profile: chosen.clone(),
        access: Access::new(connect, dirs.clone(), Arc::new(render::Notices)),
        cache: Arc::new(cache),
        strict: args.strict,
    };
    let schedule = Schedule {
        interval: args.interval,
        timeout: args.check_timeout,
        concurrency: args.target.concurrency,
        stuck_after: args.job_stuck_after,
        once: args.once,
    };
    let board = SharedBoard::new(Board::new(chosen.name(), schedule, &entries));
    let check = move |entry, sensor| {
        let checker = checker.clone();
        async move { checker.check(&entry, sensor).await }
    };
    crate::signals::install_with(
        "starting no new checks, serving no more scrapes; the checks in flight finish (each within --check-timeout) and log out",
    )?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        rftune_engine::interrupt::wait().await;
        let _ = stop.send(true);
    });
    if args.once {
        watch::run(entries, board.clone(), check, stopped).await;
        let board = board.lock();
        render::text(&watch::metrics::render(&board))?;
        return outcome(&board);
    }
    let listener = listen(args.listen, "GET /metrics, GET /healthz").await?;
    tracing::info!(
        "watching {} host(s) against profile {} every {}",
        board.lock().hosts.len(),
        chosen.name(),
        humantime::format_duration(args.interval)
    );
    let watching = tokio::spawn(watch::run(entries, board.clone(), check, stopped.clone()));
    let mut until_stopped = stopped;
    axum::serve(listener, router(board))
        .with_graceful_shutdown(async move {
            let _ = until_stopped.wait_for(|s| *s).await;
        })
        .await
        .context("serving metrics")?;
    watching.await.context("the check loop ended abnormally")?;
    note!("rftune: exporter stopped");
    Ok(Exit::Success)
}

/// Binds `addr` and says so on stdout, naming what is `served`: scripts and tests wait for
/// this line (as for `rftune sim`'s).
async fn listen(addr: std::net::SocketAddr, served: &str) -> Result<tokio::net::TcpListener> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on {addr}"))?;
    let bound = listener.local_addr().context("reading the address listened on")?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "rftune-exporter: listening http://{bound} ({served})")
        .and_then(|()| out.flush())
        .context("writing to stdout")?;
    Ok(listener)
}

/// `rftune exporter --probe`: no schedule; each GET /probe checks the host it names, if the
/// inventory or the allowlist admits it, against a configured profile, within the scrape's
/// timeout; until SIGTERM or Ctrl-C.
async fn probe(args: &ExporterArgs, default: Arc<LoadedProfile>, dirs: &StateDirs) -> Result<Exit> {
    let connect_args = &args.target.connect;
    if connect_args.insecure || connect_args.trust_on_first_use {
        bail!(
            "--probe checks hosts a scraper names: their certificates must be pinned (--fingerprint, the inventory's fingerprint, known_hosts) or CA-signed (--ca-cert, the system's CAs); --insecure and --trust-on-first-use would hand the BMC password to whoever answers"
        );
    }
    let entries = if args.target.inventory.is_some() || args.target.bmc.is_some() {
        crate::config::Hosts::of(&args.target)?.entries
    } else {
        Vec::new()
    };
    if entries.is_empty() && args.allow_target.is_empty() {
        bail!("--probe needs the hosts it may check: --inventory FILE and/or --allow-target PATTERN");
    }
    let mut profiles = vec![default];
    for name in &args.probe_profiles {
        let p = LoadedProfile::load(name)?;
        if profiles.iter().any(|q| q.name() == p.name()) {
            bail!("two profiles are named {}: a probe chooses them by name", p.name());
        }
        profiles.push(Arc::new(p));
    }
    // Targets the allowlist admits use the run's credentials: resolve them even when every
    // inventory entry names its own file.
    let mut asking = entries.clone();
    if !args.allow_target.is_empty() {
        asking.push(rftune_engine::fleet::BmcEntry {
            name: "allowlisted".into(),
            url: "the allowlisted BMCs".into(),
            fingerprint: None,
            credentials: None,
            tags: Vec::new(),
            node: None,
        });
    }
    let mut connect = crate::credentials::connect_config(connect_args, &asking)?;
    connect.timeout = connect.timeout.min(args.check_timeout);
    connect.retry_for = connect.retry_for.min(args.check_timeout);
    let cache = dirs.registry_cache();
    cache.prefetch_newest();
    let checker = Checker {
        profile: profiles[0].clone(),
        access: Access::new(connect, dirs.clone(), Arc::new(render::Notices)),
        cache: Arc::new(cache),
        strict: args.strict,
    };
    let admission = Admission::new(entries, &args.allow_target)?;
    let prober = Arc::new(Prober::new(
        admission,
        profiles,
        checker,
        args.check_timeout,
        args.job_stuck_after,
        args.max_probes,
    ));
    crate::signals::install_with("serving no more probes; the probes in flight finish and log out")?;
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        rftune_engine::interrupt::wait().await;
        let _ = stop.send(true);
    });
    let listener = listen(
        args.listen,
        "GET /probe?target=HOST&profile=NAME, GET /metrics, GET /healthz",
    )
    .await?;
    axum::serve(listener, probe_router(prober))
        .with_graceful_shutdown(async move {
            let _ = stopped.wait_for(|s| *s).await;
        })
        .await
        .context("serving probes")?;
    note!("rftune: exporter stopped");
    Ok(Exit::Success)
}

/// `/probe`, `/metrics` (the exporter's own), `/healthz` and an index, in multi-target mode.
fn probe_router(prober: Arc<Prober>) -> axum::Router {
    use axum::extract::{Query, State};
    use std::collections::HashMap;
    async fn probe(
        State(prober): State<Arc<Prober>>,
        headers: axum::http::HeaderMap,
        Query(params): Query<HashMap<String, String>>,
    ) -> axum::response::Response {
        let scrape = headers
            .get("X-Prometheus-Scrape-Timeout-Seconds")
            .and_then(|v| v.to_str().ok());
        let deadline = prober.deadline(scrape);
        let target = params.get("target").map_or("", String::as_str);
        match prober
            .probe(target, params.get("profile").map(String::as_str), deadline)
            .await
        {
            Ok(text) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
            Err(refused) => {
                tracing::info!("probe of {target:?} refused: {}", refused.message);
                let status = StatusCode::from_u16(refused.status).unwrap_or(StatusCode::BAD_REQUEST);
                (status, format!("{}\n", refused.message)).into_response()
            }
        }
    }
    async fn metrics(State(prober): State<Arc<Prober>>) -> axum::response::Response {
        use host_bench::exposition::{Exposition, MetricType};
        let mut e = Exposition::default();
        e.family(
            "rftune_exporter_build_info",
            MetricType::Gauge,
            "The rftune exporter's version, as a label; always 1.",
        )
        .sample(&[("version", env!("CARGO_PKG_VERSION"))], 1.0);
        #[allow(clippy::cast_precision_loss)]
        let in_flight = prober.in_flight() as f64;
        e.family(
            "rftune_exporter_probes_in_flight",
            MetricType::Gauge,
            "Probes being checked now (at most --max-probes).",
        )
        .sample(&[], in_flight);
        ([(header::CONTENT_TYPE, CONTENT_TYPE)], e.finish()).into_response()
    }
    async fn healthz(State(prober): State<Arc<Prober>>) -> axum::Json<serde_json::Value> {
        axum::Json(serde_json::json!({
            "status": "ok",
            "mode": "probe",
            "profiles": prober.profile_names(),
            "probes_in_flight": prober.in_flight(),
        }))
    }
    axum::Router::new()
        .route("/probe", axum::routing::get(probe))
        .route("/metrics", axum::routing::get(metrics))
        .route("/healthz", axum::routing::get(healthz))
        .route(
            "/",
            axum::routing::get(|| async {
                "rftune exporter (multi-target): GET /probe?target=HOST&profile=NAME, GET /metrics, GET /healthz\n"
            }),
        )
        .with_state(prober)
}

/// `--once`'s exit code, by the fleet rule: 1 if any check failed (or the profile cannot be
/// applied to a host as written), else 2 if any host drifts or is unverified, else 0.
fn outcome(board: &Board) -> Result<Exit> {
    let by_status = board.by_status();
    let count = |s: HostStatus| by_status.iter().find(|(t, _)| *t == s).map_or(0, |(_, n)| *n);
    let failed = count(HostStatus::Error) + count(HostStatus::Unknown);
    if failed > 0 {
        bail!(
            "{failed} of {} host(s) failed their check (rftune_check_failed says why; rftune diff shows the details)",
            board.hosts.len()
        );
    }
    Ok(if count(HostStatus::Drift) + count(HostStatus::Unverified) > 0 {
        Exit::Drift
    } else {
        Exit::Success
    })
}

/// `/metrics`, `/healthz`, and an index at `/`.
fn router(board: SharedBoard) -> axum::Router {
    let metrics = {
        let board = board.clone();
        move || {
            let text = watch::metrics::render(&board.lock());
            async move { ([(header::CONTENT_TYPE, CONTENT_TYPE)], text) }
        }
    };
    let healthz = move || {
        let body = {
            let b = board.lock();
            serde_json::json!({
                "status": "ok",
                "profile": b.profile,
                "hosts": b.hosts.len(),
                "checked": b.checked(),
                "first_round_complete": b.all_checked(),
            })
        };
        async move { axum::Json(body) }
    };
    axum::Router::new()
        .route("/metrics", axum::routing::get(metrics))
        .route("/healthz", axum::routing::get(healthz))
        .route(
            "/",
            axum::routing::get(|| async {
                (
                    StatusCode::OK,
                    "rftune exporter: GET /metrics (Prometheus text format), GET /healthz\n",
                )
                    .into_response()
            }),
        )
}
