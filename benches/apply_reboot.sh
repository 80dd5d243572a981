#!/usr/bin/env bash
# One-host `rftune apply` with an emulated reboot: a fresh emulated iDRAC (plain HTTP, POST
# lasting BOOT), the `performance` profile applied with a forced restart, the job and POST
# waited for, the result verified. Prints the apply's wall time; most of it is the emulated
# boot, the rest is how late rftune notices the job and POST have ended.
# Usage: benches/apply_reboot.sh [BOOT=5s] [PROFILE=performance]
set -euo pipefail
boot=${1:-5s}; profile=${2:-performance}
. "$(dirname "$0")/lib.sh"
start_sim --hosts 1 --listen 127.0.0.1:0 --http --boot-time "$boot" --exit-after 300s
export RFTUNE_PASSWORD=calvin RFTUNE_STATE_DIR="$dir/state"
start=$(date +%s.%N)
"$bin" apply --bmc "$url" --profile "$profile" --reboot force -q >"$dir/apply.out" 2>&1 || { cat "$dir/apply.out"; exit 1; }
end=$(date +%s.%N)
python3 -c "print(f'apply wall: {$end - $start:.2f} s (emulated boot $boot)')"
