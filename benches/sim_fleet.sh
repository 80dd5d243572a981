#!/usr/bin/env bash
# Emulator capacity: one `rftune sim --hosts N` process — its resident memory, and the rate of
# `GET .../Bios` it sustains from wrk (Basic auth, keep-alive) against one of its hosts.
# Usage: benches/sim_fleet.sh [HOSTS=1000] [SECONDS=10] [CONNECTIONS=64]
# Needs: a release build (cargo build --release) and wrk (apt-get install wrk).
set -euo pipefail
hosts=${1:-1000}; secs=${2:-10}; conns=${3:-64}
. "$(dirname "$0")/lib.sh"
start_sim --hosts "$hosts" --listen 127.0.0.1:0 --http --exit-after 300s
url=$(sed -n "$((hosts / 2))p" "$out" | awk '{print $3}')
echo "hosts: $hosts; idle RSS: $(awk '/VmRSS/ {print $2/1024 " MiB"}' /proc/$pid/status)"
wrk -t2 -c"$conns" -d"${secs}s" -H 'Authorization: Basic cm9vdDpjYWx2aW4=' \
    "$url/redfish/v1/Systems/System.Embedded.1/Bios" | grep -E 'Requests/sec|Latency|requests in|Non-2xx'
echo "RSS after load: $(awk '/VmRSS/ {print $2/1024 " MiB"}' /proc/$pid/status); peak: $(awk '/VmHWM/ {print $2/1024 " MiB"}' /proc/$pid/status)"
