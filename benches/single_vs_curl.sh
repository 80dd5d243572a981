#!/usr/bin/env bash
# One host: `rftune diff` (login, the reads a drift check needs, logout; registry cache warm)
# against one `curl` GET of the same host's `…/Bios`, both over HTTPS to one emulated iDRAC,
# run in turn RUNS times each. Prints the medians and their ratio.
# Usage: benches/single_vs_curl.sh [RUNS=20] [PROFILE=performance]
set -euo pipefail
runs=${1:-20}; profile=${2:-performance}
. "$(dirname "$0")/lib.sh"
start_sim --hosts 1 --listen 127.0.0.1:0 --exit-after 600s
fp=$(awk '/listening/ {print $5; exit}' "$out")
export RFTUNE_PASSWORD=calvin RFTUNE_STATE_DIR="$dir/state"
diff_cmd=("$bin" diff --bmc "$url" --fingerprint "$fp" --profile "$profile" -q)
"${diff_cmd[@]}" >/dev/null 2>&1 || true   # warm the registry cache
python3 - "$runs" "$url" "${diff_cmd[@]}" <<'PY'
import statistics, subprocess, sys, time
runs, url, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
curl = ["curl", "-sk", "-u", "root:calvin", "-o", "/dev/null", url + "/redfish/v1/Systems/System.Embedded.1/Bios"]
def once(c):
    t = time.perf_counter(); subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); return time.perf_counter() - t
a, b = [], []
for _ in range(runs):
    a.append(once(cmd)); b.append(once(curl))
ma, mb = statistics.median(a), statistics.median(b)
print(f"rftune diff median {ma*1e3:.1f} ms, curl GET median {mb*1e3:.1f} ms, ratio {ma/mb:.2f} ({runs} runs each, in turn)")
PY
