//! Sizes as people write them and as rftune prints them: bytes go to fio, never unit text.

use crate::{Error, Result};

/// The suite's largest block (128k): a smaller target cannot hold one I/O.
pub const MIN_SIZE: u64 = 128 * 1024;

/// Parses a target size into bytes as [`parse_bytes`] does, refusing sizes below [`MIN_SIZE`].
pub fn parse_size(text: &str) -> Result<u64> {
    let bytes = parse_bytes(text)?;
    if bytes < MIN_SIZE {
        return Err(Error::BadInput(format!(
            "size {text:?} is smaller than the suite's 128K blocks; give at least 128K"
        )));
    }
    Ok(bytes)
}

/// Parses a size into bytes: a whole number of bytes, or a whole number with K, M, G, T or P
/// (powers of 1024, as fio reads them by default) or KiB, MiB, GiB, TiB, PiB; units in any
/// case. fio is then given the bytes, never the text: with its default `kb_base` fio reads
/// `4GiB` as 4×10⁹ and `4GB` as 4×2³⁰, so decimal units (KB, GB, TB) are refused as ambiguous.
/// Sizes beyond 2⁶⁴ bytes are refused too.
pub fn parse_bytes(text: &str) -> Result<u64> {
    let t = text.trim();
    let units =
        "use K, M, G, T or P (powers of 1024, as fio reads them), KiB, MiB, GiB, TiB, PiB, or a number of bytes";
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    if digits.is_empty() {
        return Err(Error::BadInput(format!(
            "size {text:?} does not start with a whole number; {units}, e.g. 4G"
        )));
    }
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KIB" => 10,
        "M" | "MIB" => 20,
        "G" | "GIB" => 30,
        "T" | "TIB" => 40,
        "P" | "PIB" => 50,
        "KB" | "MB" | "GB" | "TB" | "PB" => {
            return Err(Error::BadInput(format!(
                "size {text:?}: {unit:?} is ambiguous (fio reads it as a power of 1024, drives are sold in powers of 1000); {units}"
            )));
        }
        _ => {
            return Err(Error::BadInput(format!(
                "size {text:?}: unknown unit {unit:?}; {units}"
            )));
        }
    };
    let too_large = || Error::BadInput(format!("size {text:?} is too large: more than 2^64 bytes"));
    let value: u64 = digits.parse().map_err(|_| too_large())?;
    value.checked_mul(1u64 << shift).ok_or_else(too_large)
}

/// `bytes` in the largest binary unit that divides it exactly: `4 GiB`, `1536 KiB`, `1000 B`.
pub fn format_size(bytes: u64) -> String {
    ["PiB", "TiB", "GiB", "MiB", "KiB"]
        .iter()
        .zip([50, 40, 30, 20, 10])
        .find(|&(_, shift)| bytes != 0 && bytes.trailing_zeros() >= shift)
        .map_or_else(
            || format!("{bytes} B"),
            |(unit, shift)| format!("{} {unit}", bytes >> shift),
        )
}

/// A byte count for people, to one decimal: `76.0 GiB`, `512 B`.
pub fn approx_size(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_fio_units_and_refuse_unknown_units_and_overflow() {
        assert_eq!(parse_size("4G").unwrap(), 4 << 30);
        assert_eq!(parse_size("512m").unwrap(), 512 << 20);
        assert_eq!(parse_size(" 2TiB ").unwrap(), 2 << 40);
        assert_eq!(parse_size("1P").unwrap(), 1 << 50);
        assert_eq!(parse_size("131072").unwrap(), MIN_SIZE);
        assert_eq!(parse_size("16383P").unwrap(), 16383 << 50);
        let err = |s: &str| parse_size(s).unwrap_err().to_string();
        assert!(err("64Q").contains("unknown unit \"Q\""), "{}", err("64Q"));
        assert!(err("4GB").contains("ambiguous"), "{}", err("4GB"));
        assert!(err("16384P").contains("too large"), "{}", err("16384P"));
        assert!(err("99999999999999999999").contains("too large"));
        assert!(
            err("1.5G").contains("unknown unit"),
            "fractions are refused: {}",
            err("1.5G")
        );
        assert!(err("G").contains("whole number"));
        assert!(err("").contains("whole number"));
        assert!(err("4K").contains("128K"));
        assert_eq!((parse_bytes("3K").unwrap(), parse_bytes("0").unwrap()), (3072, 0));
        assert!(parse_bytes("3KB").is_err());
        assert_eq!(format_size(4 << 30), "4 GiB");
        assert_eq!(format_size(1536 << 10), "1536 KiB");
        assert_eq!(format_size(1000), "1000 B");
        assert_eq!(
            (approx_size(24_683_772 << 10), approx_size(512)),
            ("23.5 GiB".into(), "512 B".into())
        );
    }
}
