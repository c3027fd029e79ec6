#!/bin/bash
# MooBench-style overhead benchmark: runs bench/build/moobench under each
# configuration RUNS times (interleaved, so that drift in the machine's load
# hits every configuration alike) and prints a markdown table of the medians.
#
#   none      no probes                                           (T)
#   floor     adaptrace --empty-probes: empty BPF programs on the  (T + I)
#             same entry and return sites, same attach path
#   coarse    adaptrace record: counts + latency histograms        (T + I + C)
#   bpftrace  bpftrace 0.17: per-tid per-depth start time, count() and hist()
# Detail phase (issue 4; run with -t 2000 -k none,coarse,detail,budget,bpftrace-args):
#   detail         adaptrace --detail monitored_method at a fixed rate of 1.0:
#                  every call's event (args, ret, duration) into the trace file
#   dfloor         the same link with empty programs (ADAPTRACE_DETAIL_EMPTY=1):
#                  what the detail link costs before its programs do anything
#   budget         adaptrace --detail monitored_method --budget 5: the
#                  adaptive controller keeps detail's slowdown near 5 %
#   bpftrace-args  bpftrace printing every call's arguments (to a file)
#   entry     an empty entry program alone (no return probe): one uprobe hit
#   floor-nosite, coarse-nosite, entry-nosite: the same with --no-site-opt
#             (probe on the first instruction even when it is single-stepped)
#
# "cost above no-probes" = ns/call(config) - ns/call(none); "x floor" is that
# cost divided by the floor's. The goal: adaptrace coarse <= 1.15x the floor.
#
# Usage: bench/run.sh [-r RUNS] [-n CALLS] [-d DEPTH] [-t METHOD_TIME_NS]
#                     [-c CPU|none] [-o RESULTS_DIR] [-k CONFIG,...]
#   -r  runs per configuration (default 5); the table quotes the median run
#   -n  top-level calls per run (default 200000 = 2,000,000 monitored_method
#       calls at depth 10; the first half is warm-up)
#   -d  recursion depth (default 10); -t  method time in ns (default 0)
#   -c  CPU the workload pins itself to (default 1; 'none' to not pin)
#   -o  also keep the raw per-run lines and the table in this directory
#   -k  configurations to run (default none,floor,coarse,bpftrace)
# Environment: ADAPTRACE (default ./adaptrace at the top of the repo),
# BPFTRACE (default bpftrace), MOO (the workload, default bench/build/moobench;
# bench/placement.sh uses the -fcf-protection build). Needs root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
ADAPTRACE=${ADAPTRACE:-$top/adaptrace}
BPFTRACE=${BPFTRACE:-bpftrace}
MOO=${MOO:-$here/build/moobench}

runs=5 calls=200000 depth=10 mtime=0 cpu=1 outdir= configs=none,floor,coarse,bpftrace
usage() { sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "r:n:d:t:c:o:k:h" opt; do
	case $opt in
	r) runs=$OPTARG ;; n) calls=$OPTARG ;; d) depth=$OPTARG ;; t) mtime=$OPTARG ;;
	c) cpu=$OPTARG ;; o) outdir=$OPTARG ;; k) configs=$OPTARG ;; *) usage ;;
	esac
done
for v in "$runs" "$calls" "$depth" "$mtime"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "run.sh: '$v' is not a number" >&2; exit 2; }
done
(( runs >= 1 )) || { echo "run.sh: -r must be >= 1" >&2; exit 2; }

[[ -x $MOO ]] || make -s -C "$here" all >&2
if [[ $configs == *floor* || $configs == *coarse* ]] && [[ ! -x $ADAPTRACE ]]; then
	echo "run.sh: $ADAPTRACE not found: run 'make' at the top first (or set ADAPTRACE)" >&2
	exit 2
fi
if [[ $configs == *bpftrace* ]] && ! command -v "$BPFTRACE" >/dev/null; then
	echo "run.sh: bpftrace not found (apt-get install bpftrace, or set BPFTRACE)" >&2
	exit 2
fi
(( EUID == 0 )) || { echo "run.sh: needs root (uprobes)" >&2; exit 3; }

