#!/usr/bin/env bash
# Fleet drift check: `rftune diff --inventory` over N emulated iDRACs with added latency per
# request, registry cache warm (a first run fills it). Prints wall time and peak RSS of the
# diff process, and the requests one host received.
# Usage: benches/fleet_diff.sh [HOSTS=1000] [LATENCY=50ms] [PROFILE=performance]
set -euo pipefail
hosts=${1:-1000}; latency=${2:-50ms}; profile=${3:-performance}
bin=${RFTUNE:-target/release/rftune}
dir=$(mktemp -d); out="$dir/sim.out"; trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
"$bin" sim --hosts "$hosts" --listen 127.0.0.1:0 --latency "$latency" --exit-after 600s \
    --write-inventory "$dir/fleet.toml" >"$out" 2>&1 &
pid=$!
while [ "$(grep -c listening "$out" || true)" -lt "$hosts" ]; do sleep 0.2; done
export RFTUNE_PASSWORD=calvin RFTUNE_STATE_DIR="$dir/state"
"$bin" diff --inventory "$dir/fleet.toml" --profile "$profile" -o json >/dev/null || true   # warm the registry cache
first=$(head -1 "$out" | awk '{print $3}')
curl -sk -X POST "$first/_sim/stats/reset"
/usr/bin/time -f 'wall %e s, peak RSS %M KiB' "$bin" diff --inventory "$dir/fleet.toml" --profile "$profile" -o json >"$dir/diff.json" || true
python3 -c "import json,sys; d=json.load(open('$dir/diff.json')); print('summary:', d['summary'])"
curl -sk "$first/_sim/stats" | python3 -c "import json,sys; d=json.load(sys.stdin); print('requests to one host:', d['requests']['total'], dict(d['requests']['by_method']))"
