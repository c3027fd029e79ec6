#!/bin/bash
# The budget's rounds as the README's redis table quotes them: ROUNDS runs of
# `redis.sh -R 20000 -t -r 8 -n 100000 -k CONFIGS -o PREFIXi`, then, over all
# of them, bench/counts.sh against each round's own full-probe references
# (PREFIX-counts.txt, summed up by counts_summary.py) and the throughput
# pooled by redis_pool.py (PREFIX-pool.md). A round takes about 3.5 minutes
# on 2 CPUs with -k none,budget. Each round's stderr goes to PREFIXi.log;
# a line per round to stderr. Touch PREFIX.stop to end after the round
# that runs. Nothing else should run on the host meanwhile.
#
# Usage: bench/redis_rounds.sh [-r ROUNDS] [-f FIRST] [-k CONFIG,...] PREFIX
#   ROUNDS: how many (default 8); FIRST: the first round's number (default 1:
#   PREFIX1, PREFIX2...); CONFIG: redis.sh's (default none,budget; with alt,
#   its recordings are counted too)
# Environment: as redis.sh's (ADAPTRACE, ADAPTRACE_ALT, ALT_EXTRA...). Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=8 first=1 configs=none,budget
while getopts "r:f:k:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;; f) first=$OPTARG ;; k) configs=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if (($# != 1)) || ! [[ $rounds =~ ^[1-9][0-9]*$ && $first =~ ^[0-9]+$ ]]; then
	echo "redis_rounds.sh: give one PREFIX, and numbers to -r and -f (-h: usage)" >&2
	exit 2
fi
prefix=$1
# The configurations paired with the untraced runs, as redis_pool.py names them.
traced=()
for cfg in budget alt again coarse; do [[ ,$configs, == *,$cfg,* ]] && traced+=("$cfg"); done
mkdir -p "$(dirname "$prefix")"
dirs=()
for i in $(seq "$first" $((first + rounds - 1))); do
	[[ -e $prefix.stop ]] && { echo "redis_rounds.sh: $prefix.stop: stopped before round $i" >&2; break; }
	d=$prefix$i
	if "$here/redis.sh" -R 20000 -t -r 8 -n 100000 -k "$configs" -o "$d" >"$d.md" 2>"$d.log"; then
		dirs+=("$d")
		for cfg in "${traced[@]}"; do
			echo "redis_rounds.sh: round $i: $(python3 "$here/redis_pool.py" --config "$cfg" "$d" | tail -n 1)" >&2
		done
	else
		echo "redis_rounds.sh: round $i failed: $(tail -n 1 "$d.log")" >&2
	fi
done
((${#dirs[@]})) || exit 1
for d in "${dirs[@]}"; do
	for kind in budget alt; do
		compgen -G "$d/$kind-*.data" >/dev/null || continue
		"$here/counts.sh" -v -1 "$d"/ref1-*.data "$d"/ref50-*.data "$d/$kind"-*.data |
			sed "s|^|$(basename "$d")$([[ $kind == alt ]] && echo -alt) |"
	done
done >"$prefix-counts.txt"
{
	for cfg in "${traced[@]}"; do
		python3 "$here/redis_pool.py" --config "$cfg" "${dirs[@]}"
	done
	echo
	python3 "$here/counts_summary.py" "$prefix-counts.txt"
} | tee "$prefix-pool.md"
