# Sourced by the bench scripts that start the emulator (`rftune sim`); not run on its own.
#
# On sourcing: `bin` (the rftune measured: $RFTUNE, default target/release/rftune), `dir` (a
# temporary directory, removed on exit) and an EXIT trap that stops the emulator and anything
# the script adds to `also_kill`.
#
# start_sim ARGS…  starts `$RFTUNE_SIM sim ARGS…` (default: $bin) in the background with its
# output in "$dir/sim.out", after raising `ulimit -n` to the hard limit (one listener per host,
# one socket per client connection). It waits until every host (`--hosts N`, default 1) printed
# its "listening" line and, with `--write-inventory FILE`, until FILE is written. If the
# emulator ends first (an unstartable binary, too many open files, a bad argument), its output
# is printed and the script exits 1 instead of waiting forever.
# Afterwards: `pid` (the emulator), `out` (its output file), `url` (the first host's URL).

bin=${RFTUNE:-target/release/rftune}
dir=$(mktemp -d); pid=; out=; url=; also_kill=
cleanup() {
    # shellcheck disable=SC2086  # the pid lists are word lists
    kill $pid $also_kill 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT

start_sim() {
    local hosts=1 inventory= prev=
    for arg in "$@"; do
        case $prev in
            --hosts) hosts=$arg ;;
            --write-inventory) inventory=$arg ;;
        esac
        prev=$arg
    done
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    out="$dir/sim.out"
    "${RFTUNE_SIM:-$bin}" sim "$@" >"$out" 2>&1 &
    pid=$!
    until { [ -z "$inventory" ] || [ -s "$inventory" ]; } &&
        [ "$(grep -c listening "$out" || true)" -ge "$hosts" ]; do
        kill -0 "$pid" 2>/dev/null || {
            echo "the emulator (${RFTUNE_SIM:-$bin} sim $*) ended before its $hosts host(s) were listening:" >&2
            cat "$out" >&2
            exit 1
        }
        sleep 0.1
    done
    url=$(awk '/listening/ {print $3; exit}' "$out")
}
