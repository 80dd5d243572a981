//! A closed pipe (`rftune diff | head`, `2>&1 | head -4`) is neither a crash nor a success:
//! rftune ends as a tool killed by SIGPIPE reads to a shell (141), whatever it had found.

use super::{Run, sim, stderr};

/// Runs `args` with stdout (and with `merged` stderr too) on a pipe whose reading end is
/// already closed, as after `head` exits: every write to it fails.
async fn into_closed_pipe(args: &[&str], merged: bool) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut run = Run::new(args);
    if merged {
        run.cmd.stderr(writer.try_clone().unwrap());
    }
    run.cmd.stdout(writer);
    let child = run.cmd.spawn().unwrap();
    child.wait_with_output().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_drift_written_into_a_closed_pipe_exits_141_never_0_nor_a_panic() {
    // A plain-HTTP host: its warning is a log line on stderr, written before the result.
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    for output in ["table", "json", "jsonl"] {
        for merged in [false, true] {
            let out = into_closed_pipe(&["diff", "--bmc", url, "-p", "hpc", "-o", output], merged).await;
            assert_eq!(
                out.status.code(),
                Some(141),
                "-o {output}, stderr on the pipe too: {merged}; {}",
                stderr(&out)
            );
        }
    }
    // The same drift on an open pipe keeps its verdict.
    let out = Run::new(&["diff", "--bmc", url, "-p", "hpc"]).output().await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn quiet_means_only_errors_so_no_plain_http_warning() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&["inventory", "--bmc", url, "-q"]).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "-q prints only errors");
    let out = Run::new(&["inventory", "--bmc", url]).output().await;
    assert!(stderr(&out).contains("plain HTTP"), "{}", stderr(&out));
}
