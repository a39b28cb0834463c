#!/usr/bin/env bash
# scripts/demo.sh DIR: the main job on an already built tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
cd "$top"
echo "== iwarp_decode on real siw traffic (tests/data/client-lo.pcapng)"
"$dir/tools/iwarp_decode" -q tests/data/client-lo.pcapng
