#!/bin/bash
# Streaming: detail events from the ring buffer into the compressed trace
# file, measured two ways.
#
# 1. Probes (-t): the target (bench/build/moobench, depth 1, pinned to CPU
#    1) calls monitored_method as fast as its METHOD_TIME allows; adaptrace
#    (pinned to CPU 0) details every call (--detail-rate 1). A detailed call
#    costs the target more than a microsecond of traps here, so this cannot
#    offer more than about 0.5M events/s:
#      offered    events/s the traced target produced (1e9 / its mean ns
#                 per call over the measured half; every call is one event)
#      events     events in the trace file; dropped: ring-buffer failures
#      cpu/event  adaptrace's own CPU time (user + system, from /proc) above
#                 an idle recording of the same length, per event
#      capacity   1 / cpu-per-event: events/s one consumer core keeps up with
# 2. Generator (-g): bench/build/streamgen, pinned to CPU 1, writes events
#    of the same layout into the running recorder's own ring buffer from a
#    BPF program (many per run, paced to the offered rate, waking the
#    consumer as the probes do) for GEN_SECONDS; the recorder, pinned to
#    CPU 0, drains them into its file unchanged:
#      offered    events/s streamgen wrote; refused: reservations that
#                 failed because the ring buffer was full (lost events)
#      in file    events in the trace file, less the target's own 20 calls
#      cpu/event  the recorder's CPU time during the offered window / events
#      busy       that CPU time / the window: the consumer core's load
#
# Each row runs RUNS times; medians. The recorder's default ring buffer (4
# MiB, waking the consumer at a quarter full); -b BYTES sets --ringbuf-size,
# which also drains only once per interval (try 65536 to see counted loss).
#
# Usage: bench/stream.sh [-r RUNS] [-n CALLS] [-t LIST] [-g LIST] [-s GEN_SECONDS] [-b BYTES] [-o DIR]
#   -t  comma-separated method times in ns (default 0,500,1000,2000; "" skips)
#   -g  comma-separated offered rates in events/s, "max" for unpaced
#       (default 500000,1000000,2000000,max; "" skips)
# Environment: ADAPTRACE (default ../adaptrace). Needs root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
ADAPTRACE=${ADAPTRACE:-$top/adaptrace}
MOO=$here/build/moobench

runs=3 calls=3000000 times=0,500,1000,2000 rates=500000,1000000,2000000,max gsec=5 rb= outdir=
while getopts "r:n:t:g:s:b:o:h" opt; do
	case $opt in
	r) runs=$OPTARG ;; n) calls=$OPTARG ;; t) times=$OPTARG ;; b) rb=$OPTARG ;;
	g) rates=$OPTARG ;; s) gsec=$OPTARG ;;
	o) outdir=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
((EUID == 0)) || { echo "stream.sh: needs root (uprobes)" >&2; exit 3; }
[[ -x $MOO && -x $here/build/streamgen && $here/build/streamgen.bpf.o -nt $here/streamgen.bpf.c ]] ||
	make -s -C "$here" build/moobench build/streamgen build/streamgen.bpf.o >&2
# --ringbuf-size only with -b: it also turns the wake-ups off (drained per interval).
rbopt=()
[[ -z $rb ]] || rbopt=(--ringbuf-size "$rb")
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
		--detail monitored_method --detail-rate 1 "${rbopt[@]}" -f monitored_method \
		-- "$MOO" -q -n 2 -d 1 -t "$(($1 * 500000000))" -c 1 >/dev/null 2>&1 || { echo 0; return; }
	awk '{ print $1 }' "$tmp/cpu"
}

