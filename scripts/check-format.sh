#!/usr/bin/env bash
# scripts/check-format.sh: every tracked C file is formatted as .clang-format
# says (clang-format from Debian's clang-format package). Lists the files that
# are not and exits 1; `clang-format -i FILE` mends one. Exit 77 when
# clang-format or git is missing (a tarball has no file list to check).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: no clang-format"; exit 77; }
git rev-parse --git-dir >/dev/null 2>&1 || { echo "check-format: not a git tree"; exit 77; }
bad=0
while IFS= read -r f; do
	if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "not formatted: $f"
		bad=$((bad + 1))
	fi
done < <(git ls-files '*.c' '*.h')
[ $bad -eq 0 ] || { echo "check-format: $bad file(s) differ from .clang-format"; exit 1; }
echo "check-format: all C files formatted"
