#!/usr/bin/env bash
# fuzz/long.sh MINUTES SRCDIR TARGET...: runs each libFuzzer TARGET for
# MINUTES minutes (may be fractional) on a copy of its seed corpus (fuzz/corpus/<name>/), in
# fuzz-long/<name>/. A crash stops libFuzzer: the crashing input is kept in
# fuzz-long/<name>/artifacts/ and the target is started again for the time
# left (at most 20 times), so the line of each target counts executions and
# crashes over the whole time:
#   fuzz-long: <name>: <s> s, <N> executions, <N> crashes[, artifacts: ...]
# Exit status 1 when any target crashed.
set -u
minutes=$1
srcdir=$2
shift 2
[ $# -gt 0 ] || { echo "fuzz-long: no targets (configure --enable-fuzzing)"; exit 1; }
total=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
fails=0
for t in "$@"; do
	name=$(basename "$t")
	work=fuzz-long/$name
	mkdir -p "$work/corpus" "$work/artifacts"
	if [ -d "$srcdir/fuzz/corpus/$name" ]; then
		cp -rn "$srcdir/fuzz/corpus/$name/." "$work/corpus/" 2>/dev/null || true
	fi
	: >"$work/log"
	start=$(date +%s)
	execs=0 crashes=0 runs=0
	while :; do
		left=$((total - ($(date +%s) - start)))
		[ "$left" -gt 0 ] && [ "$runs" -lt 20 ] || break
		runs=$((runs + 1))
		"./$t" -max_total_time="$left" -print_final_stats=1 -rss_limit_mb=2048 \
			-max_len=70000 -timeout=10 -artifact_prefix="$work/artifacts/" \
			"$work/corpus" >"$work/run.log" 2>&1
		rc=$?
		cat "$work/run.log" >>"$work/log"
		n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/run.log" | tail -1)
		execs=$((execs + ${n:-0}))
		if [ $rc -ne 0 ]; then
			crashes=$((crashes + 1))
			grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|deadly signal|Test unit written' "$work/run.log" |
				sed "s/^/fuzz-long: $name: /"
		fi
	done
	line="fuzz-long: $name: $(($(date +%s) - start)) s, $execs executions, $crashes crashes"
	if [ $crashes -gt 0 ]; then
		line="$line, artifacts: $(ls "$work/artifacts" | tr '\n' ' ')"
		fails=$((fails + 1))
	fi
	echo "$line"
done
[ $fails -eq 0 ]
