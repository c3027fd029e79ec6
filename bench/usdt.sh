#!/bin/bash
# MooBench USDT row: bench/build/moobench_usdt fires the USDT probe
# moobench:call once per monitored_method call. Each configuration runs RUNS
# times, interleaved (round by round), and the table quotes medians:
#
#   none      no probes                                          (T)
#   empty     adaptrace --empty-probes -u moobench:call: an empty (T + I)
#             BPF program on the same probe, same attach path
#   count     adaptrace record -u moobench:call: exact count      (T + I + C)
#   bpftrace  bpftrace 0.17: usdt:...:moobench:call { @calls = count(); }
#
# "x empty" = (ns/call - none) / (empty - none); goal: count <= 1.15x empty.
# The per-round ratio (runs next to each other in time) is quoted too.
#
# Usage: bench/usdt.sh [-r RUNS] [-n CALLS] [-d DEPTH] [-c CPU|none] [-o DIR]
# Environment: ADAPTRACE, BPFTRACE as for run.sh. Needs root. Mounts tracefs
# on /sys/kernel/tracing if it is not (bpftrace's USDT support needs it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
ADAPTRACE=${ADAPTRACE:-$top/adaptrace}
BPFTRACE=${BPFTRACE:-bpftrace}
MOO=$here/build/moobench_usdt

runs=5 calls=200000 depth=10 cpu=1 outdir=
while getopts "r:n:d:c:o:h" opt; do
	case $opt in
	r) runs=$OPTARG ;; n) calls=$OPTARG ;; d) depth=$OPTARG ;; c) cpu=$OPTARG ;;
	o) outdir=$OPTARG ;; *) sed -n '/^# Usage:/,/^# on /p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
(( EUID == 0 )) || { echo "usdt.sh: needs root (uprobes)" >&2; exit 3; }
[[ -x $MOO ]] || make -s -C "$here" build/moobench_usdt >&2
[[ -x $ADAPTRACE ]] || { echo "usdt.sh: $ADAPTRACE not found: run 'make' first" >&2; exit 2; }
have_bt=1
command -v "$BPFTRACE" >/dev/null || have_bt=0
if ((have_bt)) && [[ ! -e /sys/kernel/tracing/uprobe_events ]]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || have_bt=0
fi

tmp=$(mktemp -d /tmp/adaptrace-bench-usdt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
moo_args=(-q -n "$calls" -d "$depth")
[[ $cpu != none ]] && moo_args+=(-c "$cpu")
expect=$((calls * depth))
cfgs=(none empty count)
((have_bt)) && cfgs+=(bpftrace)

# run_one CONFIG: ns per call of one run, or "fail"; checks exact counts.
run_one() {
	local cfg=$1 log=$tmp/$1.log rc=0 v c=
	case $cfg in
	none) "$MOO" "${moo_args[@]}" >"$log" 2>&1 || rc=$? ;;
	empty) "$ADAPTRACE" record --empty-probes -q -o "$tmp/e.data" -u moobench:call \
		-- "$MOO" "${moo_args[@]}" >"$log" 2>&1 || rc=$? ;;
	count) "$ADAPTRACE" record -q -o "$tmp/c.data" -u moobench:call \
		-- "$MOO" "${moo_args[@]}" >"$log" 2>&1 || rc=$?
		c=$("$ADAPTRACE" report --json "$tmp/c.data" 2>/dev/null |
			grep -o '"row":"moobench:call","kind":"usdt","calls":[0-9]*' | grep -o '[0-9]*$' || true) ;;
	bpftrace) "$BPFTRACE" -e "usdt:$MOO:moobench:call { @calls = count(); }" \
		-c "$MOO ${moo_args[*]}" >"$log" 2>&1 || rc=$?
		c=$(sed -n 's/^@calls: \([0-9]*\)/\1/p' "$log") ;;
	esac
	v=$(sed -n 's/^ns_per_call=\([0-9.]*\) median.*/\1/p' "$log" | tail -1)
	if (( rc != 0 )) || [[ -z $v ]]; then
		sed 's/^/  | /' "$log" | tail -5 >&2
		echo fail
		return
	fi
	[[ $cfg == count || $cfg == bpftrace ]] && [[ $c != "$expect" ]] &&
		echo "usdt.sh: warning: $cfg counted '${c:-?}' probe hits, expected $expect" >&2
	echo "$v"
}

declare -A vals
load0=$(cut -d" " -f1-3 /proc/loadavg)
rounds=
for ((i = 1; i <= runs; i++)); do
	declare -A r=()
	for c in "${cfgs[@]}"; do
		r[$c]=$(run_one "$c")
		vals[$c]+="${r[$c]} "
		printf 'usdt.sh: run %d/%d %-8s %s ns/call\n' "$i" "$runs" "$c" "${r[$c]}" >&2
	done
	rounds+=$(awk -v n="${r[none]}" -v e="${r[empty]}" -v c="${r[count]}" \
		'BEGIN{ if (n+0==n && e+0==e && c+0==c && e>n) printf "%.2f ", (c-n)/(e-n) }')
done

# median VALUES [FORMAT]
median() { tr ' ' '\n' <<<"$1" | grep -E '^[0-9.]+$' | sort -g | awk -v f="${2:-%.1f}" \
	'{a[NR]=$1} END{ if(!NR){print "-"; exit} printf f "\n", NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2 }'; }
declare -A med
for c in "${cfgs[@]}"; do med[$c]=$(median "${vals[$c]}"); done
label() {
	case $1 in
	none) echo "USDT: no probes (T)" ;; empty) echo "USDT: empty BPF program on the probe (T+I)" ;;
	count) echo "USDT: adaptrace -u count (T+I+C)" ;; bpftrace) echo "USDT: bpftrace 0.17 count()" ;;
	esac
}
{
	echo "| configuration | ns/call (median of $runs) | runs | cost above no-probes | x empty |"
	echo "|---|---:|---|---:|---:|"
	for c in "${cfgs[@]}"; do
		awk -v l="$(label "$c")" -v m="${med[$c]}" -v runs="${vals[$c]}" -v n="${med[none]}" \
			-v e="${med[empty]}" -v c="$c" 'BEGIN{
			cost = c == "none" ? "-" : sprintf("%.1f ns", m - n)
			x = (c == "none" || e - n <= 0) ? "-" : sprintf("%.2fx", (m - n) / (e - n))
			printf "| %s | %s | %s | %s | %s |\n", l, m, runs, cost, x }'
	done
	echo
	echo "moobench_usdt: monitored_method recursing $depth deep with a USDT probe, $calls" \
		"top-level calls ($expect probe hits) per run, first half dropped; CPU $cpu;" \
		"$(nproc) CPUs, kernel $(uname -r); load average at start $load0."
	echo "Per-round ratio count/empty (cost above no-probes): ${rounds:-none}(median" \
		"$(median "$rounds" %.2f)x)."
} | tee ${outdir:+"$outdir/moobench-usdt.md"}
