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
cargo run -q -p rftune-experiment --example report_fixtures -- "$out" >/dev/null
# Chromium screenshots its window, so the window is as tall as the longest page (at most 16000
# px, its limit); with ImageMagick installed each PNG is then cut to the page's content.
magick=$(command -v magick || command -v convert-im6.q16 || true)
for report in storage memory experiment; do
    for width in 760 1600; do
        case "$report-$width" in
            memory-*) height=3000 ;;
            *-760) height=16000 ;;
            *) height=9000 ;;
        esac
        png="$out/$report-$width.png"
        # --no-sandbox: CI containers run as root, where chromium's sandbox cannot start.
        "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
            --window-size="$width,$height" --screenshot="$png" "file://$out/$report.html" >/dev/null 2>&1
        [ -s "$png" ] || { echo "chromium wrote no $png" >&2; exit 1; }
        if [ -n "$magick" ]; then
            # The content's bottom edge: trim's height plus its offset.
            bottom=$("$magick" "$png" -trim -format '%[fx:h+page.y]' info:)
            if [ "$bottom" -ge $((height - 2)) ]; then
                echo "warning: $report at $width px is longer than $height px; the screenshot is cut" >&2
            else
                "$magick" "$png" -crop "${width}x$((bottom + 24))+0+0" +repage "$png"
            fi
        fi
        echo "$png"
    done
done