tmp=$(mktemp -d /tmp/adaptrace-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
moo_args=(-q -n "$calls" -d "$depth" -t "$mtime")
[[ $cpu != none ]] && moo_args+=(-c "$cpu")
expect_calls=$((calls * depth))

# The bpftrace equivalent of the coarse phase for one function: recursion
# needs a start time per thread *and* nesting level.
cat >"$tmp/moo.bt" <<EOF
uprobe:$MOO:monitored_method
{
	\$d = @depth[tid];
	@start[tid, \$d] = nsecs;
	@depth[tid] = \$d + 1;
}
uretprobe:$MOO:monitored_method
{
	\$d = @depth[tid] - 1;
	@depth[tid] = \$d;
	@latency_ns = hist(nsecs - @start[tid, \$d]);
	@calls = count();
}
END { clear(@start); clear(@depth); }
EOF
# bpftrace printing every call's arguments, the comparison for the detail rows.
cat >"$tmp/args.bt" <<EOF
uprobe:$MOO:monitored_method { printf("%d %d %lu\\n", tid, arg0, arg1); }
uretprobe:$MOO:monitored_method { printf("%d ret %lu\\n", tid, retval); }
EOF

# run_one CONFIG LOG: runs the workload once; prints its ns_per_call median
# (or "fail") and leaves everything it printed in LOG.
run_one() {
	local cfg=$1 log=$2 rc=0 site=
	[[ $cfg == *-nosite ]] && site=--no-site-opt
	case $cfg in
	none) "$MOO" "${moo_args[@]}" >"$log" 2>&1 || rc=$? ;;
	entry | entry-nosite) "$ADAPTRACE" record --empty-entry-probes $site -q -o "$tmp/floor.data" \
		-f monitored_method -- "$MOO" "${moo_args[@]}" >"$log" 2>&1 || rc=$? ;;
	floor | floor-nosite) "$ADAPTRACE" record --empty-probes $site -q -o "$tmp/floor.data" \
		-f monitored_method -- "$MOO" "${moo_args[@]}" >"$log" 2>&1 || rc=$? ;;
	coarse | coarse-nosite) "$ADAPTRACE" record $site -q -o "$tmp/coarse.data" --select none \
		-f monitored_method -- "$MOO" "${moo_args[@]}" >"$log" 2>&1 || rc=$? ;;
	bpftrace) "$BPFTRACE" "$tmp/moo.bt" -c "$MOO ${moo_args[*]}" >"$log" 2>&1 || rc=$? ;;
	detail) "$ADAPTRACE" record -q -o "$tmp/detail.data" -f monitored_method --select none \
		--detail monitored_method --detail-rate 1 -- "$MOO" "${moo_args[@]}" >"$log" 2>&1 || rc=$? ;;
	dfloor) ADAPTRACE_DETAIL_EMPTY=1 "$ADAPTRACE" record -q -o "$tmp/dfloor.data" -f monitored_method \
		--select none --detail monitored_method --detail-rate 1 -- "$MOO" "${moo_args[@]}" \
		>"$log" 2>&1 || rc=$? ;;
	budget) "$ADAPTRACE" record -q -o "$tmp/budget.data" -f monitored_method --select none \
		--detail monitored_method --budget 5 -- "$MOO" "${moo_args[@]}" >"$log" 2>&1 || rc=$? ;;
	bpftrace-args) "$BPFTRACE" -o "$tmp/args.out" "$tmp/args.bt" -c "$MOO ${moo_args[*]}" \
		>"$log" 2>&1 || rc=$? ;;
	esac
	local v
	v=$(sed -n 's/^ns_per_call=\([0-9.]*\) median.*/\1/p' "$log" | tail -1)
	if (( rc != 0 )) || [[ -z $v ]]; then
		echo fail
		return
	fi
	# Check that the tracer saw every call, so that a cheap row is not a broken one.
	case $cfg in
	coarse*)
		local c
		c=$("$ADAPTRACE" report --json "$tmp/coarse.data" 2>/dev/null |
			grep -o '"name": *"monitored_method"[^}]*"calls": *[0-9]*' |
			grep -o '[0-9]*$' || true)
		[[ $c == "$expect_calls" ]] || echo "run.sh: warning: adaptrace counted '${c:-?}' calls, expected $expect_calls" >&2 ;;
	detail | budget)
		local j
		j=$("$ADAPTRACE" report --json "$tmp/$cfg.data" 2>/dev/null |
			jq -c '.functions[] | select(.name == "monitored_method") | [.calls, .detail.events, .detail.dropped, .detail.rate]' || true)
		echo "$cfg: calls, events, dropped, last rate: $j" >>"$log"
		[[ $cfg == budget && $j =~ ^\[[0-9]+,0, ]] && echo "run.sh: warning: --budget run has no events" >&2
		[[ $j == "[$expect_calls,"* ]] || echo "run.sh: warning: adaptrace $cfg counted '$j', expected $expect_calls calls" >&2 ;;
	bpftrace-args)
		local c
		c=$(wc -l <"$tmp/args.out")
		(( c >= expect_calls )) || echo "run.sh: warning: bpftrace printed $c lines, expected $expect_calls" >&2 ;;
	bpftrace)
		local c
		c=$(sed -n 's/^@calls: \([0-9]*\)/\1/p' "$log")
		[[ $c == "$expect_calls" ]] || echo "run.sh: warning: bpftrace counted '${c:-?}' calls, expected $expect_calls" >&2 ;;
	esac
	echo "$v"
}

