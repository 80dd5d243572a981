//! All output to stdout: aligned tables for people, JSON documents for scripts, and progress
//! on stderr. Writes go through `io::Write` so a closed pipe ends the program quietly instead
//! of panicking. The text forms of the larger documents have modules of their own.

pub mod action;
pub mod apply;
pub mod decisions;
pub mod diff;
pub mod group;
pub mod inventory;
pub mod plan;
pub mod scp;

use anyhow::Result;
use serde::Serialize;
use std::io::Write;

/// Prints `value` as pretty JSON followed by a newline.
pub fn json<T: Serialize>(value: &T) -> Result<()> {
    // Buffered: stdout alone is line-buffered, a write per line of the document.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

/// A fleet's `-o json` document written while its hosts finish, byte for byte what [`json`]
/// prints for the whole document: the fields before the host list, each entry of the list in
/// inventory order as soon as every entry before it is in (the few that finish early wait,
/// serialised), then the fields after it. A fleet's entries are then never all held at once.
/// After a failed write (a closed pipe) the rest is dropped and [`JsonDocument::finish`]
/// returns the error, as with [`JsonLines`].
#[derive(Debug)]
pub struct JsonDocument<W: Write = std::io::Stdout> {
    out: std::io::BufWriter<W>,
    /// `\n  "hosts": []`: where the list sits in the document's pretty text.
    marker: String,
    next: usize,
    waiting: std::collections::BTreeMap<usize, Vec<u8>>,
    error: Option<anyhow::Error>,
}

impl JsonDocument {
    /// Writes `head`, the document with `list` (a top-level field) empty, up to that list, on
    /// stdout.
    pub fn start<T: Serialize>(head: &T, list: &str) -> Result<Self> {
        Self::start_on(std::io::stdout(), head, list)
    }
}

impl<W: Write> JsonDocument<W> {
    /// [`JsonDocument::start`], writing on `out`.
    pub fn start_on<T: Serialize>(out: W, head: &T, list: &str) -> Result<Self> {
        let marker = format!("\n  \"{list}\": []");
        let text = serde_json::to_string_pretty(head)?;
        let at = text
            .find(&marker)
            .ok_or_else(|| anyhow::anyhow!("the document has no top-level list {list}"))?;
        let mut doc = Self {
            out: std::io::BufWriter::with_capacity(1 << 16, out),
            next: 0,
            waiting: std::collections::BTreeMap::new(),
            error: None,
            marker,
        };
        let opening = &doc.marker[..doc.marker.len() - 1];
        let written = doc
            .out
            .write_all(&text.as_bytes()[..at])
            .and_then(|()| doc.out.write_all(opening.as_bytes()));
        doc.error = written.err().map(Into::into);
        Ok(doc)
    }

    /// The list's entry at `position` (0, 1, 2, … each once, in any order).
    pub fn entry<T: Serialize>(&mut self, position: usize, value: &T) {
        if self.error.is_some() {
            return;
        }
        match serde_json::to_vec_pretty(value) {
            Ok(bytes) => self.waiting.insert(position, bytes),
            Err(e) => {
                self.error = Some(e.into());
                return;
            }
        };
        while let Some(bytes) = self.waiting.remove(&self.next) {
            self.write_entry(&bytes);
            self.next += 1;
        }
    }

    /// One entry, indented as the second level of the document.
    fn write_entry(&mut self, bytes: &[u8]) {
        let separator: &[u8] = if self.next == 0 { b"\n    " } else { b",\n    " };
        let mut written = self.out.write_all(separator);
        for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
            if i > 0 {
                written = written.and_then(|()| self.out.write_all(b"\n    "));
            }
            written = written.and_then(|()| self.out.write_all(line));
        }
        if let Err(e) = written {
            self.error.get_or_insert(e.into());
        }
    }

    /// Writes the rest of `tail` (the whole document with the list empty) after the list, and
    /// hands back the writer.
    pub fn finish<T: Serialize>(mut self, tail: &T) -> Result<W> {
        // Every position is handed over; should one be missing, the rest still go out in order.
        for (_, bytes) in std::mem::take(&mut self.waiting) {
            if self.error.is_none() {
                self.write_entry(&bytes);
                self.next += 1;
            }
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        let text = serde_json::to_string_pretty(tail)?;
        let at = text
            .find(&self.marker)
            .ok_or_else(|| anyhow::anyhow!("the document's list moved"))?;
        let closing: &[u8] = if self.next == 0 { b"]" } else { b"\n  ]" };
        self.out.write_all(closing)?;
        self.out.write_all(&text.as_bytes()[at + self.marker.len()..])?;
        writeln!(self.out)?;
        let mut out = self.out.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        out.flush()?;
        Ok(out)
    }
}

/// `-o jsonl`: one compact JSON object per line, each flushed as it is written so a reader
/// sees every host as it finishes. After a failed write (a closed pipe) the rest are dropped
/// and [`JsonLines::finish`] returns the error, so a long run is never cut short by its reader.
#[derive(Debug, Default)]
pub struct JsonLines {
    error: Option<anyhow::Error>,
}

impl JsonLines {
    /// Writes one line.
    pub fn line<T: Serialize>(&mut self, value: &T) {
        if self.error.is_some() {
            return;
        }
        // One write per line: stdout alone would write whenever its small buffer fills.
        let written = serde_json::to_vec(value)
            .map_err(anyhow::Error::from)
            .and_then(|mut line| {
                line.push(b'\n');
                let mut out = std::io::stdout().lock();
                out.write_all(&line)?;
                Ok(out.flush()?)
            });
        self.error = written.err();
    }

    /// The first failed write, if any.
    pub fn finish(self) -> Result<()> {
        self.error.map_or(Ok(()), Err)
    }
}

/// One `-o jsonl` line of `rftune diff`, `apply` or `merge`: its schema
/// (`rftune.<kind>.host/v1` or `rftune.<kind>.summary/v1`), the profile, whether it is a dry run
/// (apply), the shard (the summary line of a `--shard K/N` run), then the fields of `body`: a
/// `hosts` entry of the command's document, or a [`SummaryBody`].
#[derive(Debug, Serialize)]
pub struct Line<'a, B> {
    /// The line's schema.
    pub schema: &'static str,
    /// The profile compared against or applied.
    pub profile: &'a str,
    /// Whether this is a dry run (apply only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// `K/N` when the run was given `--shard K/N` (summary lines only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<&'a str>,
    /// The rest of the line.
    #[serde(flatten)]
    pub body: B,
}

