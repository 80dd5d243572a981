#!/usr/bin/env bash
# Fleet drift check: `rftune diff --inventory` over N emulated iDRACs (HTTPS, pinned) with added
# latency per request, registry cache warm (a first run fills it). Prints one line: the diff's
# wall time, rftune's CPU per host and peak RSS, and the emulator's CPU per host (during the
# measured diff) and peak RSS, then the requests one host received.
# Usage: benches/fleet_diff.sh [HOSTS=1000] [LATENCY=50ms] [PROFILE=performance]
# MODEL=dl385 (any `rftune sim --model`) measures another kind of host, e.g. an HPE iLO beside
# the default Dell R7625.
# Env: RFTUNE (the rftune measured, default target/release/rftune), RFTUNE_SIM (the emulator's
# binary, default the same), CONCURRENCY (hosts at once, default rftune's own).
# For 10,000 hosts: one process holds a listener per host and the client a socket per host in
# flight; the script raises `ulimit -n` as far as the hard limit allows.
set -euo pipefail
hosts=${1:-1000}; latency=${2:-50ms}; profile=${3:-performance}
. "$(dirname "$0")/lib.sh"
start_sim --model "${MODEL:-r7625}" --hosts "$hosts" --listen 127.0.0.1:0 --latency "$latency" --exit-after 900s \
    --write-inventory "$dir/fleet.toml"
export RFTUNE_PASSWORD=calvin RFTUNE_STATE_DIR="$dir/state"
args=(diff --inventory "$dir/fleet.toml" --profile "$profile" -o json)
[ -n "${CONCURRENCY:-}" ] && args+=(--concurrency "$CONCURRENCY")
"$bin" "${args[@]}" >/dev/null || true   # warm the registry cache
curl -sk -X POST "$url/_sim/stats/reset"
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
before=$(ticks)
/usr/bin/time -o "$dir/time" -f '%e %U %S %M' "$bin" "${args[@]}" >"$dir/diff.json" || true
after=$(ticks)
read -r wall user sys rss < <(tail -1 "$dir/time")
sim_rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
python3 - "$hosts" "$latency" "$wall" "$user" "$sys" "$rss" "$before" "$after" "$hz" "$sim_rss" "$dir/diff.json" <<'PY'
import json, sys
hosts, latency = int(sys.argv[1]), sys.argv[2]
wall, user, sys_, rss = map(float, sys.argv[3:7])
before, after, hz, sim_rss = int(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9]), int(sys.argv[10])
summary = json.load(open(sys.argv[11])).get("summary")
print(f"hosts {hosts} latency {latency}: wall {wall:.2f} s; rftune CPU {(user + sys_) * 1e3 / hosts:.2f} ms/host, "
      f"peak RSS {rss / 1024:.0f} MiB; emulator CPU {(after - before) / hz * 1e3 / hosts:.2f} ms/host, "
      f"peak RSS {sim_rss / 1024:.0f} MiB")
print("summary:", summary)
PY
curl -sk "$url/_sim/stats" | python3 -c "import json,sys; d=json.load(sys.stdin); print('requests to one host:', d['requests']['total'], dict(d['requests']['by_method']))"
