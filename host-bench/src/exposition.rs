//! The Prometheus text exposition format, version 0.0.4: what `GET /metrics` serves.
//!
//! A family is written whole (`# HELP`, `# TYPE`, then its samples) before the next begins, as
//! the format requires; label values and help text are escaped; values print in the shortest
//! form that reads back exactly (`NaN`, `+Inf`, `-Inf` for the non-finite). The order is the
//! caller's, so the same state always gives the same text. Written here rather than taken from
//! the `prometheus-client` crate: the exporter serves a snapshot of gauges it rebuilds on each
//! scrape, which needs none of that crate's registry, atomics or derive macros.

use std::fmt::Write as _;

/// The `Content-Type` of the format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metric family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricType {
    /// A value that goes up and down.
    Gauge,
    /// A count that only goes up (reset when the process restarts); its name ends in `_total`.
    Counter,
}

impl MetricType {
    fn as_str(self) -> &'static str {
        match self {
            Self::Gauge => "gauge",
            Self::Counter => "counter",
        }
    }
}

/// Text being written, one family after another.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    /// Starts the family `name` with its help and type lines; its samples follow through the
    /// returned [`Family`].
    pub fn family(&mut self, name: &'static str, kind: MetricType, help: &str) -> Family<'_> {
        debug_assert!(valid_name(name), "metric name {name:?}");
        debug_assert!(
            kind != MetricType::Counter || name.ends_with("_total"),
            "counter {name} must end in _total"
        );
        let _ = writeln!(self.out, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.out, "# TYPE {name} {}", kind.as_str());
        Family {
            out: &mut self.out,
            name,
        }
    }

    /// The text.
    pub fn finish(self) -> String {
        self.out
    }
}

/// One family's samples.
#[derive(Debug)]
pub struct Family<'a> {
    out: &'a mut String,
    name: &'static str,
}

impl Family<'_> {
    /// One sample: `name{label="value",...} value`.
    pub fn sample(&mut self, labels: &[(&str, &str)], value: f64) -> &mut Self {
        self.out.push_str(self.name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (name, value)) in labels.iter().enumerate() {
                debug_assert!(valid_label_name(name), "label name {name:?}");
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{name}=\"{}\"", escape_label_value(value));
            }
            self.out.push('}');
        }
        self.out.push(' ');
        self.out.push_str(&format_value(value));
        self.out.push('\n');
        self
    }
}

/// A sample value: integers without a fraction, other numbers in Rust's shortest round-trip
/// form, and the format's spellings of NaN and the infinities.
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else if v == 0.0 {
        // Also -0.0, which would print as "-0".
        "0".to_owned()
    } else {
        // `{}` prints 3.0 as "3" and 0.1 as "0.1": the shortest text that parses back exactly.
        format!("{v}")
    }
}

/// A label value as the format quotes it: backslash, double quote and line feed escaped.
pub fn escape_label_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Help text: backslash and line feed escaped (quotes stay as they are).
fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with the reserved `__`.
fn valid_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    !name.starts_with("__")
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_has_help_and_type_before_its_samples() {
        let mut e = Exposition::default();
        e.family("rftune_x", MetricType::Gauge, "An example.")
            .sample(&[("host", "a")], 1.0)
            .sample(&[("host", "b")], 2.5);
        e.family("rftune_checks_total", MetricType::Counter, "Checks.")
            .sample(&[], 7.0);
        assert_eq!(
            e.finish(),
            "# HELP rftune_x An example.\n# TYPE rftune_x gauge\nrftune_x{host=\"a\"} 1\nrftune_x{host=\"b\"} 2.5\n\
             # HELP rftune_checks_total Checks.\n# TYPE rftune_checks_total counter\nrftune_checks_total 7\n"
        );
    }

    #[test]
    fn label_values_escape_backslash_quote_and_newline() {
        let mut e = Exposition::default();
        e.family(
            "rftune_x",
            MetricType::Gauge,
            "Help with \\ and\na newline, \"quoted\".",
        )
        .sample(&[("host", "r\\1 \"a\"\nb"), ("profile", "perf")], 1.0);
        let text = e.finish();
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "# HELP rftune_x Help with \\\\ and\\na newline, \"quoted\".",
                "# TYPE rftune_x gauge",
                "rftune_x{host=\"r\\\\1 \\\"a\\\"\\nb\",profile=\"perf\"} 1",
            ]
        );
    }

    #[test]
    fn values_print_exactly_and_non_finite_ones_as_the_format_spells_them() {
        assert_eq!(format_value(3.0), "3");
        assert_eq!(format_value(-0.0), "0");
        assert_eq!(format_value(0.1), "0.1");
        assert_eq!(format_value(1_764_551_000.125), "1764551000.125");
        assert_eq!(format_value(412.5), "412.5");
        assert_eq!(format_value(1e21), "1000000000000000000000");
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
        for v in [0.1, 1.0 / 3.0, 123_456.789, 2e-9] {
            assert_eq!(format_value(v).parse::<f64>().unwrap(), v);
        }
    }

    #[test]
    fn names_follow_the_format() {
        assert!(valid_name("rftune_bios_drift_attributes"));
        assert!(valid_name("ns:rule"));
        assert!(!valid_name("9lives"));
        assert!(!valid_name("rftune-x"));
        assert!(!valid_name(""));
        assert!(valid_label_name("host"));
        assert!(!valid_label_name("__name__"));
        assert!(!valid_label_name("bios.version"));
    }
}
