#!/bin/bash
# Probe placement benchmark: the cost of probing monitored_method when it
# starts with `endbr64; push %rbp` (an -fcf-protection build), with the probe
# on the first instruction (--no-site-opt, endbr64 is single-stepped) and
# with placement (the probe moves onto the emulated push). Interleaved runs
# through run.sh; prints its table, then the per-hit cost ratio.
#
# Usage: bench/placement.sh [-r RUNS] [-n CALLS] [-o RESULTS_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=5 calls=50000 outdir=
while getopts "r:n:o:h" opt; do
	case $opt in
	r) runs=$OPTARG ;; n) calls=$OPTARG ;; o) outdir=$OPTARG ;;
	*) sed -n '/^# Usage:/p' "$0" | sed 's/^# //' >&2; exit 2 ;;
	esac
done
make -s -C "$here" build/moobench_cet >&2
table=$(MOO=$here/build/moobench_cet "$here/run.sh" -r "$runs" -n "$calls" \
	-k none,entry-nosite,entry,floor-nosite,floor,coarse-nosite,coarse ${outdir:+-o "$outdir"})
echo "$table"
# Columns: | label | median | ... ; ratios of the cost above no-probes.
echo "$table" | awk -F'|' '
	/^\| no probes/ {b=$3+0}
	/^\| empty programs, --no-site-opt/ {fn=$3+0}
	/^\| floor: / {fp=$3+0}
	/^\| adaptrace coarse, --no-site-opt/ {cn=$3+0}
	/^\| adaptrace coarse: / {cp=$3+0}
	/^\| empty entry program only, --no-site-opt/ {en=$3+0}
	/^\| empty entry program only \|/ {ep=$3+0}
	END { if (fp > b && cp > b && ep > b)
		printf "\nPlacement cuts the cost of one entry uprobe hit %.1fx (%.0f -> %.0f ns; goal >= 10x), of an entry+return pair %.1fx (%.0f -> %.0f ns), and of a coarse-traced call %.1fx (%.0f -> %.0f ns).\n",
			(en-b)/(ep-b), en-b, ep-b, (fn-b)/(fp-b), fn-b, fp-b, (cn-b)/(cp-b), cn-b, cp-b }' | tee -a ${outdir:+"$outdir/moobench.md"} /dev/null

# The share of real binaries' functions whose probe is not single-stepped,
# with and without placement (adaptrace list's ENTRY column and footer).
ADAPTRACE=${ADAPTRACE:-$here/../adaptrace}
share() {
	echo
	echo "| binary (.dynsym) | functions | not single-stepped, placed | without placement | sites moved |"
	echo "|---|---:|---:|---:|---:|"
	for b in /usr/bin/python3.11 /usr/bin/redis-server; do
		[[ -x $b ]] || continue
		"$ADAPTRACE" list -b "$b" 2>&1 >/dev/null | tail -n 1 |
			awk -v b="$(basename "$b")" '
			match($0, /^[0-9]+ functions?/) { n = $1 }
			match($0, /; [0-9]+ probe sites? moved/) { split(substr($0, RSTART + 2), m, " "); mv = m[1] }
			match($0, /; [0-9]+ still single-stepped/) { split(substr($0, RSTART + 2), s, " "); ss = s[1] }
			END { if (n) printf "| %s | %d | %d (%.1f %%) | %d (%.1f %%) | %d |\n", b, n, n - ss,
				100 * (n - ss) / n, n - ss - mv, 100 * (n - ss - mv) / n, mv }'
	done
}
share | tee -a ${outdir:+"$outdir/moobench.md"} /dev/null
