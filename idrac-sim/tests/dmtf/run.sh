#!/usr/bin/env bash
# Runs DMTF's Redfish Protocol Validator, Service Validator (on the r7625 and r7525 trees),
# Use-Case Checkers and rf_certificates.py (redfish-utilities), and OpenStack sushy with
# sushy-oem-idrac (sushy_check.py), against
# `rftune sim`, each in a private network namespace
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
    tool=$1 out=$2 rftune=$3 venv=$4 model=${5:-r7625}
    mkdir -p "$out"
    "$rftune" sim --model "$model" --listen 127.0.0.1:0 --boot-time 2s > "$out/sim.out" 2> "$out/sim.err" &
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
        service)
            # The schemas come from the directory the outer script unpacked; the validator
            # would otherwise download DMTF's bundle.
            (cd "$out" && "$venv/bin/rf_service_validator" --rhost "$url" --user root --password calvin \
                --schema_directory "$SCHEMAS" --skipschema --logdir .) > "$out/tool.out" 2>&1 || true ;;
        usecases)
            (cd "$out" && "$venv/bin/rf_use_case_checkers" -r "$url" -u root -p calvin --report-dir .) \
                > "$out/tool.out" 2>&1 || true ;;
        sushy)
            "$venv/bin/python" idrac-sim/tests/dmtf/sushy_check.py "$url" > "$out/tool.out" 2>&1 || true ;;
        certificates)
            # Lists the installed certificates, then asks for a signing request for the web server.
            { "$venv/bin/rf_certificates.py" -u root -p calvin -r "$url" info
              "$venv/bin/rf_certificates.py" -u root -p calvin -r "$url" csr \
                  --certificatecollection /redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol/HTTPS/Certificates \
                  --commonname idrac-ci --country US --city Austin --state Texas --organization Lab \
                  --organizationalunit Ops; } > "$out/tool.out" 2>&1 || true ;;
    esac
    exit 0
fi

rftune=$(realpath "${1:-target/debug/rftune}")
reports=$(realpath -m "${2:-target/dmtf-reports}")
venv=$PWD/target/dmtf-venv
[ -x "$rftune" ] || { echo "error: no rftune binary at $rftune (cargo build -p rftune)" >&2; exit 1; }
pins=(redfish-protocol-validator==1.3.2 redfish-service-validator==3.1.8 redfish-use-case-checkers==2.1.1
      redfish-utilities==3.5.2 sushy==5.14.0 sushy-oem-idrac==6.0.0)
if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys
assert all(m.version(p.split("==")[0]) == p.split("==")[1] for p in sys.argv[1:])' "${pins[@]}" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
fi
# DMTF's schemas (DSP8010 2025.4, 277 CSDL files) for the Service Validator, from crates.io: the
# nv-redfish-schema crate ships them byte for byte as DMTF publishes them. Checked against the
# crates.io index's checksum; unpacked under target/, never into the repository.
schema_crate=nv-redfish-schema-0.10.1
schema_sha=1bdee22eb005df9021012e5014584c282b50b6d80c3aa49aca5480760920b05d
export SCHEMAS=$PWD/target/dmtf-schemas/csdl
if [ "$(ls "$SCHEMAS" 2>/dev/null | wc -l)" -ne 277 ]; then
    mkdir -p target/dmtf-schemas
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
        "https://static.crates.io/crates/nv-redfish-schema/$schema_crate.crate" "target/dmtf-schemas/$schema_crate.crate"
    echo "$schema_sha  target/dmtf-schemas/$schema_crate.crate" | sha256sum -c --quiet
    tar -xzf "target/dmtf-schemas/$schema_crate.crate" -C target/dmtf-schemas --strip-components=2 \
        "$schema_crate/redfish-csdl/csdl"
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

for tool in protocol usecases sushy certificates; do
    unshare --net -- "$0" --inside "$tool" "$reports/$tool" "$rftune" "$venv"
