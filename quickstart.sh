#!/usr/bin/env bash
# quickstart.sh: install what is missing, build libiwarp, run the main job.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
scripts/deps.sh
scripts/build.sh build
scripts/demo.sh build
