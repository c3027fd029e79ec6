#!/bin/bash
# redis throughput under --budget 5, measured in alternating blocks of one
# continuous load. bench/redis.sh starts a redis-benchmark run per
# measurement, and on a shared host two runs 40 s apart differ by up to
# 20 % untraced. Here one redis-server and one looping redis-benchmark run
# throughout; the recorder is started and stopped between blocks, and each
# traced block is compared with the mean of the untraced blocks just before
# and after it, which cancels a drift of the host's speed that is slow
# against a block. Throughput is redis's commands per second (INFO's
# total_commands_processed over the block).
#
# Usage: bench/redis_blocks.sh [-p PAIRS] [-s SECONDS] [-n REQUESTS] [-c CLIENTS] [-o RESULTS_DIR]
#   PAIRS: traced blocks (default 10), each between two untraced ones
#   SECONDS: a block's length (default 8)
#   REQUESTS: redis-benchmark's requests per test (-n, default 50000): its
#   SET and GET tests alternate every second or so, several times a block
#   RESULTS_DIR gets the table (redis_blocks.md) and each block's figures
# Environment: ADAPTRACE (default ./adaptrace at the top); BUDGET_EXTRA:
# more record options. Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/redis_lib.sh
. "$here/redis_lib.sh"
ADAPTRACE=${ADAPTRACE:-$here/../adaptrace}
REDIS=${REDIS:-/usr/bin/redis-server}
pairs=10 secs=8 requests=50000 clients=50 outdir=
while getopts "p:s:n:c:o:h" opt; do
	case $opt in
	p) pairs=$OPTARG ;; s) secs=$OPTARG ;; n) requests=$OPTARG ;; c) clients=$OPTARG ;;
	o) outdir=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
for v in "$pairs" "$secs" "$requests" "$clients"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "redis_blocks.sh: -p, -s, -n and -c take a positive whole number, not '$v'" >&2; exit 2; }
done
command -v redis-benchmark >/dev/null && [[ -x $REDIS ]] ||
	{ echo "redis_blocks.sh: needs redis-server and redis-tools (scripts/deps.sh)" >&2; exit 2; }
(( EUID == 0 )) || { echo "redis_blocks.sh: needs root (uprobes)" >&2; exit 3; }
[[ -z $outdir ]] || mkdir -p "$outdir" || exit 2

tmp=$(mktemp -d /tmp/adaptrace-blocks.XXXXXX)
redis_start
at_pid= lpid=
cleanup() {
	set +e # the killed jobs' statuses are not failures
	[[ -n $at_pid ]] && kill -INT "$at_pid" 2>/dev/null && wait "$at_pid" 2>/dev/null
	# redis-benchmark -l outlives a TERM.
	[[ -n $lpid ]] && kill -KILL "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
redis_wait redis_blocks.sh

redis-benchmark -h 127.0.0.1 -p "$port" -n "$requests" -c "$clients" -t set,get -l -q \
	>/dev/null 2>&1 &
lpid=$!
hz=$(getconf CLK_TCK)
commands() { redis-cli -p "$port" info stats | awk -F: '/^total_commands_processed:/ { print $2 + 0 }'; }

# block: commands/s over $secs, then redis's and the recorder's CPU per command (us).
block() {
	local c0 c1 t0 t1 r0 r1 a0 a1
	kill -0 "$lpid" 2>/dev/null || { echo "redis_blocks.sh: redis-benchmark stopped; is redis-server still up?" >&2; exit 1; }
	c0=$(commands) t0=$(date +%s%N) r0=$(cpu_ticks "$rpid") a0=$(cpu_ticks "${at_pid:-}")
	sleep "$secs"
	c1=$(commands) t1=$(date +%s%N) r1=$(cpu_ticks "$rpid") a1=$(cpu_ticks "${at_pid:-}")
	awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) -v r=$((r1 - r0)) -v a=$((a1 - a0)) -v hz="$hz" \
		'BEGIN { if (c < 1) c = 1; printf "%.0f %.2f %.2f\n", c / (t / 1e9), r * 1e6 / hz / c, a * 1e6 / hz / c }'
}

