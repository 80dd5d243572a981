//! BIOS settings against what the OS shows: the SMT, NUMA and idle-state facts a setting
//! decides, and the sentences that say where they disagree (an experiment records them with
//! every step, so a result measured under settings the OS did not get is flagged).

/// What an OS reports that BIOS settings decide; `None` (or no idle states) is not judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OsFacts<'a> {
    /// Whether SMT is active.
    pub smt_active: Option<bool>,
    /// NUMA nodes.
    pub numa_nodes: Option<usize>,
    /// Sockets.
    pub sockets: Option<usize>,
    /// CPU 0's idle state names (`POLL`, `C1`, `C2`, …).
    pub idle_states: &'a [String],
}

/// BIOS values in force that the OS contradicts, one sentence each:
/// `LogicalProc` against SMT, `NumaNodesPerSocket` × sockets against NUMA nodes (skipped when
/// `CcxAsNumaDomain` makes each L3 its own node), and `ProcCStates` against idle states deeper
/// than C1. What the OS does not report is not judged.
pub fn contradictions<'a>(bios: impl Fn(&str) -> Option<&'a str>, os: &OsFacts<'_>) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(lp), Some(smt)) = (bios("LogicalProc"), os.smt_active) {
        let bios_on = lp == "Enabled";
        if (lp == "Enabled" || lp == "Disabled") && bios_on != smt {
            out.push(format!(
                "LogicalProc is {lp} but the OS reports SMT {}",
                if smt { "active" } else { "inactive" }
            ));
        }
    }
    let l3_numa = bios("CcxAsNumaDomain") == Some("Enabled");
    if let (Some(nps), Some(nodes), false) = (bios("NumaNodesPerSocket"), os.numa_nodes, l3_numa) {
        let sockets = os.sockets.unwrap_or(1);
        // NPS0 is one node for the whole machine.
        let expected = match nps.parse::<usize>() {
            Ok(0) => Some(1),
            Ok(n) => Some(n * sockets),
            Err(_) => None,
        };
        if let Some(expected) = expected.filter(|e| *e != nodes) {
            out.push(format!(
                "NumaNodesPerSocket is {nps} on {sockets} socket(s), so {expected} NUMA node(s) were expected, but the OS shows {nodes}"
            ));
        }
    }
    if let Some(cs) = bios("ProcCStates") {
        let deep: Vec<&str> = os
            .idle_states
            .iter()
            .map(String::as_str)
            .filter(|s| !matches!(s.to_ascii_uppercase().as_str(), "POLL" | "C0" | "C1" | "C1E"))
            .collect();
        if cs == "Disabled" && !deep.is_empty() {
            out.push(format!(
                "ProcCStates is Disabled but the OS offers idle states beyond C1: {}",
                deep.join(", ")
            ));
        } else if cs == "Enabled" && deep.is_empty() && !os.idle_states.is_empty() {
            out.push(format!(
                "ProcCStates is Enabled but the OS offers no idle state beyond C1 ({}); a kernel parameter (idle=, processor.max_cstate=) may limit them",
                os.idle_states.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn judge(bios: &[(&str, &str)], os: &OsFacts<'_>) -> Vec<String> {
        let bios: BTreeMap<&str, &str> = bios.iter().copied().collect();
        contradictions(|name| bios.get(name).copied(), os)
    }

    #[test]
    fn contradictions_between_bios_and_os() {
        let idle = ["POLL".to_owned(), "C1".to_owned(), "C2".to_owned()];
        let os = OsFacts {
            smt_active: Some(false),
            numa_nodes: Some(2),
            sockets: Some(2),
            idle_states: &idle,
        };
        let c = judge(
            &[
                ("LogicalProc", "Enabled"),
                ("NumaNodesPerSocket", "4"),
                ("ProcCStates", "Disabled"),
            ],
            &os,
        );
        assert_eq!(c.len(), 3, "{c:?}");
        assert!(c[0].contains("SMT inactive"));
        assert!(c[1].contains("8 NUMA node(s) were expected") && c[1].contains("shows 2"));
        assert!(c[2].contains("C2"));
        let agree = [
            ("LogicalProc", "Disabled"),
            ("NumaNodesPerSocket", "1"),
            ("ProcCStates", "Enabled"),
        ];
        assert!(judge(&agree, &os).is_empty());
        // NPS0: one node for the machine; L3-as-NUMA: not judged.
        assert_eq!(judge(&[("NumaNodesPerSocket", "0")], &os).len(), 1);
        assert!(judge(&[("NumaNodesPerSocket", "4"), ("CcxAsNumaDomain", "Enabled")], &os).is_empty());
        let shallow_states = ["POLL".to_owned(), "C1".to_owned()];
        let shallow = OsFacts {
            idle_states: &shallow_states,
            ..os
        };
        let c = judge(&[("ProcCStates", "Enabled")], &shallow);
        assert!(c[0].contains("no idle state beyond C1"), "{c:?}");
        // An OS that reports nothing: nothing judged.
        assert!(judge(&[("LogicalProc", "Enabled")], &OsFacts::default()).is_empty());
    }
}