rows=()
IFS=, read -ra tlist <<<"$times"
((${#tlist[@]} == 0)) ||
	printf '%-8s %12s %10s %8s %10s %12s %6s\n' method offered events dropped cpu/event capacity lost
for t in "${tlist[@]}"; do
	offered=() evs=() drops=() cpe=() caps=()
	for ((r = 1; r <= runs; r++)); do
		cpu_of taskset -c 0 "$ADAPTRACE" record -q -o "$tmp/s.data" --select none \
			--detail monitored_method --detail-rate 1 "${rbopt[@]}" \
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
((${#tlist[@]} == 0)) || {
	echo "offered: events/s the traced target produced; capacity: events/s per consumer core (1 / cpu per event);"
	echo "lost: calls with neither an event nor a counted drop (must be 0). $runs runs each, medians; ring buffer ${rb:-4194304 (default)} bytes."
}

# gen_run RATE: one recorder fed by streamgen; prints
# "offered written refused infile cpu_s window_s".
gen_run() {
	local rate=$1 rec c0 c1 out ev
	[[ $rate == max ]] && rate=0
	taskset -c 0 "$ADAPTRACE" record -q -o "$tmp/g.data" --select none --detail monitored_method \
		--detail-rate 1 "${rbopt[@]}" -f monitored_method -- \
		"$MOO" -q -n 2 -d 10 -t 0 -w "$(printf '%.0f' "$(echo "$gsec + 3" | bc)")" -c 1 \
		>/dev/null 2>"$tmp/gerr" &
	rec=$!
	# The target execs once everything is attached (before that the child
	# is a copy of adaptrace), then sleeps: wait for the exec.
	for ((i = 0; i < 200; i++)); do
		pgrep -P "$rec" -x moobench >/dev/null && break
		sleep 0.05
	done
	sleep 0.2
	c0=$(cut -d' ' -f14,15 "/proc/$rec/stat")
	out=$("$here/build/streamgen" -p "$rec" -r "$rate" -s "$gsec" -c 1) || {
		kill -INT "$rec" 2>/dev/null
		wait "$rec" 2>/dev/null
		echo "stream.sh: streamgen failed" >&2
		exit 1
	}
	c1=$(cut -d' ' -f14,15 "/proc/$rec/stat")
	wait "$rec" || { echo "stream.sh: record failed: $(tail -n 2 "$tmp/gerr")" >&2; exit 1; }
	ev=$("$ADAPTRACE" report "$tmp/g.data" --json |
		jq '.functions[] | select(.name == "monitored_method") | .detail.events')
	read -r u0 s0 <<<"$c0"
	read -r u1 s1 <<<"$c1"
	awk -v o="$out" -v ev="$ev" -v cpu="$(((u1 + s1 - u0 - s0)))" -v tck="$tck" 'BEGIN {
		n = split(o, kv, /[ =]/); for (i = 1; i < n; i += 2) v[kv[i]] = kv[i + 1]
		print v["offered"], v["written"], v["failed"], ev - 20, cpu / tck, v["seconds"] }'
}

IFS=, read -ra glist <<<"$rates"
((${#glist[@]} == 0)) ||
	printf '%-9s %10s %10s %8s %10s %10s %10s %6s %7s\n' rate offered/s written refused in-file lost \
		cpu/event busy cap/core
for g in "${glist[@]}"; do
	off=() wr=() ref=() inf=() lost=() cpe=() busy=()
	for ((r = 1; r <= runs; r++)); do
		res=$(gen_run "$g") || exit 1
		read -r o w f e c sec <<<"$res"
		off+=("$o") wr+=("$w") ref+=("$f") inf+=("$e") lost+=("$((w - e))")
		cpe+=("$(echo "$c / $e * 1000000" | bc -l)") busy+=("$(echo "$c / $sec * 100" | bc -l)")
	done
	c=$(printf '%s\n' "${cpe[@]}" | median)
	row=$(printf '%-9s %10.0f %10.0f %8.0f %10.0f %10.0f %8.3fus %5.0f%% %6.2fM' "$g" \
		"$(printf '%s\n' "${off[@]}" | median)" "$(printf '%s\n' "${wr[@]}" | median)" \
		"$(printf '%s\n' "${ref[@]}" | median)" "$(printf '%s\n' "${inf[@]}" | median)" \
		"$(printf '%s\n' "${lost[@]}" | sort -g | tail -n 1)" "$c" \
		"$(printf '%s\n' "${busy[@]}" | median)" "$(echo "1 / $c" | bc -l)")
	echo "$row"
	rows+=("$row")
done
((${#glist[@]} == 0)) || {
	echo "generator: streamgen on CPU 1 writes into the recorder's ring buffer for $gsec s; the recorder on CPU 0"
	echo "writes them to its zlib trace file. refused: ring buffer full; lost: written but not in the file (worst run,"
	echo "must be 0); busy: the recorder's CPU over the window; cap/core: 1 / cpu per event. $runs runs each, medians."
}
if [[ -n $outdir ]]; then
	mkdir -p "$outdir"
	printf '%s\n' "${rows[@]}" >"$outdir/stream.txt"
fi