IFS=, read -r -a cfgs <<<"$configs"
declare -A vals
for c in "${cfgs[@]}"; do
	case $c in none | floor | coarse | bpftrace | detail | dfloor | budget | bpftrace-args | floor-nosite | coarse-nosite | entry | entry-nosite) vals[$c]= ;;
	*) echo "run.sh: unknown configuration '$c'" >&2; exit 2 ;;
	esac
done

echo "run.sh: ${#cfgs[@]} configurations x $runs runs, $calls top-level calls x depth $depth," \
	"method time $mtime ns, workload pinned to CPU $cpu" >&2
[[ -n $outdir ]] && { mkdir -p "$outdir"; rm -f "$outdir/moobench-raw.txt"; }
t_start=$EPOCHREALTIME
load0=$(cut -d" " -f1-3 /proc/loadavg)
for ((i = 1; i <= runs; i++)); do
	for c in "${cfgs[@]}"; do
		v=$(run_one "$c" "$tmp/$c.$i.log")
		if [[ $v == fail ]]; then
			echo "run.sh: $c run $i failed; its output:" >&2
			sed 's/^/  | /' "$tmp/$c.$i.log" | tail -5 >&2
		fi
		vals[$c]+="$v "
		printf 'run.sh: run %d/%d %-8s %s ns/call\n' "$i" "$runs" "$c" "$v" >&2
		[[ -n $outdir ]] && { sed "s/^/$c run $i: /" "$tmp/$c.$i.log" >>"$outdir/moobench-raw.txt"; }
	done
done
elapsed=$(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.0f", b-a}')

# median/min/max of the successful runs: "median min max ok"
stats() {
	tr ' ' '\n' <<<"$1" | grep -E '^[0-9.]+$' | sort -g |
		awk '{a[NR]=$1} END{ if(!NR){print "- - - 0"; exit}
			m = NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2
			printf "%.1f %.1f %.1f %d\n", m, a[1], a[NR], NR }'
}
declare -A med lo hi ok
for c in "${cfgs[@]}"; do read -r med[$c] lo[$c] hi[$c] ok[$c] < <(stats "${vals[$c]}"); done

