#!/bin/bash
# A real workload: Debian's redis-server under redis-benchmark on loopback,
# untraced and traced with -b over every function of redis-server (.dynsym),
# with and without an overhead budget. Prints requests/s medians and the
# throughput relative to untraced. Configurations are interleaved.
#
# Usage: bench/redis.sh [-r RUNS] [-n REQUESTS] [-c CLIENTS] [-k CONFIG,...] [-o RESULTS_DIR] [-t]
#   configurations: none, coarse (every function), budget (--budget 5)
#   CLIENTS: redis-benchmark's connections (default 50)
#   RESULTS_DIR gets the table (redis.md) and the recordings, named by the
#   SETs sent (as many GETs), for bench/counts.sh, each with the recorder's
#   stderr (.err)
#   -t: count the turns of redis's event loop (epoll_wait calls, with perf)
#   per request, and compare beforeSleep's estimate (once a turn) with them.
#   A recording's name then also gets the turns made while it ran
#   (NAME-SETS-sets-TURNS-turns.data), for bench/counts.sh -1. The syscall
#   tracepoint slows every system call: compare its throughput only with
#   other -t runs.
# Environment: ADAPTRACE (default ./adaptrace at the top); BUDGET_EXTRA: more
# record options for the budget configuration (BUDGET_EXTRA='--interval 5':
# one probing window a second instead of five). Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ADAPTRACE=${ADAPTRACE:-$here/../adaptrace}
REDIS=${REDIS:-/usr/bin/redis-server}
runs=3 requests=200000 configs=none,coarse,budget outdir= turns=0 clients=50
while getopts "r:n:c:k:o:th" opt; do
	case $opt in
	r) runs=$OPTARG ;; n) requests=$OPTARG ;; k) configs=$OPTARG ;; o) outdir=$OPTARG ;;
	c) clients=$OPTARG ;;
	t) turns=1 ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
command -v redis-benchmark >/dev/null && [[ -x $REDIS ]] ||
	{ echo "redis.sh: needs redis-server and redis-tools (scripts/deps.sh)" >&2; exit 2; }
[[ -z $outdir ]] || mkdir -p "$outdir" || exit 2
((turns == 0)) || command -v perf >/dev/null ||
	{ echo "redis.sh: -t needs perf (apt-get install linux-perf)" >&2; exit 2; }
(( EUID == 0 )) || { echo "redis.sh: needs root (uprobes)" >&2; exit 3; }

tmp=$(mktemp -d /tmp/adaptrace-redis.XXXXXX)
# Below the ephemeral range (32768-60999), where a client's port may sit.
port=$((20000 + $$ % 12000))
"$REDIS" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
	--logfile "$tmp/redis.log" &