start_recorder() {
	"$ADAPTRACE" record -b "$REDIS" --budget 5 ${BUDGET_EXTRA:-} -o "$tmp/b.data" \
		>/dev/null 2>"$tmp/b.err" &
	at_pid=$!
	recorder_up "$tmp/b.err" "$at_pid" || return 0 # stop_recorder reports it
	# The budget acts after 3 s over it; then 3 s more while the old links go.
	local acted=0
	for _ in $(seq 300); do
		((acted == 0)) && grep -q 'coarse budget: ' "$tmp/b.err" && acted=$SECONDS
		((acted > 0 && SECONDS - acted >= 3)) && break
		kill -0 "$at_pid" 2>/dev/null || return 0
		sleep 0.1
	done
}

# stop_recorder N: false when the recorder had not traced the whole block.
stop_recorder() {
	local rc=0 ok=1
	kill -0 "$at_pid" 2>/dev/null || { ok=0; echo "redis_blocks.sh: the recorder exited early: $(tail -n 2 "$tmp/b.err" | tr '\n' ' ')" >&2; }
	kill -INT "$at_pid" 2>/dev/null; wait "$at_pid" || rc=$?; at_pid=
	((rc == 0)) || { ok=0; echo "redis_blocks.sh: the recorder exited with status $rc" >&2; }
	[[ -z $outdir ]] || cp "$tmp/b.err" "$outdir/block-$1.err"
	rm -f "$tmp/b.data"
	sleep 1
	((ok))
}

sleep 3 # the load's first clients connect
read -r u_prev ur _ <<<"$(block)"
echo "redis_blocks.sh: untraced: $u_prev commands/s; redis $ur us/command" >&2
ratios=() traced=() untraced=("$u_prev") rcpu=() acpu=()
for ((i = 1; i <= pairs; i++)); do
	start_recorder
	read -r t tr ta <<<"$(block)"
	traced_ok=1
	stop_recorder "$i" || traced_ok=0
	read -r u ur _ <<<"$(block)"
	if ((!traced_ok)); then
		echo "redis_blocks.sh: pair $i/$pairs left out" >&2
		u_prev=$u
		continue
	fi
	ratio=$(awk -v t="$t" -v a="$u_prev" -v b="$u" 'BEGIN { printf "%.1f", 200 * t / (a + b) }')
	echo "redis_blocks.sh: pair $i/$pairs: --budget 5 $t commands/s (redis $tr us/command, recorder $ta us); untraced $u_prev and $u (redis $ur us): $ratio %" >&2
	ratios+=("$ratio") traced+=("$t") untraced+=("$u") rcpu+=("$tr") acpu+=("$ta")
	u_prev=$u
done
rmed=$(med "${ratios[@]}")
[[ $rmed == - ]] || rmed="$rmed %"
{
	echo "| $pairs blocks of ${secs} s | commands/s (median) | vs untraced (per pair, median) | pairs at 93 % or more | redis CPU us/command | recorder CPU us/command |"
	echo "|---|---:|---:|---:|---:|---:|"
	echo "| untraced | $(med "${untraced[@]}") | - | - | - | - |"
	echo "| adaptrace -b --budget 5 | $(med "${traced[@]}") | $rmed | $(printf '%s\n' "${ratios[@]}" | awk '$1 >= 93' | wc -l) of ${#ratios[@]} | $(med "${rcpu[@]}") | $(med "${acpu[@]}") |"
	echo
	echo "per pair: a traced block against the mean of the untraced blocks before and after it;"
	echo "one redis-benchmark -l -n $requests -c $clients -t set,get throughout; $(nproc) CPUs, kernel $(uname -r)."
	echo "ratios: ${ratios[*]}"
} | tee ${outdir:+"$outdir/redis_blocks.md"}
