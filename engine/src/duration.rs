//! The one duration grammar of rftune, on the command line and in files alike:
//! one or more `<number><unit>` parts, units `ms`, `s`, `m` (or `min`) and `h`, as in `500ms`,
//! `30s`, `2.5m`, `1h30m`, `1h 30m`.

use std::time::Duration;

/// Parses a duration; the error says what is expected.
pub fn parse(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err("empty duration: expected e.g. 500ms, 30s, 2m, 1h30m".to_owned());
    }
    let mut rest = s;
    let mut seconds = 0.0_f64;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_end == rest.len() {
            return Err(format!(
                "invalid duration {s:?}: give a unit, e.g. {rest}s for seconds or {rest}m for minutes (units: ms, s, m, h)"
            ));
        }
        let value: f64 = rest[..number_end]
            .parse()
            .map_err(|_| format!("invalid duration {s:?}: expected e.g. 500ms, 30s, 2m, 1h30m"))?;
        let after = &rest[number_end..];
        let unit_end = after.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(after.len());
        let factor = match &after[..unit_end] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            _ => return Err(format!("invalid duration unit in {s:?}: use ms, s, m or h")),
        };
        seconds += value * factor;
        rest = after[unit_end..].trim_start();
    }
    if !seconds.is_finite() || !(0.0..=1e12).contains(&seconds) {
        return Err(format!("invalid duration {s:?}"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_and_compound_durations_parse() {
        let cases = [
            ("500ms", 500),
            ("30s", 30_000),
            ("2.5m", 150_000),
            ("2min", 120_000),
            ("1h30m", 5_400_000),
            (" 1h 30m ", 5_400_000),
            ("0s", 0),
        ];
        for (text, ms) in cases {
            assert_eq!(parse(text), Ok(Duration::from_millis(ms)), "{text}");
        }
    }

    #[test]
    fn bad_durations_say_what_is_expected() {
        assert!(parse("30").unwrap_err().contains("give a unit"));
        assert!(parse("").unwrap_err().contains("empty duration"));
        assert!(parse("5 parsecs").unwrap_err().contains("use ms, s, m or h"));
        assert!(parse("1h30").unwrap_err().contains("give a unit"));
        assert!(parse("..s").unwrap_err().contains("expected e.g."));
    }
}
