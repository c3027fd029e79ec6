#!/bin/bash
# How long a uprobe detach waits while adaptrace's return probes are busy.
# bench/build/detachwait's loop() calls hot() without pause. adaptrace
# traces loop, hot and other; then bpftrace attaches to other() and gets
# SIGINT, and the script times bpftrace's exit (its detach).
#   cmd: adaptrace starts the target (record -- CMD), so loop() is entered
#        after attach and its return instance stays in flight
#   pid: adaptrace attaches with -p after loop() began (no return instance)
# A detach still waiting after LIMIT seconds (default 20) is reported as
# ">LIMIT"; it ends when adaptrace stops.
#
# Usage: bench/detach_wait.sh [-l LIMIT]
# Environment: ADAPTRACE (default ./adaptrace at the top). Needs root, bpftrace.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ADAPTRACE=${ADAPTRACE:-$here/../adaptrace}
T=$here/build/detachwait
limit=20
while getopts "l:h" opt; do
	case $opt in
	l) limit=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
((EUID == 0)) || { echo "detach_wait.sh: needs root (uprobes)" >&2; exit 3; }
command -v bpftrace >/dev/null || { echo "detach_wait.sh: needs bpftrace" >&2; exit 2; }
[[ -x $T ]] || make -s -C "$here" build/detachwait >&2
tmp=$(mktemp -d /tmp/adaptrace-detach.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait; rm -rf "$tmp"' EXIT

# measure MODE: seconds bpftrace took to exit after SIGINT, or ">LIMIT".
measure() {
	local mode=$1 tgt at bt t0 t1 i
	if [[ $mode == cmd ]]; then
		"$ADAPTRACE" record -q -o "$tmp/a.data" -f hot -f loop -f other -- "$T" 1 $((limit + 30)) \
			>/dev/null 2>&1 &
		at=$!
		sleep 3
	else
		"$T" 0 $((limit + 30)) &
		tgt=$!
		pids+=("$tgt")
		sleep 1
		"$ADAPTRACE" record -q -o "$tmp/a.data" -f hot -f loop -f other -p "$tgt" >/dev/null 2>&1 &
		at=$!
		sleep 2
	fi
	pids+=("$at")
	# Background jobs of a script start with SIGINT ignored: give it back.
	env --default-signal=INT bpftrace -e "uprobe:$T:other { @c = count(); }" >"$tmp/bt.out" 2>&1 &
	bt=$!
	pids+=("$bt")
	sleep 3
	t0=$(date +%s.%N)
	kill -INT "$bt"
	for ((i = 0; i < limit * 20; i++)); do
		kill -0 "$bt" 2>/dev/null || break
		sleep 0.05
	done
	t1=$(date +%s.%N)
	if kill -0 "$bt" 2>/dev/null; then echo ">$limit"; else printf "%.2f\n" "$(echo "$t1 - $t0" | bc)"; fi
	kill -INT "$at" 2>/dev/null || true
	wait "$at" 2>/dev/null || true
	wait "$bt" 2>/dev/null || true
	[[ -z ${tgt:-} ]] || { kill "$tgt" 2>/dev/null || true; wait "$tgt" 2>/dev/null || true; }
}

echo "| adaptrace started the target with | bpftrace's detach took (s) |"
echo "|---|---:|"
echo "| record -- CMD (loop entered after attach) | $(measure cmd) |"
echo "| record -p PID (loop entered before attach) | $(measure pid) |"
