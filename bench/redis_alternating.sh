#!/bin/bash
# Short alternating phases under --budget 5: records redis-server with -b
# over all its functions, warms up as redis.sh does, then sends runs of RUN
# SETs and RUN GETs in turn for SECONDS, and compares the recording's
# setCommand and getCommand (estimated from windows) with the requests sent.
# Runs shorter than two of the duty cycle's looks (0.2 s) are what its
# early windows can miss: README, "Windows opened early".
#
# Usage: bench/redis_alternating.sh [-n RUN] [-s SECONDS] [-o OUT.data]
#   -n RUN: requests a run (default 20000: some 0.15 s on a host serving
#      140,000 requests/s)
#   -s SECONDS: how long to alternate (default 8)
#   -o OUT.data: keep the recording (and OUT.err, the recorder's messages)
# Prints one line: the sent and recorded counts and the errors in %.
# Environment: ADAPTRACE (default ./adaptrace at the top); REDIS (default
# /usr/bin/redis-server); ADAPTRACE_DEBUG=1 keeps the duty cycle's debug
# lines in OUT.err.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/redis_lib.sh
. "$here/redis_lib.sh"
ADAPTRACE=${ADAPTRACE:-$here/../adaptrace}
REDIS=${REDIS:-/usr/bin/redis-server}
run=20000 seconds=8 out='' clients=50
while getopts "n:s:o:h" opt; do
	case $opt in
	n) run=$OPTARG ;; s) seconds=$OPTARG ;; o) out=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
[[ $run =~ ^[1-9][0-9]*$ && $seconds =~ ^[1-9][0-9]*$ ]] ||
	{ echo "redis_alternating.sh: -n and -s take positive whole numbers" >&2; exit 2; }
if ! command -v redis-benchmark >/dev/null || [[ ! -x $REDIS ]]; then
	echo "redis_alternating.sh: needs redis-server and redis-tools (scripts/deps.sh)" >&2
	exit 2
fi
((EUID == 0)) || { echo "redis_alternating.sh: needs root (uprobes)" >&2; exit 3; }

redis_session redis_alternating.sh
"$ADAPTRACE" record -b "$REDIS" --budget 5 -o "$tmp/alt.data" >/dev/null 2>"$tmp/alt.err" &
at_pid=$!
recorder_up "$tmp/alt.err" "$at_pid" ||
	{ echo "redis_alternating.sh: the recorder did not start: $(tail -n 1 "$tmp/alt.err")" >&2; exit 1; }
budget_warmup "$tmp/alt.err"
sets=$warm_sets gets=$warm_sets
end=$(($(now_us) + seconds * 1000000))
while (($(now_us) < end)); do
	redis-benchmark -h 127.0.0.1 -p "$port" -n "$run" -c "$clients" -t set -q >/dev/null 2>&1
	redis-benchmark -h 127.0.0.1 -p "$port" -n "$run" -c "$clients" -t get -q >/dev/null 2>&1
	sets=$((sets + run)) gets=$((gets + run))
done
kill -INT "$at_pid"
rc=0
wait "$at_pid" || rc=$?
at_pid=
((rc == 0)) || { echo "redis_alternating.sh: the recorder exited with status $rc" >&2; exit 1; }
"$ADAPTRACE" report "$tmp/alt.data" --json | jq -r --argjson s "$sets" --argjson g "$gets" '
	(.functions | map({key: .name, value: .}) | from_entries) as $f |
	def one($n; $sent): ($f[$n] // {calls: 0}) as $e |
		"\($n) \($e.calls) of \($sent) (\((100 * ($e.calls - $sent) / $sent) * 10 | round / 10) %\(if $e.estimated then ", estimated" else "" end))";
	"\(one("setCommand"; $s)), \(one("getCommand"; $g))"'
if [[ -n $out ]]; then
	cp "$tmp/alt.data" "$out"
	cp "$tmp/alt.err" "${out%.data}.err"
fi
