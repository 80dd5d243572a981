#!/usr/bin/env bash
# Registry decode: the client's typed decode of a BIOS attribute registry against parsing the
# same bytes into serde_json::Value, and against decoding with JSON-path tracking.
# Usage: benches/decode.sh [REGISTRY.json=the r7625 fixture's] [ROUNDS=50]
set -euo pipefail
registry=${1:-fixtures/r7625/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry/index.json}
cargo run -q --release -p redfish-client --example decode_speed -- "$registry" "${2:-50}"
