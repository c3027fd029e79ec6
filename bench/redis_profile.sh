#!/bin/bash
# Where --budget 5's cost goes on redis: CPU per request, measured with perf
# rather than modelled. Each round runs redis-benchmark once untraced and
# once under `record -b redis-server --budget 5` (after the budget's
# warm-up, as redis.sh does), with `perf record -a -g` over the benchmark,
# and splits every process's samples (bench/perf_split.py): redis-server's
# own code and its kernel work, the socket yardsticks, probe traps at
# functions the windows count and at those probed all along, return
# probes, single-steps; the client's (redis-benchmark), the recorder's,
# the rest's, and the CPUs' idle time. Prints a table of medians (us per
# request) and the budget's extra over untraced: what the plan's model
# cannot tell, since it prices a hit at the start-up calibration and
# leaves the yardsticks out.
#
# Usage: bench/redis_profile.sh [-r ROUNDS] [-n REQUESTS] [-c CLIENTS] [-F HZ] [-o DIR]
#   DIR gets the table (profile.md) and each run's split (splits.txt).
# Environment: ADAPTRACE (default ./adaptrace at the top); BUDGET_EXTRA:
# more record options for the traced run. Needs root and perf.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/redis_lib.sh
. "$here/redis_lib.sh"
ADAPTRACE=${ADAPTRACE:-$here/../adaptrace}
REDIS=${REDIS:-/usr/bin/redis-server}
rounds=3 requests=100000 clients=50 hz=2999 outdir=
while getopts "r:n:c:F:o:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;; n) requests=$OPTARG ;; c) clients=$OPTARG ;; F) hz=$OPTARG ;;
	o) outdir=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
command -v redis-benchmark >/dev/null && [[ -x $REDIS ]] ||
	{ echo "redis_profile.sh: needs redis-server and redis-tools (scripts/deps.sh)" >&2; exit 2; }
command -v perf >/dev/null || { echo "redis_profile.sh: needs perf (apt-get install linux-perf)" >&2; exit 2; }
(( EUID == 0 )) || { echo "redis_profile.sh: needs root (uprobes, perf -a)" >&2; exit 3; }
[[ -z $outdir ]] || mkdir -p "$outdir" || exit 2

redis_session redis_profile.sh

# profiled NAME: one benchmark under perf; requests/s to stdout, samples to $tmp/NAME.perf.
profiled() {
	perf record -q -F "$hz" -g -a -o "$tmp/$1.perf" -- sleep 100000 2>/dev/null &
	local perf=$!
	sleep 0.3
	redis-benchmark -h 127.0.0.1 -p "$port" -n "$requests" -c "$clients" -t set,get --csv -q 2>/dev/null |
		awk -F'"' '/^"(SET|GET)"/ { s += $4; n++ } END { if (n) printf "%.0f\n", s / n; else print "fail" }'
	# perf stops when its command ends; SIGINT does not reach a background job.
	pkill -TERM -P "$perf" sleep; wait "$perf" 2>/dev/null || true
}

# split NAME [ESTIMATED]: the run's samples by process and category.
split() {
	perf script -F comm,ip,sym -i "$tmp/$1.perf" 2>/dev/null |
		python3 "$here/perf_split.py" --hz "$hz" --requests "$((2 * requests))" ${2:+--estimated "$2"}
}

# traced_run ROUND: the benchmark under the budget, after its warm-up.
traced_run() {
	"$ADAPTRACE" record -b "$REDIS" --budget 5 ${BUDGET_EXTRA:-} -o "$tmp/budget.data" >/dev/null 2>"$tmp/budget.err" &
	at_pid=$!
	recorder_up "$tmp/budget.err" "$at_pid" ||
		{ echo "redis_profile.sh: the recorder did not start: $(tail -n 1 "$tmp/budget.err")" >&2; exit 1; }
	local v
	budget_warmup "$tmp/budget.err"
	v=$(profiled budget)
	kill -INT "$at_pid"; wait "$at_pid" || true; at_pid=
	"$ADAPTRACE" report "$tmp/budget.data" --json 2>/dev/null |
		jq -r '.functions[] | select(.estimated) | .name' >"$tmp/estimated" || : >"$tmp/estimated"
	split budget "$tmp/estimated" | sed "s/^/budget $1 $v /" >>"$tmp/splits"
}

untraced_run() {
	local v
	v=$(profiled none)
	split none | sed "s/^/none $1 $v /" >>"$tmp/splits"
}

: >"$tmp/splits"
for r in $(seq "$rounds"); do
	# Every second round the other way round: a run that comes second tends to be faster here.
	if ((r % 2)); then untraced_run "$r"; traced_run "$r"; else traced_run "$r"; untraced_run "$r"; fi
	echo "redis_profile.sh: round $r/$rounds: $(awk -v r="$r" '$2 == r && $4 == "redis-server" { printf "%s %s req/s, redis %s us; ", $1, $3, $5 }' "$tmp/splits")" >&2
done

# The table: per configuration and process, medians over the rounds; then budget less none.
table() {
	awk '
	{ for (i = 5; i <= NF; i++) { split($i, kv, "="); key = $1 SUBSEP $4 SUBSEP kv[1]; v[key, ++n[key]] = kv[2] } }
	function med(key,   m, i, j, t, a) {
		m = n[key]; if (!m) return 0
		for (i = 1; i <= m; i++) a[i] = v[key, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		ncat = split("total user kernel yard win exact ret step", c, " ")
		printf "| process | configuration |"; for (k = 1; k <= ncat; k++) printf " %s |", c[k]; printf "\n|---|---|"
		for (k = 1; k <= ncat; k++) printf "---:|"; printf "\n"
		np = split("redis-server redis-benchmark adaptrace other idle", p, " ")
		for (i = 1; i <= np; i++) {
			for (cf = 1; cf <= 3; cf++) {
				name = cf == 1 ? "none" : cf == 2 ? "budget" : "budget - none"
				printf "| %s | %s |", p[i], name
				for (k = 1; k <= ncat; k++) {
					x = cf < 3 ? med(name SUBSEP p[i] SUBSEP c[k]) : med("budget" SUBSEP p[i] SUBSEP c[k]) - med("none" SUBSEP p[i] SUBSEP c[k])
					printf " %.3f |", x
				}
				printf "\n"
			}
		}
	}' "$tmp/splits"
}
{
	echo "redis_profile.sh: $rounds rounds, $requests SETs and GETs each, $clients clients, perf at $hz Hz; CPU per request in us, medians"
	echo
	table
} | tee "${outdir:-$tmp}/profile.md"
[[ -z $outdir ]] || cp "$tmp/splits" "$outdir/splits.txt"
