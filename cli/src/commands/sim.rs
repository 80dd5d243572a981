//! `rftune sim`: serve emulated BMCs (iDRACs, iLOs) until interrupted.

use crate::Exit;
use crate::args::SimArgs;
use crate::args::sim::Hosts;
use anyhow::{Context, Result};
use idrac_sim::{Fleet, ModelSource, SimConfig};
use std::io::Write;

/// Translates the arguments into an emulator configuration: one model, or a mixed fleet.
pub fn config(args: &SimArgs) -> Result<SimConfig> {
    let model = |name: &str| {
        name.parse::<ModelSource>()
            .unwrap_or_else(|e: std::convert::Infallible| match e {})
    };
    let (first, hosts, more) = match &args.hosts {
        Hosts::Count(n) => (
            match &args.fixture {
                Some(dir) => ModelSource::Dir(dir.clone()),
                None => model(&args.model),
            },
            *n,
            Vec::new(),
        ),
        Hosts::Mix(_) if args.fixture.is_some() => {
            anyhow::bail!(
                "--hosts MODEL=N,... names every model itself: give the directory there (DIR=N) instead of --fixture"
            )
        }
        Hosts::Mix(groups) => {
            let mut all = groups.iter().map(|(m, n)| (model(m), *n));
            let Some((first, n)) = all.next() else {
                anyhow::bail!("--hosts names no model");
            };
            (first, n, all.collect())
        }
    };
    Ok(SimConfig {
        model: first,
        hosts,
        more,
        listen: args.listen,
        tls: !args.http,
        boot_time: args.boot_time,
        latency: args.latency,
        faults: args.faults.clone(),
        seed: args.seed,
        username: args.username.clone(),
        password: args.password.clone(),
        session_timeout: args.session_timeout,
        session_limit: args.session_limit,
        graceful_os: !args.os_ignores_graceful,
        log_requests: args.log_requests,
        lockdown: args.lockdown,
    })
}

/// Runs `rftune sim`.
pub async fn run(args: SimArgs) -> Result<Exit> {
    if !args.listen.ip().is_loopback() {
        tracing::warn!(
            "serving emulated iDRACs on {} — not a loopback address; anyone who can reach it can log in as {}",
            args.listen.ip(),
            args.username
        );
    }
    let fleet = Fleet::start(config(&args)?).await.map_err(|e| {
        let too_many = matches!(&e, idrac_sim::SimError::Bind { source, .. } if source.raw_os_error() == Some(24));
        let what = match &args.fixture {
            Some(dir) => format!(
                "starting {} emulated host(s) from {}",
                args.hosts.total(),
                dir.display()
            ),
            None => format!("starting {} emulated host(s)", args.hosts.total()),
        };
        let e = anyhow::Error::new(e).context(what);
        if too_many {
            e.context("too many open files: raise the limit with `ulimit -n`")
        } else {
            e
        }
    })?;
    if let Some(path) = &args.write_inventory {
        std::fs::write(path, fleet.inventory_toml())
            .with_context(|| format!("writing inventory {}", path.display()))?;
    }
    {
        let mut out = std::io::stdout().lock();
        for line in fleet.listen_lines() {
            writeln!(out, "{line}")?;
        }
        out.flush()?;
    }
    serve_until_stopped(&fleet, args.exit_after).await;
    Ok(Exit::Success)
}

async fn serve_until_stopped(_fleet: &Fleet, exit_after: Option<std::time::Duration>) {
    let stop = async {
        match exit_after {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = stop => {}
    }
}
