#!/usr/bin/env bash
# Sharding check: `rftune diff` over an emulated fleet by one process, and by N processes with
# `--shard K/N -o jsonl` running side by side, then `rftune merge` of both. The merged results
# must be identical (hosts, statuses, every attribute, summary) and so must the exit codes.
# A few hosts are made unreadable (`malformed` login answers) so that errors are merged too.
# Prints wall time and peak RSS of each run, the shard sizes, and the verdict; exits 1 on a
# mismatch.
# Usage: benches/shard_merge.sh [HOSTS=4000] [SHARDS=4] [PROFILE=performance]
# Needs: a release build (cargo build --release) and python3.
set -euo pipefail
hosts=${1:-4000}; shards=${2:-4}; profile=${3:-performance}
. "$(dirname "$0")/lib.sh"
start_sim --hosts "$hosts" --listen 127.0.0.1:0 --http --exit-after 900s \
    --fault "malformed@4,$((hosts / 2 + 1)),$hosts" \
    --write-inventory "$dir/fleet.toml"
export RFTUNE_PASSWORD=calvin RFTUNE_STATE_DIR="$dir/state"
common=(diff --inventory "$dir/fleet.toml" --profile "$profile" --retry-for 0s -q)
"$bin" "${common[@]}" -o json >/dev/null 2>&1 || true   # warm the registry cache
# Wall seconds and peak RSS (KiB) into $1; the runs' stderr (host errors) into errors.log.
timed() { /usr/bin/time -f "%e %M" -o "$1" "${@:2}" 2>>"$dir/errors.log"; }
times() { tail -1 "$1"; }   # GNU time puts "Command exited with non-zero status" first

set +e
timed "$dir/one.time" "$bin" "${common[@]}" -o json >"$dir/one.json"
one_rc=$?
timed "$dir/stream.time" "$bin" "${common[@]}" -o jsonl >"$dir/whole.jsonl"
stream_rc=$?
start=$(date +%s%N)
for k in $(seq 1 "$shards"); do
    ( timed "$dir/s$k.time" "$bin" "${common[@]}" -o jsonl --shard "$k/$shards" >"$dir/shard-$k.jsonl"
      echo $? >"$dir/s$k.rc" ) &
done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 )); shards_wall="$((ms / 1000)).$(printf %03d $((ms % 1000)))"
"$bin" merge "$dir/one.json" -o json >"$dir/merged-one.json" 2>>"$dir/errors.log"; merge_one_rc=$?
"$bin" merge "$dir"/shard-*.jsonl -o json >"$dir/merged-shards.json" 2>>"$dir/errors.log"; merge_rc=$?
"$bin" merge "$dir/whole.jsonl" -o json >"$dir/merged-stream.json" 2>>"$dir/errors.log"; merge_stream_rc=$?
set -e

read -r wall rss < <(times "$dir/one.time")
echo "one process -o json:  $hosts hosts, wall ${wall} s, peak RSS $((rss / 1024)) MiB, exit $one_rc"
read -r wall rss < <(times "$dir/stream.time")
echo "one process -o jsonl: $hosts hosts, wall ${wall} s, peak RSS $((rss / 1024)) MiB, exit $stream_rc"
for k in $(seq 1 "$shards"); do
    read -r wall rss < <(times "$dir/s$k.time")
    echo "shard $k/$shards:    $(($(wc -l <"$dir/shard-$k.jsonl") - 1)) hosts, wall ${wall} s, peak RSS $((rss / 1024)) MiB, exit $(cat "$dir/s$k.rc")"
done
echo "shards side by side: wall ${shards_wall} s"
echo "merge exit codes: one process json $merge_one_rc, jsonl $merge_stream_rc; $shards shards $merge_rc"
python3 - "$dir/merged-one.json" "$dir/merged-shards.json" "$dir/merged-stream.json" \
    "$one_rc" "$merge_rc" "$stream_rc" "$merge_one_rc" "$merge_stream_rc" <<'EOF'
import json, sys
one, shards, stream = (json.load(open(p)) for p in sys.argv[1:4])
for d in (one, shards, stream):
    d.pop("merged_from")
print("summary (one process):", one["summary"])
print("summary (merged shards):", shards["summary"])
same = one == shards == stream and len(set(sys.argv[4:])) == 1
print("identical (hosts, attributes, summary, exit code):", "yes" if same else "NO")
sys.exit(0 if same else 1)
EOF
