#!/bin/bash
# A real workload: Debian's redis-server under redis-benchmark on loopback,
# untraced and traced with -b over every function of redis-server (.dynsym),
# with and without an overhead budget. Prints requests/s medians and the
# throughput relative to untraced, also per pair (each traced run against the
# untraced run of its round) and either side (against the mean of the
# untraced runs before and after it), and CPU time per request: redis-server's,
# the recorder's and all CPUs'. On a shared host the CPU per request moves far
# less between runs than requests/s. Configurations are interleaved, every
# second round in reverse order (none,budget then budget,none), since a run
# that comes second tends to be the faster here.
#
# Usage: bench/redis.sh [-r RUNS] [-n REQUESTS] [-c CLIENTS] [-k CONFIG,...] [-o RESULTS_DIR] [-t] [-R REQUESTS] [-F]
#   configurations: none, coarse (every function), budget (--budget 5), again
#   (untraced again, paired with the untraced run of its round like a traced
#   one: the host's own spread, the floor under any traced figure), alt
#   (--budget 5 again, with ADAPTRACE_ALT and ALT_EXTRA: a variant measured
#   in the same round)
#   CLIENTS: redis-benchmark's connections (default 50)
#   RESULTS_DIR gets the table (redis.md), the runs in order (runs.txt, for
#   bench/redis_pool.py to pool rounds) and the recordings, named by the
#   SETs sent (as many GETs), for bench/counts.sh, each with the recorder's
#   stderr (.err)
#   -R REQUESTS (with -t and -o): first record bench/counts.sh -1's two
#   full-probe references on this same redis-server, with REQUESTS SETs and
#   GETs: at CLIENTS connections (DIR/refN-*.data) and at one (DIR/ref1-*.data).
#   A redis-server seeds its hash tables at random, so some functions' calls
#   per request differ from one server to the next (dictSdsKeyCaseCompare:
#   1 or 1.5, as the command table's buckets fall); references from another
#   server would count that as an error of the estimates.
#   -F: keep the configurations' order in every round (as before stop 56)
#   -t: count the turns of redis's event loop (epoll_wait calls, with perf)
#   per request, and compare beforeSleep's estimate (once a turn) with them.
#   A recording's name then also gets the turns made while it ran
#   (NAME-SETS-sets-TURNS-turns.data), for bench/counts.sh -1. The syscall
#   tracepoint slows every system call: compare its throughput only with
#   other -t runs.
# Environment: ADAPTRACE (default ./adaptrace at the top); BUDGET_EXTRA: more
# record options for the budget configuration (BUDGET_EXTRA='--interval 5':
# one probing window a second instead of five); ADAPTRACE_ALT and ALT_EXTRA:
# the alt configuration's binary and options; AGAIN_GAP: seconds to wait
# before each run of again, as long as the budget's warm-up takes. Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/redis_lib.sh
. "$here/redis_lib.sh"
ADAPTRACE=${ADAPTRACE:-$here/../adaptrace}
REDIS=${REDIS:-/usr/bin/redis-server}
runs=3 requests=200000 configs=none,coarse,budget outdir= turns=0 clients=50 refreq= save_as= fixed=0
while getopts "r:n:c:k:o:tR:Fh" opt; do
	case $opt in
	r) runs=$OPTARG ;; n) requests=$OPTARG ;; k) configs=$OPTARG ;; o) outdir=$OPTARG ;;
	c) clients=$OPTARG ;;
	t) turns=1 ;;
	F) fixed=1 ;;
	R) refreq=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
command -v redis-benchmark >/dev/null && [[ -x $REDIS ]] ||
	{ echo "redis.sh: needs redis-server and redis-tools (scripts/deps.sh)" >&2; exit 2; }
[[ -z $outdir ]] || mkdir -p "$outdir" || exit 2
((turns == 0)) || command -v perf >/dev/null ||
	{ echo "redis.sh: -t needs perf (apt-get install linux-perf)" >&2; exit 2; }
(( EUID == 0 )) || { echo "redis.sh: needs root (uprobes)" >&2; exit 3; }
[[ -z $refreq ]] || { [[ $refreq =~ ^[1-9][0-9]*$ ]] && ((turns)) && [[ -n $outdir ]]; } ||
	{ echo "redis.sh: -R takes a number of requests, and needs -t and -o" >&2; exit 2; }

redis_session redis.sh