done
for model in r7625 r7525; do
    unshare --net -- "$0" --inside service "$reports/service-$model" "$rftune" "$venv" "$model"
done

summary=$(grep -h '^Summary' "$reports/protocol/tool.out" || true)
echo "protocol validator: ${summary:-no summary}"
fails=$(sed -n 's/.*FAIL: \([0-9]*\).*/\1/p' <<< "$summary")
check protocol "${fails:-999}" 0 "none"

# The Service Validator prints the same kind of table; each failure is an `ERROR - FAIL` line of
# its debug log. Known, and failed the same way by the real R750 captures (iDRAC 6.00 and 7.10):
# Bios/Settings' ClearPending action, which Bios.v1_0_0.OemActions does not define; on 7.x the
# registry's three "Value" dependencies (MapToProperty Value, MapToValue a list: 6 failures; the
# real 7.10 registry has 67 such rules) and the web certificate's SerialNumber written without
# the colons the schema's pattern asks for (1); on 6.x the SCP action keys (3) and the
# certificate service's GetLastGeneratedCSR key (1) of the 6.00 capture.
for model in r7625 r7525; do
    row=$(grep -A2 'PASS.*WARN.*FAIL' "$reports/service-$model/tool.out" | tail -1 | tr -d '|' || true)
    echo "service validator, $model: PASS WARN FAIL NOT_TESTED = ${row:-no summary}"
    grep -h 'ERROR - FAIL' "$reports/service-$model"/*/RedfishServiceValidatorDebug_*.log 2>/dev/null \
        | sed 's/.*ERROR - FAIL - /  /' | cut -c1-160 || true
    fails=$(awk '{print $3}' <<< "$row")
    case $model in
        r7625) check "service-$model" "${fails:-999}" 8 "ClearPending, the registry's Value rules, the certificate's SerialNumber, as on the real 7.10" ;;
        r7525) check "service-$model" "${fails:-999}" 5 "ClearPending, the 3 SCP action keys, the CSR action key, as on the real 6.00" ;;
    esac
done

# The use-case checkers print a PASS/WARN/FAIL/NOT TESTED table; FAIL is the third number.
row=$(grep -A2 'PASS.*WARN.*FAIL' "$reports/usecases/tool.out" | tail -1 | tr -d '|' || true)
echo "use-case checkers: PASS WARN FAIL NOT_TESTED = ${row:-no summary}"
fails=$(awk '{print $3}' <<< "$row")
# PowerControl: `On` right after GracefulShutdown meets the host still shutting down and gets
# 409 PSU501, as a real iDRAC answers (the boot override checks pass, UefiTarget included).
check usecases "${fails:-999}" 1 "On during a graceful shutdown"

sushy=$(grep -h '^sushy steps:' "$reports/sushy/tool.out" || true)
echo "${sushy:-sushy: no summary}"
fails=$(sed -n 's/.*failed \([0-9]*\).*/\1/p' <<< "$sushy")
grep -h '^FAIL' "$reports/sushy/tool.out" || true
# Not modelled: UpdateService actions (firmware updates).
check sushy "${fails:-999}" 1 "UpdateService actions"

# rf_certificates.py: `info` shows the web server certificate with Dell's subject, `csr` prints
# the signing request the emulator made.
out="$reports/certificates/tool.out"
fails=0
grep -q 'Certificate: /redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol/HTTPS/Certificates/' "$out" \
    && grep -q 'Subject: CN=idrac-SIM, O=Dell Inc.' "$out" || fails=$((fails + 1))
grep -q 'BEGIN CERTIFICATE REQUEST' "$out" || fails=$((fails + 1))
echo "rf_certificates: $(grep -c '^Certificate: ' "$out" || true) certificate(s) listed, $(grep -c 'BEGIN CERTIFICATE REQUEST' "$out" || true) signing request(s)"
check certificates "$fails" 0 "none"
exit $failed
