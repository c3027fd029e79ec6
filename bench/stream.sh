#!/bin/bash
# Streaming: detail events from the ring buffer into the compressed trace
# file. The target (bench/build/moobench, depth 1, pinned to CPU 1) calls
# monitored_method as fast as its METHOD_TIME allows; adaptrace (pinned to
# CPU 0) details every call (--detail-rate 1). For each method time:
#
#   offered    events/s the traced target produced (1e9 / its mean ns per
#              call over the measured half; every call is one event)
#   events     events in the trace file; dropped: ring-buffer failures
#   cpu/event  adaptrace's own CPU time (user + system, from /proc) above an
#              idle recording of the same length, per event: the consumer's
#              cost (drain, decode, feed the sampler, varint, zlib level 1)
#   capacity   1 / cpu-per-event: events/s one consumer core keeps up with
#
# Each method time runs RUNS times; medians. With -b BYTES the ring buffer
# is BYTES (default 64 MiB: no loss while the consumer keeps up; try 65536 to
# see loss when it must sleep between wake-ups).
#
# Usage: bench/stream.sh [-r RUNS] [-n CALLS] [-t LIST] [-b BYTES] [-o DIR]
#   -t  comma-separated method times in ns (default 0,500,1000,2000)
# Environment: ADAPTRACE (default ../adaptrace). Needs root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
ADAPTRACE=${ADAPTRACE:-$top/adaptrace}
MOO=$here/build/moobench

runs=3 calls=3000000 times=0,500,1000,2000 rb=67108864 outdir=
while getopts "r:n:t:b:o:h" opt; do
	case $opt in
	r) runs=$OPTARG ;; n) calls=$OPTARG ;; t) times=$OPTARG ;; b) rb=$OPTARG ;;
	o) outdir=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
((EUID == 0)) || { echo "stream.sh: needs root (uprobes)" >&2; exit 3; }
[[ -x $MOO ]] || make -s -C "$here" build/moobench >&2
[[ -x $ADAPTRACE ]] || { echo "stream.sh: $ADAPTRACE not found: run 'make' first" >&2; exit 2; }
command -v jq >/dev/null || { echo "stream.sh: needs jq" >&2; exit 2; }

tmp=$(mktemp -d /tmp/adaptrace-bench-stream.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tck=$(getconf CLK_TCK)

# cpu_of CMD...: run CMD in the background; write its own CPU seconds
# (utime + stime of that process, children excluded) and its wall seconds
# to $tmp/cpu (CMD's own output may be redirected by the caller).
cpu_of() {
	local pid last="" t0 t1 u s
	t0=$(date +%s.%N)
	"$@" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		u=$(cut -d' ' -f14,15 "/proc/$pid/stat" 2>/dev/null) && [[ -n $u ]] && last=$u
		sleep 0.05
	done
	wait "$pid" || return 1
	t1=$(date +%s.%N)
	read -r u s <<<"$last"
	echo "$(echo "($u + $s) / $tck" | bc -l) $(echo "$t1 - $t0" | bc -l)" >"$tmp/cpu"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# idle_cpu SECONDS: adaptrace's CPU for a recording of that length with the
# same probes on the target making two long calls (start-up, calibration,
# intervals): subtracted from the traced runs.
idle_cpu() {
	cpu_of taskset -c 0 "$ADAPTRACE" record -q -o "$tmp/idle.data" --select none \
		--detail monitored_method --detail-rate 1 --ringbuf-size "$rb" -f monitored_method \
		-- "$MOO" -q -n 2 -d 1 -t "$(($1 * 500000000))" -c 1 >/dev/null 2>&1 || { echo 0; return; }
	awk '{ print $1 }' "$tmp/cpu"
}

printf '%-8s %12s %10s %8s %10s %12s %6s\n' method offered events dropped cpu/event capacity lost
rows=()
IFS=, read -ra tlist <<<"$times"
for t in "${tlist[@]}"; do
	offered=() evs=() drops=() cpe=() caps=()
	for ((r = 1; r <= runs; r++)); do
		cpu_of taskset -c 0 "$ADAPTRACE" record -q -o "$tmp/s.data" --select none \
			--detail monitored_method --detail-rate 1 --ringbuf-size "$rb" \
			-f monitored_method -- "$MOO" -q -n "$calls" -d 1 -t "$t" -c 1 \
			2>"$tmp/err" >"$tmp/out" || { echo "stream.sh: record failed: $(tail -n 2 "$tmp/err")" >&2; exit 1; }
		read -r cpu wall <"$tmp/cpu"
		mean=$(grep -o 'mean=[0-9.]*' "$tmp/out" | cut -d= -f2)
		"$ADAPTRACE" report "$tmp/s.data" --json >"$tmp/s.json"
		ev=$(jq '.functions[] | select(.name == "monitored_method") | .detail.events' "$tmp/s.json")
		dr=$(jq '.functions[] | select(.name == "monitored_method") | .detail.dropped' "$tmp/s.json")
		idle=$(idle_cpu "$(printf '%.0f' "$wall")")
		[[ $idle != 0 ]] || { echo "stream.sh: the idle recording failed" >&2; exit 1; }
		c=$(echo "($cpu - $idle) / $ev * 1000000" | bc -l)
		offered+=("$(echo "1000000000 / $mean" | bc -l)")
		evs+=("$ev") drops+=("$dr") cpe+=("$c") caps+=("$(echo "1000000 / $c" | bc -l)")
	done
	o=$(printf '%s\n' "${offered[@]}" | median)
	e=$(printf '%s\n' "${evs[@]}" | median)
	d=$(printf '%s\n' "${drops[@]}" | median)
	c=$(printf '%s\n' "${cpe[@]}" | median)
	k=$(printf '%s\n' "${caps[@]}" | median)
	lost=$(echo "($calls - $e - $d)" | bc)
	row=$(printf '%-8s %12.0f %10.0f %8.0f %8.3fus %12.0f %6s' "${t}ns" "$o" "$e" "$d" "$c" "$k" "$lost")
	echo "$row"
	rows+=("$row")
done
echo "offered: events/s the traced target produced; capacity: events/s per consumer core (1 / cpu per event);"
echo "lost: calls with neither an event nor a counted drop (must be 0). $runs runs each, medians; ring buffer $rb bytes."
if [[ -n $outdir ]]; then
	mkdir -p "$outdir"
	printf '%s\n' "${rows[@]}" >"$outdir/stream.txt"
fi
