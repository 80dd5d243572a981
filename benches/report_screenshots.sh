#!/usr/bin/env bash
# Renders rftune's three HTML reports (storage and memory bench reports, experiment report)
# from fixed fixture results and screenshots each in a headless Chromium at 760 and 1600 px,
# so a person can check axes, legends and layout without hardware.
#
#   benches/report_screenshots.sh [OUT_DIR]     (default /tmp/rftune-report-screenshots)
#
# Needs chromium (Debian: apt-get install -y chromium). Writes OUT_DIR/{storage,memory,
# experiment}.html and OUT_DIR/<report>-<width>.png; the PNGs are not committed.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/rftune-report-screenshots}
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$browser" ]; then
    echo "chromium not installed (apt-get install -y chromium)" >&2
    exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
cargo run -q -p rftune-engine --example report_fixtures -- "$out" >/dev/null
# A full-page screenshot needs the page's height: chromium's window is that tall. The heights
# are generous for the fixtures at each width; the blank rest of the window is white.
for report in storage memory experiment; do
    for width in 760 1600; do
        case "$report-$width" in
            storage-760) height=7200 ;; storage-1600) height=4000 ;;
            memory-760) height=2000 ;; memory-1600) height=1500 ;;
            experiment-760) height=16000 ;; experiment-1600) height=8200 ;;
        esac
        png="$out/$report-$width.png"
        # --no-sandbox: CI containers run as root, where chromium's sandbox cannot start.
        "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
            --window-size="$width,$height" --screenshot="$png" "file://$out/$report.html" >/dev/null 2>&1
        echo "$png"
    done
done