/// The body of the last `-o jsonl` line: the `summary` of the command's document (counting the
/// host lines before it) and, for apply, the audit log.
#[derive(Debug, Serialize)]
pub struct SummaryBody<'a, S> {
    /// Hosts by status.
    pub summary: &'a S,
    /// The audit log of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit_log: Option<&'a str>,
}

/// Prints text as is.
pub fn text(s: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(())
}

pub use rftune_engine::table::Table;

/// Whether the error is a closed stdout (e.g. `rftune ... | head`), which counts as success.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .and_then(|j| j.io_error_kind())
                .is_some_and(|k| k == std::io::ErrorKind::BrokenPipe)
    })
}

/// Progress on stderr for work that takes more than a moment: only on a terminal, and never
/// with `--output json` (scripts read stdout; a bar would corrupt logs).
#[derive(Debug)]
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    failed: std::sync::atomic::AtomicUsize,
    /// Without a terminal (cron, CI, `| tee`): one line per host per phase instead of a bar,
    /// each host's last line remembered so that a job polled every second prints once per state.
    lines: Option<std::sync::Mutex<std::collections::HashMap<String, String>>>,
    /// A fleet without a terminal: its hosts counted instead of a line each for reading.
    tally: Option<Tally>,
}

/// How far a fleet is, told without a terminal: every host reads, so a line per host saying
/// so is noise at fleet scale; a count every [`Tally::EVERY`] and when the fleet is done
/// replaces those lines. What a host goes through after reading (staging, rebooting, a job)
/// still has its line.
#[derive(Debug)]
struct Tally {
    what: String,
    total: usize,
    done: std::sync::atomic::AtomicUsize,
    started: std::time::Instant,
    /// When the count was last told, and whether the end is to be told: a host's reading went
    /// untold, or a count was told.
    told: std::sync::Mutex<(std::time::Instant, bool)>,
}