hz=$(getconf CLK_TCK)
# busy_ticks: all CPUs' time not idle, steal left out (the host's, not ours).
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# bench_once: requests/s of SET and GET together (the mean of the two),
# then CPU per request: redis-server's, the recorder's and all CPUs' (us).
# With -t, the event loop's turns per request go to $tmp/turns.
bench_once() {
	local perf=
	if ((turns)); then
		perf stat -x, -e syscalls:sys_enter_epoll_wait -p "$rpid" -o "$tmp/perf" -- sleep 100000 2>/dev/null &
		perf=$!
		sleep 0.5
	fi
	local r0 a0 m0 r1 a1 m1 v
	r0=$(cpu_ticks "$rpid") a0=$(cpu_ticks "${at_pid:-}") m0=$(busy_ticks)
	v=$(redis-benchmark -h 127.0.0.1 -p "$port" -n "$requests" -c "$clients" -t set,get --csv -q 2>/dev/null |
		awk -F'"' '/^"(SET|GET)"/ { s += $4; n++ } END { if (n) printf "%.0f\n", s / n; else print "fail" }')
	r1=$(cpu_ticks "$rpid") a1=$(cpu_ticks "${at_pid:-}") m1=$(busy_ticks)
	# CPU per request in us: redis-server's, the recorder's, all CPUs' busy time.
	awk -v v="$v" -v r=$((r1 - r0)) -v a=$((a1 - a0)) -v m=$((m1 - m0)) -v n=$((2 * requests)) -v hz="$hz" \
		'BEGIN { u = 1e6 / hz / n; printf "%s %.2f %.2f %.2f\n", v, r * u, a * u, m * u }'
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

# turn_check FILE SETS TURNS: beforeSleep (once a turn of the event loop) against the
# TURNS counted over the same recording, warm-up included (its short benchmarks make
# fewer turns per request than the measured one: 0.59 against 0.66 here).
turn_check() {
	"$ADAPTRACE" report "$1" --json 2>/dev/null | jq -r --argjson n "$((2 * $2))" --argjson t "$3" '
		first(.functions[] | select(.name == "beforeSleep")) |
		"redis.sh: beforeSleep \(.calls / $n * 1000 | round / 1000) per request (\(if .estimated then "estimated by \(.estimated_by)" else "exact" end)); the loop made \($t / $n * 1000 | round / 1000) turns per request over the recording"' >&2 || true
}

run_one() {
	local cfg=$1 v
	case $cfg in
	none | again)
		[[ $cfg == again ]] && sleep "${AGAIN_GAP:-0}"
		bench_once
		((turns)) && echo "redis.sh: untraced: the loop made $(cat "$tmp/turns") turns per request" >&2
		: ;;
	coarse | budget | alt)
		local extra=(--select none) bin=$ADAPTRACE
		[[ $cfg == budget ]] && extra=(--budget 5 ${BUDGET_EXTRA:-})
		[[ $cfg == alt ]] && extra=(--budget 5 ${ALT_EXTRA:-}) bin=${ADAPTRACE_ALT:-$ADAPTRACE}
		# Not -q: the budget's "coarse budget:" line tells when it has acted.
		"$bin" record -b "$REDIS" "${extra[@]}" -o "$tmp/$cfg.data" >/dev/null 2>"$tmp/$cfg.err" &
		at_pid=$!
		recorder_up "$tmp/$cfg.err" "$at_pid" || true # an early exit is reported below
		local sets=0 rperf= rturns= nturns=
		if ((turns)); then
			perf stat -x, -e syscalls:sys_enter_epoll_wait -p "$rpid" -o "$tmp/perf-rec" -- sleep 100000 2>/dev/null &
			rperf=$!
		fi
		if [[ $cfg != coarse ]]; then
			budget_warmup "$tmp/$cfg.err"
			sets=$warm_sets
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
			nturns=$(awk -F, '/epoll_wait/ { print $1 }' "$tmp/perf-rec")
			rturns=-$nturns-turns
		fi
		[[ $cfg != coarse ]] && count_check "$tmp/$cfg.data" "$sets"
		[[ -n $nturns ]] && turn_check "$tmp/$cfg.data" "$sets" "$nturns"
		# Keep the recording, named by its SET count (and turns), for bench/counts.sh.
		if [[ -n $outdir ]]; then
			local name=$outdir/${save_as:-$cfg}-$sets-sets$rturns.$(date +%s%N)
			cp "$tmp/$cfg.data" "$name.data"
			cp "$tmp/$cfg.err" "$name.err"
		fi
		echo "$v" ;;
	esac
}

# The host's state: what the socket tracepoints under the budget's yardsticks
# cost an event (empty programs, bench/sockfloor.c), before and after the
# runs: this VM has a fast and a slow state (README: a uprobe hit costs
# 0.6 us in one, 4.9 us in the other), which move every figure below.
sockfloor() {
	"$here/build/sockfloor" -r 5 -n 20000 -o "$here/build/sockfloor.bpf.o" 2>/dev/null |
		awk -F'[ =]' '/config=target/ { print $NF }' || true
}
floor_before=
if make -s -C "$here" build/sockfloor build/sockfloor.bpf.o >/dev/null 2>&1; then
	sockfloor >/dev/null # the first attach after a build ran 4 times slower once
	floor_before=$(sockfloor)