rpid=$!
at_pid=
cleanup() {
	[[ -n $at_pid ]] && kill -INT "$at_pid" 2>/dev/null && wait "$at_pid" 2>/dev/null
	kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
up=0
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && { up=1; break; }; sleep 0.1; done
((up)) || { echo "redis.sh: redis-server did not start on port $port: $(tail -n 1 "$tmp/redis.log")" >&2; exit 1; }

# bench_once: requests/s of SET and GET together (the mean of the two).
# With -t, the event loop's turns per request go to $tmp/turns.
bench_once() {
	local perf=
	if ((turns)); then
		perf stat -x, -e syscalls:sys_enter_epoll_wait -p "$rpid" -o "$tmp/perf" -- sleep 100000 2>/dev/null &
		perf=$!
		sleep 0.5
	fi
	redis-benchmark -h 127.0.0.1 -p "$port" -n "$requests" -c "$clients" -t set,get --csv -q 2>/dev/null |
		awk -F'"' '/^"(SET|GET)"/ { s += $4; n++ } END { if (n) printf "%.0f\n", s / n; else print "fail" }'
	if [[ -n $perf ]]; then
		# perf stat reports when its command ends; SIGINT does not reach a background job.
		pkill -TERM -P "$perf" sleep; wait "$perf" 2>/dev/null
		awk -F, -v n="$((2 * requests))" '/epoll_wait/ { printf "%.3f\n", $1 / n }' "$tmp/perf" >"$tmp/turns"
	fi
}

# count_check FILE SETS: setCommand's count (exact or estimated) against the SETs sent.
count_check() {
	"$ADAPTRACE" report "$1" --json 2>/dev/null | jq -r --argjson n "$2" '
		first(.functions[] | select(.name == "setCommand")) |
		"redis.sh: setCommand \(.calls) (\(if .estimated then "estimated, 95 % CI \(.calls_ci95)" else "exact" end)) for \($n) SETs sent: \((100 * (.calls - $n) / $n * 10 | round) / 10) %"' >&2 || true
	"$ADAPTRACE" report "$1" --json 2>/dev/null |
		jq -r '"redis.sh: \([.functions[] | select(.estimated)] | length) of \(.functions | length) called functions estimated"' >&2 || true
}

# turn_check FILE SETS: beforeSleep (once a turn of the event loop) against the turns counted.
turn_check() {
	"$ADAPTRACE" report "$1" --json 2>/dev/null | jq -r --argjson n "$((2 * $2))" --arg t "$(cat "$tmp/turns")" '
		first(.functions[] | select(.name == "beforeSleep")) |
		"redis.sh: beforeSleep \(.calls / $n * 1000 | round / 1000) per request (\(if .estimated then "estimated by \(.estimated_by)" else "exact" end)); the loop made \($t) turns per request"' >&2 || true
}

run_one() {
	local cfg=$1 v
	case $cfg in
	none)
		bench_once
		((turns)) && echo "redis.sh: untraced: the loop made $(cat "$tmp/turns") turns per request" >&2
		: ;;
	coarse | budget)
		local extra=(--select none)
		[[ $cfg == budget ]] && extra=(--budget 5 ${BUDGET_EXTRA:-})
		# Not -q: the budget's "coarse budget:" line tells when it has acted.
		"$ADAPTRACE" record -b "$REDIS" "${extra[@]}" -o "$tmp/$cfg.data" >/dev/null 2>"$tmp/$cfg.err" &
		at_pid=$!
		for _ in $(seq 600); do grep -q '^adaptrace: tracing ' "$tmp/$cfg.err" && break; sleep 0.1; done
		local sets=0 rperf= rturns=
		if ((turns)); then
			perf stat -x, -e syscalls:sys_enter_epoll_wait -p "$rpid" -o "$tmp/perf-rec" -- sleep 100000 2>/dev/null &
			rperf=$!
		fi
		if [[ $cfg == budget ]]; then
			# The budget acts after 3 s over it: warm up under load until it
			# has, and 3 s more while the old links are released.
			local acted=0
			for _ in $(seq 60); do
				if ((acted == 0)) && grep -q 'coarse budget: ' "$tmp/$cfg.err"; then
					acted=$SECONDS
				fi
				((acted > 0 && SECONDS - acted >= 3)) && break
				redis-benchmark -h 127.0.0.1 -p "$port" -n 2000 -c "$clients" -t set,get -q >/dev/null 2>&1
				sets=$((sets + 2000))
			done
		fi
		v=$(bench_once)
		((turns)) && echo "redis.sh: $cfg: the loop made $(cat "$tmp/turns") turns per request" >&2
		sets=$((sets + requests))
		# The recorder runs until told to stop: gone already means it failed.
		local rc=0
		kill -0 "$at_pid" 2>/dev/null || echo "redis.sh: the recorder exited early: $(tail -n 2 "$tmp/$cfg.err" | tr '\n' ' ')" >&2
		kill -INT "$at_pid" 2>/dev/null; wait "$at_pid" || rc=$?; at_pid=
		((rc == 0)) || echo "redis.sh: the recorder exited with status $rc" >&2
		if [[ -n $rperf ]]; then
			pkill -TERM -P "$rperf" sleep; wait "$rperf" 2>/dev/null
			rturns=-$(awk -F, '/epoll_wait/ { print $1 }' "$tmp/perf-rec")-turns
		fi
		[[ $cfg == budget ]] && count_check "$tmp/$cfg.data" "$sets"
		((turns)) && turn_check "$tmp/$cfg.data" "$sets"
		# Keep the recording, named by its SET count (and turns), for bench/counts.sh.
		if [[ -n $outdir ]]; then
			local name=$outdir/$cfg-$sets-sets$rturns.$(date +%s%N)
			cp "$tmp/$cfg.data" "$name.data"
			cp "$tmp/$cfg.err" "$name.err"
		fi
		echo "$v" ;;
	esac
}

IFS=, read -r -a cfgs <<<"$configs"
declare -A vals
for ((i = 1; i <= runs; i++)); do
	for c in "${cfgs[@]}"; do
		v=$(run_one "$c")
		vals[$c]+="$v "
		echo "redis.sh: run $i/$runs $c: $v requests/s" >&2
	done
done
med() { tr ' ' '\n' <<<"$1" | { grep -E '^[0-9]+$' || true; } | sort -n | awk '{a[NR]=$1} END{if(!NR)print "-"; else print NR%2?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
nfuncs=$("$ADAPTRACE" list -b "$REDIS" 2>&1 >/dev/null | grep -o '^[0-9]* functions' || true)
{
	echo "| configuration | requests/s (median of $runs) | vs untraced |"
	echo "|---|---:|---:|"
	base=$(med "${vals[none]:-}")
	for c in "${cfgs[@]}"; do
		m=$(med "${vals[$c]}")
		case $c in none) l="untraced" ;; coarse) l="adaptrace -b, all $nfuncs, coarse" ;;
		budget) l="adaptrace -b, all $nfuncs, --budget 5" ;; esac
		awk -v l="$l" -v m="$m" -v b="$base" 'BEGIN{ r = (b+0 > 0 && m+0 > 0) ? sprintf("%.1f %%", 100 * m / b) : "-"; printf "| %s | %s | %s |\n", l, m, r }'
	done
	echo
	echo "redis-benchmark -n $requests -c $clients -t set,get on loopback; requests/s is the mean of SET and GET; $(nproc) CPUs, kernel $(uname -r)."
} | tee ${outdir:+"$outdir/redis.md"}
