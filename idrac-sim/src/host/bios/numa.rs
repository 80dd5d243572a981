//! What the BIOS does at POST with a NUMA-nodes-per-socket setting the memory population cannot
//! take. Dell's Rome and Milan installation manuals ("Memory interleaving") say: NPS 4
//! interleaves pairs of channels and takes any population, NPS 2 needs the four channels of
//! each half alike, NPS 0 all sixteen channels of the system; an NPS the population cannot take
//! is replaced by the default NPS 1, and the Lifecycle log gets UEFI0391 ("Memory configuration
//! does not match the enabled NUMA node Per Socket (NPS) setting", in real iDRACs' message
//! registry). DIMMs are filled one per channel first (Dell's population order), so 8 or 16 DIMMs
//! on a socket fill every channel alike, and 4 cannot give both halves their four channels; with
//! 12 it depends on the slots, which the emulator does not model, so only NPS 0 falls back then.
//!
//! **Assumed** for the 12-channel (EPYC 9004) and 6-channel (EPYC 8004) DDR5 sockets, whose
//! rules no manual here gives: NPS 2 and 4 need every channel alike (DIMMs per socket a whole
//! multiple of the channels), NPS 0 both sockets alike; otherwise the same fallback.

/// Channels per socket of the CPU named `cpu_model`, where the emulator models its rules.
fn channels(cpu_model: &str) -> Option<usize> {
    let model = cpu_model
        .split_whitespace()
        .find(|w| w.len() >= 4 && w[..4].chars().all(|c| c.is_ascii_digit()))?;
    match (model.as_bytes()[0], model.as_bytes()[3]) {
        // EPYC 7xx2 (Rome), 7xx3 (Milan): DDR4, eight channels.
        (b'7', b'2' | b'3') => Some(8),
        // EPYC 9xx4 (Genoa, Bergamo): twelve DDR5 channels.
        (b'9', b'4') => Some(12),
        // EPYC 8xx4 (Siena): six.
        (b'8', b'4') => Some(6),
        _ => None,
    }
}

/// The value NPS `written` reads back as after POST on a host with `cpu_model` and these
/// populated DIMMs per socket: `None` when the BIOS keeps it, `Some("1")` when it falls back.
pub(crate) fn after_post(written: &str, cpu_model: &str, dimms_per_socket: &[usize]) -> Option<&'static str> {
    let channels = channels(cpu_model)?;
    if dimms_per_socket.is_empty() || written == "1" {
        return None;
    }
    let alike = |n: usize| n > 0 && n.is_multiple_of(channels);
    let sockets_differ = dimms_per_socket.windows(2).any(|w| w[0] != w[1]);
    let falls_back = match (written, channels) {
        // Rome and Milan: Dell's rules (12 DIMMs depend on the slots: kept).
        ("2", 8) => dimms_per_socket.iter().any(|n| !alike(*n) && *n != 12),
        ("4", 8) => false,
        ("2" | "4", _) => dimms_per_socket.iter().any(|n| !alike(*n)),
        ("0", _) => dimms_per_socket.iter().any(|n| !alike(*n)) || sockets_differ,
        _ => false,
    };
    falls_back.then_some("1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_npss_the_population_cannot_take_falls_back_to_1() {
        let milan = "AMD EPYC 7763 64-Core Processor";
        assert_eq!(after_post("2", milan, &[8, 8]), None);
        assert_eq!(
            after_post("2", milan, &[4, 4]),
            Some("1"),
            "four DIMMs fill no half's four channels"
        );
        assert_eq!(after_post("2", milan, &[8, 7]), Some("1"));
        assert_eq!(after_post("4", milan, &[8, 7]), None, "NPS 4 takes any population");
        assert_eq!(
            after_post("0", milan, &[8, 16]),
            Some("1"),
            "NPS 0 needs both sockets alike"
        );
        assert_eq!(after_post("0", milan, &[16, 16]), None);
        assert_eq!(
            after_post("2", milan, &[12, 12]),
            None,
            "depends on the slots: not modelled"
        );
        let genoa = "AMD EPYC 9654 96-Core Processor";
        assert_eq!(after_post("4", genoa, &[12, 12]), None);
        assert_eq!(
            after_post("4", genoa, &[12, 11]),
            Some("1"),
            "assumed: every channel alike"
        );
        assert_eq!(after_post("4", "AMD EPYC 8534P 64-Core Processor", &[6]), None);
        assert_eq!(after_post("2", milan, &[]), None, "no DIMMs recorded: nothing judged");
        assert_eq!(after_post("2", "Intel(R) Xeon(R) Gold 6338", &[3]), None);
    }
}