impl Tally {
    /// How often a fleet still running says how far it is.
    const EVERY: std::time::Duration = std::time::Duration::from_secs(10);

    /// Says `rftune: plan: 20/50 hosts done, 1 failed (12.3 s)` (a log record under
    /// `--log-format json`).
    fn tell(&self, failed: usize) {
        let done = self.done.load(std::sync::atomic::Ordering::Relaxed);
        let line = format!(
            "rftune: {}: {done}/{} hosts done, {failed} failed ({:.1} s)",
            self.what,
            self.total,
            self.started.elapsed().as_secs_f64()
        );
        if crate::logging::json() {
            tracing::info!(target: crate::logging::PROGRESS, done, total = self.total, failed, "{line}");
        } else {
            note!("{line}");
        }
    }
}

/// Lines instead of a bar when stderr is not a terminal, unless `-q`.
fn lines() -> Option<std::sync::Mutex<std::collections::HashMap<String, String>>> {
    (!std::io::IsTerminal::is_terminal(&std::io::stderr()) && !crate::logging::quiet()).then(Default::default)
}

impl Progress {
    /// A bar counting hosts; shown for fleets only.
    pub fn hosts(what: &str, total: usize, output: crate::args::OutputFormat) -> Self {
        let show = total > 1
            && output == crate::args::OutputFormat::Table
            && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let bar = show.then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} hosts {msg} ({elapsed})")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_prefix(what.to_owned());
            bar
        });
        let lines = lines();
        let tally = (total > 1 && lines.is_some()).then(|| Tally {
            what: what.to_owned(),
            total,
            done: std::sync::atomic::AtomicUsize::new(0),
            started: std::time::Instant::now(),
            told: std::sync::Mutex::new((std::time::Instant::now(), false)),
        });
        Self {
            bar,
            failed: std::sync::atomic::AtomicUsize::new(0),
            lines,
            tally,
        }
    }

    /// A spinner with a message, for one long wait (a job, a reboot).
    pub fn spinner(output: crate::args::OutputFormat) -> Self {
        let show = output == crate::args::OutputFormat::Table && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let bar = show.then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        Self {
            bar,
            failed: std::sync::atomic::AtomicUsize::new(0),
            lines: lines(),
            tally: None,
        }
    }

    /// Updates the message.
    pub fn message(&self, msg: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_message(msg.into());
        }
    }

    /// One host finished.
    pub fn host_done(&self, ok: bool) {
        use std::sync::atomic::Ordering;
        let failed = if ok {
            self.failed.load(Ordering::Relaxed)
        } else {
            self.failed.fetch_add(1, Ordering::Relaxed) + 1
        };
        if let Some(b) = &self.bar {
            if !ok {
                b.set_message(format!("({failed} failed)"));
            }
            b.inc(1);
        }
        if let Some(tally) = &self.tally {
            let done = tally.done.fetch_add(1, Ordering::Relaxed) + 1;
            let mut told = tally.told.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if done < tally.total && told.0.elapsed() >= Tally::EVERY {
                *told = (std::time::Instant::now(), true);
                tally.tell(failed);
            }
        }
    }

    /// Removes the bar; without a terminal, says how the fleet ended when its hosts' reading
    /// went untold or it was long enough to be counted on the way.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        if let Some(tally) = &self.tally {
            let told = tally.told.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if told.1 {
                tally.tell(self.failed.load(std::sync::atomic::Ordering::Relaxed));
            }
        }
    }
}

