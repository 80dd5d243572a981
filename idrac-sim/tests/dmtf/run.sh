#!/usr/bin/env bash
# Runs DMTF's Redfish Protocol Validator and Use-Case Checkers, and OpenStack sushy with
# sushy-oem-idrac (sushy_check.py), against `rftune sim`, each in a private network namespace
# whose only interface is loopback (the protocol validator multicasts SSDP discovery on every
# run), with the emulator started inside the same namespace. Fails when a tool reports more
# failures than the known ones listed below.
#
#   idrac-sim/tests/dmtf/run.sh [RFTUNE] [REPORT_DIR]
#
# RFTUNE defaults to target/debug/rftune (built by `cargo test --workspace`), REPORT_DIR to
# target/dmtf-reports. Installs the pinned tool versions into target/dmtf-venv. Needs root
# (unshare --net), as CI and developers' machines have it. About 3 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../../.."

if [ "${1:-}" = "--inside" ]; then
    shift
    ip link set lo up
    tool=$1 out=$2 rftune=$3 venv=$4
    mkdir -p "$out"
    "$rftune" sim --listen 127.0.0.1:0 --boot-time 2s > "$out/sim.out" 2> "$out/sim.err" &
    sim=$!
    trap 'kill $sim 2>/dev/null || true; wait $sim 2>/dev/null || true' EXIT
    for _ in $(seq 1 300); do grep -q listening "$out/sim.out" && break; sleep 0.1; done
    url=$(grep -oE 'https://[0-9.:]+' "$out/sim.out" | head -1)
    [ -n "$url" ] || { echo "rftune sim did not start:" >&2; cat "$out/sim.err" >&2; exit 1; }
    # requests lets REQUESTS_CA_BUNDLE override verify=False; the tools talk to loopback only.
    unset REQUESTS_CA_BUNDLE CURL_CA_BUNDLE
    case "$tool" in
        protocol)
            (cd "$out" && "$venv/bin/rf_protocol_validator" -r "$url" -u root -p calvin --no-cert-check \
                --report-dir . --report-type tsv) > "$out/tool.out" 2>&1 || true ;;
        usecases)
            (cd "$out" && "$venv/bin/rf_use_case_checkers" -r "$url" -u root -p calvin --report-dir .) \
                > "$out/tool.out" 2>&1 || true ;;
        sushy)
            "$venv/bin/python" idrac-sim/tests/dmtf/sushy_check.py "$url" > "$out/tool.out" 2>&1 || true ;;
    esac
    exit 0
fi

rftune=$(realpath "${1:-target/debug/rftune}")
reports=$(realpath -m "${2:-target/dmtf-reports}")
venv=$PWD/target/dmtf-venv
[ -x "$rftune" ] || { echo "error: no rftune binary at $rftune (cargo build -p rftune)" >&2; exit 1; }
pins=(redfish-protocol-validator==1.3.2 redfish-use-case-checkers==2.1.1 sushy==5.14.0 sushy-oem-idrac==6.0.0)
if ! "$venv/bin/python" -c 'import redfish_protocol_validator, redfish_use_case_checkers, sushy, sushy_oem_idrac' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
fi
rm -rf "$reports" && mkdir -p "$reports"

failed=0
# check NAME FAILS ALLOWED WHY: a tool's failure count against the failures known to remain.
check() {
    if [ "$2" -gt "$3" ]; then
        echo "FAIL: $1 reports $2 failures, $3 known ($4); see $reports/$1" >&2
        failed=1
    else
        echo "ok: $1 ($2 failures, $3 known: $4)"
    fi
}

for tool in protocol usecases sushy; do
    unshare --net -- "$0" --inside "$tool" "$reports/$tool" "$rftune" "$venv"
done

summary=$(grep -h '^Summary' "$reports/protocol/tool.out" || true)
echo "protocol validator: ${summary:-no summary}"
fails=$(sed -n 's/.*FAIL: \([0-9]*\).*/\1/p' <<< "$summary")
check protocol "${fails:-999}" 0 "none"

# The use-case checkers print a PASS/WARN/FAIL/NOT TESTED table; FAIL is the third number.
row=$(grep -A2 'PASS.*WARN.*FAIL' "$reports/usecases/tool.out" | tail -1 | tr -d '|' || true)
echo "use-case checkers: PASS WARN FAIL NOT_TESTED = ${row:-no summary}"
fails=$(awk '{print $3}' <<< "$row")
# PowerControl: `On` right after GracefulShutdown meets the host still shutting down and gets
# 409 PSU501, as a real iDRAC answers; BootOverride: no UefiTargetBootSourceOverride (not
# modelled yet).
check usecases "${fails:-999}" 1 "On during a graceful shutdown"

sushy=$(grep -h '^sushy steps:' "$reports/sushy/tool.out" || true)
echo "${sushy:-sushy: no summary}"
fails=$(sed -n 's/.*failed \([0-9]*\).*/\1/p' <<< "$sushy")
grep -h '^FAIL' "$reports/sushy/tool.out" || true
# Not modelled: SCP export targets (another issue), UpdateService actions; Storage, SimpleStorage
# and Thermal until the fixtures carry them.
check sushy "${fails:-999}" 5 "SCP export, UpdateService actions, storage and thermal inventory"
exit $failed
