//! The engine's one stable hash: 64-bit FNV-1a, fixed integer arithmetic, so a value never
//! changes between platforms, Rust versions or runs (unlike `std`'s `DefaultHasher`). Shard
//! membership (`fleet::Shard`) depends on it, and so may what a program built on the engine
//! derives from host names (per-host seeds).

/// 64-bit FNV-1a of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::fnv1a64;

    #[test]
    fn the_hash_is_pinned() {
        // Published FNV-1a test vectors: the hash must never change under us.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