fi
IFS=, read -r -a cfgs <<<"$configs"
if [[ -n $refreq ]]; then
	# counts.sh -1's references, on this redis-server (see -R above).
	saved=("$requests" "$clients")
	requests=$refreq save_as=ref$clients
	run_one coarse >/dev/null
	clients=1 save_as=ref1
	run_one coarse >/dev/null
	requests=${saved[0]} clients=${saved[1]} save_as=
	echo "redis.sh: references in $outdir/ref$clients-* and $outdir/ref1-*" >&2
fi
declare -A vals rcpu acpu mcpu pair side
# ratio A B: A as a percentage of B, one decimal.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }
pending=() # traced runs since the last untraced one, as CONFIG:REQUESTS/S
[[ -z $outdir ]] || : >"$outdir/runs.txt"
for ((i = 1; i <= runs; i++)); do
	# Every second round runs in reverse, so a traced run comes first in half
	# the pairs: a run that comes second tends to be the faster here (-F: not).
	order=("${cfgs[@]}")
	if ((!fixed && i % 2 == 0)); then
		order=()
		for ((j = ${#cfgs[@]} - 1; j >= 0; j--)); do order+=("${cfgs[j]}"); done
	fi
	round_none= round_traced=()
	for c in "${order[@]}"; do
		read -r v r a m <<<"$(run_one "$c")"
		vals[$c]+="$v " rcpu[$c]+="$r " acpu[$c]+="$a " mcpu[$c]+="$m "
		# Each traced run against the untraced run of its round (per pair), and
		# against the mean of the untraced runs on either side.
		if [[ $v =~ ^[0-9]+$ ]]; then
			if [[ $c == none ]]; then
				for p in "${pending[@]}"; do
					[[ -z ${last_none:-} ]] ||
						side[${p%%:*}]+="$(ratio "$((2 * ${p#*:}))" "$((last_none + v))") "
				done
				for p in "${round_traced[@]}"; do
					pair[${p%%:*}]+="$(ratio "${p#*:}" "$v") "
				done
				pending=() round_traced=() last_none=$v round_none=$v
			else
				pending+=("$c:$v")
				if [[ -n $round_none ]]; then
					pair[$c]+="$(ratio "$v" "$round_none") "
				else
					round_traced+=("$c:$v")
				fi
			fi
		fi
		line="redis.sh: run $i/$runs $c: $v requests/s; CPU per request: redis $r us, recorder $a us, all CPUs $m us"
		echo "$line" >&2
		# For bench/redis_pool.py, which pools rounds.
		[[ -z $outdir ]] || echo "$line" >>"$outdir/runs.txt"
	done
done
pct() { awk -v m="$1" -v b="$2" 'BEGIN { print (b+0 > 0 && m+0 > 0) ? sprintf("%.1f %%", 100 * m / b) : "-" }'; }
nfuncs=$("$ADAPTRACE" list -b "$REDIS" 2>&1 >/dev/null | grep -o '^[0-9]* functions' || true)
{
	echo "| configuration | requests/s (median of $runs) | vs untraced | per pair (median) | either side (median) | redis CPU us/request | vs untraced | recorder CPU us/request | all CPUs us/request |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	base=$(med "${vals[none]:-}") rbase=$(med "${rcpu[none]:-}")
	for c in "${cfgs[@]}"; do
		m=$(med "${vals[$c]}") rm=$(med "${rcpu[$c]}")
		p=$(med "${pair[$c]:-}") e=$(med "${side[$c]:-}")
		case $c in none) l="untraced" p=- e=- ;; coarse) l="adaptrace -b, all $nfuncs, coarse" ;;
		budget) l="adaptrace -b, all $nfuncs, --budget 5" ;;
		again) l="untraced again (the host's spread)" ;;
		alt) l="adaptrace -b, all $nfuncs, --budget 5, variant" ;; esac
		[[ $p == - ]] || p="$p %"
		[[ $e == - ]] || e="$e %"
		echo "| $l | $m | $(pct "$m" "$base") | $p | $e | $rm | $(pct "$rm" "$rbase") | $(med "${acpu[$c]}") | $(med "${mcpu[$c]}") |"
	done
	echo
	echo "redis-benchmark -n $requests -c $clients -t set,get on loopback; requests/s is the mean of SET and GET;"
	echo "per pair: each traced run against the untraced run of its round (every second round in reverse order"
	echo "unless -F); either side: against the mean of the untraced runs before and after it; CPU is user and"
	echo "system time over the benchmark"
	echo "(all CPUs: busy time, steal left out); $(nproc) CPUs, kernel $(uname -r)."
	if [[ -n $floor_before ]]; then
		floor_after=$(sockfloor)
		echo "Host state: an empty program on the socket tracepoints cost ${floor_before} ns an event before the runs, ${floor_after:-?} ns after (bench/sockfloor)."
	fi
} | tee ${outdir:+"$outdir/redis.md"}