label() {
	case $1 in
	none) echo "no probes (T)" ;;
	floor) echo "floor: empty entry+return programs (T+I)" ;;
	coarse) echo "adaptrace coarse: counts+histograms (T+I+C)" ;;
	bpftrace) echo "bpftrace 0.17: count()+hist()" ;;
	detail) echo "adaptrace detail at rate 1.0: every call's event" ;;
	dfloor) echo "detail link, empty programs (coarse + I of detail)" ;;
	budget) echo "adaptrace detail --budget 5" ;;
	bpftrace-args) echo "bpftrace 0.17: printf of every call's args" ;;
	floor-nosite) echo "empty programs, --no-site-opt" ;;
	entry) echo "empty entry program only" ;;
	entry-nosite) echo "empty entry program only, --no-site-opt" ;;
	coarse-nosite) echo "adaptrace coarse, --no-site-opt" ;;
	esac
}
{
	echo "| configuration | ns/call (median of $runs) | min-max of runs | cost above no-probes | x floor |"
	echo "|---|---:|---:|---:|---:|"
	for c in "${cfgs[@]}"; do
		awk -v l="$(label "$c")" -v m="${med[$c]}" -v lo="${lo[$c]}" -v hi="${hi[$c]}" \
			-v ok="${ok[$c]}" -v runs="$runs" -v base="${med[none]:--}" -v fl="${med[floor]:--}" 'BEGIN{
			if (m == "-") { printf "| %s | failed | | | |\n", l; exit }
			note = ok < runs ? sprintf(" (%d of %d runs ok)", ok, runs) : ""
			cost = "-"; ratio = "-"
			if (base != "-" && l !~ /^no probes/) {
				cost = sprintf("%.1f ns", m - base)
				if (fl != "-" && fl - base > 0 && l !~ /^floor/) ratio = sprintf("%.2fx", (m - base) / (fl - base))
				if (l ~ /^floor/) ratio = "1.00x"
			}
			printf "| %s | %.1f%s | %.1f-%.1f | %s | %s |\n", l, m, note, lo, hi, cost, ratio }'
	done
	echo
	echo "MooBench-style: monitored_method recursing $depth deep, method time $mtime ns," \
		"$calls top-level calls ($expect_calls monitored calls) per run, first half dropped;" \
		"ns per monitored_method call; workload pinned to CPU $cpu; $(nproc) CPUs," \
		"kernel $(uname -r); load average at start $load0; $elapsed s in all."
	if [[ -n ${med[coarse]:-} && ${med[coarse]} != - && -n ${med[floor]:-} && ${med[floor]} != - && -n ${med[none]:-} && ${med[none]} != - ]]; then
		# Robustness checks against a machine whose speed drifts between runs:
		# the ratio within each round (runs next to each other in time), and
		# the ratio of the fastest runs.
		paired=$(paste -d' ' <(tr ' ' '\n' <<<"${vals[none]}") <(tr ' ' '\n' <<<"${vals[floor]}") \
			<(tr ' ' '\n' <<<"${vals[coarse]}") | awk 'NF==3 && $1+0==$1 && $2+0==$2 && $3+0==$3 && $2>$1 {print ($3-$1)/($2-$1)}' |
			sort -g | awk '{a[NR]=$1} END{if(!NR)print "-"; else printf "%.2fx (%d rounds, range %.2f-%.2f)", NR%2?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2, NR, a[1], a[NR]}')
		awk -v c="${med[coarse]}" -v f="${med[floor]}" -v b="${med[none]}" -v cl="${lo[coarse]}" -v fl="${lo[floor]}" \
			-v bl="${lo[none]}" -v p="$paired" 'BEGIN{
			r = (c - b) / (f - b)
			printf "Goal (adaptrace coarse cost <= 1.15x the floor): %.2fx, %s. ", r, r <= 1.15 ? "met" : "NOT met"
			printf "Same ratio within each round, median: %s; of the fastest runs: %.2fx.\n", p, (cl - bl) / (fl - bl) }'
	fi
	# Detail rows against coarse, per round (adjacent runs) and from the medians.
	for d in dfloor detail budget bpftrace-args; do
		[[ -n ${med[$d]:-} && ${med[$d]} != - && -n ${med[coarse]:-} && ${med[coarse]} != - && -n ${med[none]:-} ]] || continue
		per=$(paste -d' ' <(tr ' ' '\n' <<<"${vals[none]}") <(tr ' ' '\n' <<<"${vals[coarse]}") \
			<(tr ' ' '\n' <<<"${vals[$d]}") | awk 'NF==3 && $1+0==$1 && $2+0==$2 && $3+0==$3 && $2>$1 {
				printf "%.4f %.4f\n", ($3-$1)/($2-$1), ($3-$2)/$2*100 }')
		awk -v d="$d" -v m="${med[$d]}" -v c="${med[coarse]}" -v b="${med[none]}" -v per="$per" -f "$here/detail_summary.awk"
	done
} | tee ${outdir:+"$outdir/moobench.md"}