impl Progress {
    /// `host` entered `phase` (named `name` for logs): the bar's message, or without a terminal
    /// one line each time a host's phase changes (a log record under `--log-format json`).
    fn phase(&self, host: &str, phase: &dyn std::fmt::Display, name: &'static str) {
        match (&self.bar, &self.lines) {
            (Some(bar), _) => bar.set_message(format!("{host}: {phase}")),
            // A fleet's hosts all read: counted, not told one by one.
            (None, Some(_)) if name == "reading" && self.tally.is_some() => {
                if let Some(tally) = &self.tally {
                    tally.told.lock().unwrap_or_else(std::sync::PoisonError::into_inner).1 = true;
                }
            }
            (None, Some(last)) => {
                let text = phase.to_string();
                let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if last.get(host) == Some(&text) {
                    return;
                }
                if crate::logging::json() {
                    tracing::info!(target: crate::logging::PROGRESS, host = %host, phase = name, "{text}");
                } else {
                    note!("rftune: {host}: {text}");
                }
                last.insert(host.to_owned(), text);
            }
            (None, None) => {}
        }
    }
}

impl rftune_engine::observe::Observer for Progress {
    /// Phases update the bar's message; notices are printed on stderr whatever the output.
    fn event(&self, event: &rftune_engine::observe::Event) {
        use rftune_engine::observe::Event;
        match event {
            Event::Phase { host, phase } => self.phase(host, phase, phase.name()),
            Event::Notice { .. } => {
                let line = format!("rftune: {event}");
                match &self.bar {
                    Some(bar) => bar.suspend(|| note!("{line}")),
                    None => note!("{line}"),
                }
            }
        }
    }
}

/// An experiment's own phases show as the engine's do.
impl rftune_experiment::Observer for Progress {
    fn experiment(&self, event: &rftune_experiment::observe::Event) {
        self.phase(&event.host, &event.phase, event.phase.name());
    }
}

/// A benchmark's progress shows as the spinner's message.
impl host_bench::run::Progress for Progress {
    fn message(&self, text: &str) {
        Progress::message(self, text);
    }
}

/// An observer that prints only notices (on stderr) and no progress: for connecting, and for
/// commands without a progress display.
#[derive(Debug, Clone, Copy, Default)]
pub struct Notices;

impl rftune_engine::observe::Observer for Notices {
    fn event(&self, event: &rftune_engine::observe::Event) {
        if let rftune_engine::observe::Event::Notice { .. } = event {
            note!("rftune: {event}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Doc {
        schema: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        shard: Option<&'static str>,
        hosts: Vec<serde_json::Value>,
        summary: serde_json::Value,
    }

    fn streamed(doc: &Doc, order: &[usize]) -> String {
        let head = Doc {
            hosts: Vec::new(),
            summary: serde_json::Value::Null,
            ..*doc
        };
        let mut out = JsonDocument::start_on(Vec::new(), &head, "hosts").unwrap();
        for &i in order {
            out.entry(i, &doc.hosts[i]);
        }
        let tail = Doc {
            hosts: Vec::new(),
            summary: doc.summary.clone(),
            ..*doc
        };
        String::from_utf8(out.finish(&tail).unwrap()).unwrap()
    }

    #[test]
    fn a_document_written_while_its_entries_finish_is_the_one_written_whole() {
        let hosts = vec![
            serde_json::json!({"host": "a", "changes": [{"attribute": "X", "note": "line\nbreak \"hosts\": []"}], "counts": {}}),
            serde_json::json!({"host": "b", "changes": [], "violations": ["w"]}),
            serde_json::json!({"host": "c", "error": "unreachable"}),
        ];
        let doc = Doc {
            schema: "rftune.diff/v1",
            shard: Some("1/2"),
            hosts,
            summary: serde_json::json!({"hosts": 3, "drift": 1}),
        };
        let whole = format!("{}\n", serde_json::to_string_pretty(&doc).unwrap());
        for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
            assert_eq!(
                streamed(&doc, &order),
                whole,
                "entries finishing in the order {order:?}"
            );
        }
        let empty = Doc {
            schema: "rftune.diff/v1",
            shard: None,
            hosts: Vec::new(),
            summary: serde_json::json!({"hosts": 0}),
        };
        let whole = format!("{}\n", serde_json::to_string_pretty(&empty).unwrap());
        assert_eq!(streamed(&empty, &[]), whole);
    }
}
