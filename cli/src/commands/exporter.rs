//! `rftune exporter`: the engine's [`watch`] loop over an inventory, its board served as
//! Prometheus metrics on `GET /metrics` with `GET /healthz`, until SIGTERM or Ctrl-C; or, with
//! `--once`, one check per host printed on stdout.

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
use rftune_engine::watch::{self, Board, HostStatus, Schedule, SharedBoard};
use std::io::Write as _;
use std::sync::Arc;

/// Runs `rftune exporter`.
pub async fn run(args: &ExporterArgs, dirs: &StateDirs) -> Result<Exit> {
    if args.interval.is_zero() || args.check_timeout.is_zero() {
        bail!("--interval and --check-timeout must be longer than 0s");
    }
    let chosen = Arc::new(LoadedProfile::load(&args.profile)?);
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
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let addr = listener.local_addr().context("reading the address listened on")?;
    // Scripts and tests wait for this line (as for `rftune sim`'s).
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "rftune-exporter: listening http://{addr} (GET /metrics, GET /healthz)"
    )
    .and_then(|()| out.flush())
    .context("writing to stdout")?;
    drop(out);
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
