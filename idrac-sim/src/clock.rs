//! Wall-clock times as an iDRAC writes and reads them: `2024-08-06T13:48:09-05:00` (ISO 8601
//! with the iDRAC's offset; the emulator's offset is `+00:00`), the offset-less form DellJob
//! times use (`2024-08-06T13:48:09`), and the `YYYYMMDDHHMMSS` form of
//! `DellJobService.SetupJobQueue`. Pure functions, no IO.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (negative before it).
fn epoch_seconds(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

/// The UTC calendar date of `t`: (year, month, day).
pub fn ymd(t: SystemTime) -> (i32, u8, u8) {
    let (y, m, d) = civil_from_days(epoch_seconds(t).div_euclid(86_400));
    (
        i32::try_from(y).unwrap_or(i32::MAX),
        u8::try_from(m).unwrap_or(1),
        u8::try_from(d).unwrap_or(1),
    )
}

/// The wall-clock time of `at`.
pub fn wall(at: Instant) -> SystemTime {
    let now = Instant::now();
    let wall_now = SystemTime::now();
    if at <= now {
        wall_now.checked_sub(now - at).unwrap_or(wall_now)
    } else {
        wall_now.checked_add(at - now).unwrap_or(wall_now)
    }
}

/// `2024-08-06T13:48:09` (UTC, no offset), as DellJob times are written.
pub fn local(t: SystemTime) -> String {
    let s = epoch_seconds(t);
    let (y, m, d) = civil_from_days(s.div_euclid(86_400));
    let rem = s.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `Wed Feb  3 06:53:31 2021` (UTC), as a configuration export's `TimeStamp` is written.
pub fn asctime(t: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let s = epoch_seconds(t);
    let days = s.div_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let rem = s.rem_euclid(86_400);
    // 1970-01-01 was a Thursday.
    let weekday = DAYS[usize::try_from((days + 4).rem_euclid(7)).unwrap_or(0)];
    let month = MONTHS[usize::try_from(m - 1).unwrap_or(0).min(11)];
    format!(
        "{weekday} {month} {d:>2} {:02}:{:02}:{:02} {y}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `2024-08-06T13:48:09+00:00`, as the Manager's `DateTime` and DMTF job times are written.
pub fn with_offset(t: SystemTime) -> String {
    format!("{}+00:00", local(t))
}

/// `YYYY-MM-DDTHH:MM:SS` followed by `Z`, `±HH:MM` or nothing (read as UTC).
pub fn parse_iso8601(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let b = text.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (y, mo, d, h, mi, s) = (
        num(0..4)?,
        num(5..7)?,
        num(8..10)?,
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
    );
    let offset = match text.get(19..)? {
        "" | "Z" | "z" => 0,
        tz => {
            let sign = match tz.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (oh, om) = tz.get(1..)?.split_once(':')?;
            let (oh, om) = (oh.parse::<i64>().ok()?, om.parse::<i64>().ok()?);
            if oh > 23 || om > 59 {
                return None;
            }
            sign * (oh * 3600 + om * 60)
        }
    };
    from_parts(y, mo, d, h, mi, s, offset)
}

/// `YYYYMMDDHHMMSS` (UTC), the `StartTimeInterval` of `DellJobService.SetupJobQueue`.
pub fn parse_compact(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    if text.len() != 14 || !text.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    from_parts(
        num(0..4)?,
        num(4..6)?,
        num(6..8)?,
        num(8..10)?,
        num(10..12)?,
        num(12..14)?,
        0,
    )
}

fn from_parts(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, offset: i64) -> Option<SystemTime> {
    let days_in_month = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => return None,
    };
    if !(1..=days_in_month).contains(&d) || h > 23 || mi > 59 || s > 60 || h < 0 || mi < 0 || s < 0 {
        return None;
    }
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset;
    let magnitude = Duration::from_secs(secs.unsigned_abs());
    if secs >= 0 {
        UNIX_EPOCH.checked_add(magnitude)
    } else {
        UNIX_EPOCH.checked_sub(magnitude)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn times_are_written_as_idracs_write_them() {
        assert_eq!(local(at(0)), "1970-01-01T00:00:00");
        // 2024-08-06T13:48:09Z, a job time from a real R750 (read there with -05:00).
        assert_eq!(local(at(1_722_952_089)), "2024-08-06T13:48:09");
        assert_eq!(with_offset(at(1_722_952_089)), "2024-08-06T13:48:09+00:00");
        assert_eq!(local(at(951_782_400)), "2000-02-29T00:00:00", "a leap day");
    }

    #[test]
    fn offsets_and_the_compact_form_parse_to_the_same_instant() {
        let t = at(1_722_952_089);
        assert_eq!(parse_iso8601("2024-08-06T13:48:09Z"), Some(t));
        assert_eq!(parse_iso8601("2024-08-06T13:48:09+00:00"), Some(t));
        assert_eq!(parse_iso8601("2024-08-06T08:48:09-05:00"), Some(t));
        assert_eq!(parse_iso8601("2024-08-06T13:48:09"), Some(t));
        assert_eq!(parse_compact("20240806134809"), Some(t));
        for round in [0, 951_782_400, 1_722_952_089, 4_102_444_800] {
            assert_eq!(parse_iso8601(&with_offset(at(round))), Some(at(round)));
        }
    }

    #[test]
    fn malformed_times_are_refused_not_panicked_on() {
        for bad in [
            "",
            "TIME_NOW",
            "2024-13-01T00:00:00",
            "2023-02-29T00:00:00",
            "2024-08-06T25:00:00",
            "2024-08-06T13:48:09+5",
            "2024-08-06T13:48:09*05:00",
            "2024-08-06 13:48",
            "２０２４-08-06T13:48:09",
        ] {
            assert_eq!(parse_iso8601(bad), None, "{bad}");
        }
        for bad in ["2024080613480", "2024O806134809", "20241306134809", "TIME_NOW"] {
            assert_eq!(parse_compact(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_instant_maps_to_the_wall_clock_either_side_of_now() {
        let now = Instant::now();
        let earlier = wall(now - Duration::from_secs(60));
        let later = wall(now + Duration::from_secs(60));
        let span = later.duration_since(earlier).unwrap();
        assert!((span.as_secs_f64() - 120.0).abs() < 1.0, "{span:?}");
    }
}
