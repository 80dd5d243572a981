#!/usr/bin/env bash
# Emulator vs a static server: wrk's keep-alive GET rate on one emulated iDRAC's `…/Bios`
# (Basic auth, plain HTTP) against nginx serving the same bytes from a file, run in turn
# (emulator, nginx, emulator, nginx, ...) so that a drift in the machine's speed hits both.
# Prints each run's rate, then the median of the emulator/nginx ratios.
# Usage: benches/sim_vs_static.sh [ROUNDS=3] [SECONDS=5] [CONNECTIONS=64]
# Needs: a release build (cargo build --release), wrk and nginx (apt-get install wrk nginx-light).
set -euo pipefail
rounds=${1:-3}; secs=${2:-5}; conns=${3:-64}
. "$(dirname "$0")/lib.sh"
path=/redfish/v1/Systems/System.Embedded.1/Bios
auth='Authorization: Basic cm9vdDpjYWx2aW4='
start_sim --hosts 1 --listen 127.0.0.1:0 --http --exit-after 900s
sim=$url
# The same body, as a file nginx serves.
mkdir -p "$dir/www$(dirname "$path")" "$dir/tmp"
curl -sf -H "$auth" "$sim$path" -o "$dir/www$path"
chmod -R a+rX "$dir"   # nginx's workers run unprivileged
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$dir/nginx.conf" <<CONF
worker_processes $(nproc);
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    default_type application/json;
    client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp; fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
    keepalive_requests 1000000;
    server { listen 127.0.0.1:$port; root $dir/www; }
}
CONF
nginx -p "$dir" -c "$dir/nginx.conf" &
also_kill=$!
until curl -sf "http://127.0.0.1:$port$path" -o /dev/null; do sleep 0.1; done
cmp -s <(curl -s -H "$auth" "$sim$path") "$dir/www$path" || echo "note: the emulator's body changed since it was copied"
echo "body: $(wc -c <"$dir/www$path") bytes; wrk -t2 -c$conns -d${secs}s, $rounds rounds"
rate() { wrk -t2 -c"$conns" -d"${secs}s" -H "$auth" "$1$path" | awk '/Requests\/sec/ {print $2}'; }
ratios=()
for r in $(seq "$rounds"); do
    s=$(rate "$sim"); n=$(rate "http://127.0.0.1:$port")
    ratio=$(python3 -c "print(f'{$s/$n:.2f}')")
    echo "round $r: emulator $s req/s, nginx $n req/s, ratio $ratio"
    ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print "median emulator/nginx ratio: " a[int((NR+1)/2)]}'
