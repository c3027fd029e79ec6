#!/bin/bash
# Every comparison of the overhead work in one run, one table per question,
# written to RESULTS_DIR (default bench/results) and printed:
#
#   moobench.md   per-call cost: no probes / empty-probe floor / coarse /
#                 bpftrace (run.sh), ratios against no probes and the floor
#   detail.md     detail phase: coarse / detail link floor / full detail /
#                 --budget 5 / bpftrace printing arguments (run.sh -d 1)
#   placement.md  per-hit cost with and without probe placement on an
#                 -fcf-protection build, and the share of functions of
#                 python3.11 and redis-server whose site is not single-stepped
#   usdt.md       USDT: empty program / exact count / bpftrace
#   attach.md     attach and detach of 100, 1,000 and 10,000 functions:
#                 adaptrace / one link per probe / bpftrace
#   stream.txt    detail events/s and loss against the offered rate
#   redis.md      redis-server under redis-benchmark: untraced / -b over all
#                 of .dynsym / the same with --budget 5
#
# -q runs short versions (a few minutes; for checking the scripts, not for
# figures). The full run takes about an hour on 2 CPUs, most of it in
# attach.sh's one-link-per-probe rows.
#
# Usage: bench/all.sh [-q] [-o RESULTS_DIR] [-k PART,...]
#   parts: moobench,detail,placement,usdt,attach,stream,redis (default all)
# Environment: ADAPTRACE (default ./adaptrace at the top). Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/results quick='' parts=moobench,detail,placement,usdt,attach,stream,redis
while getopts "qo:k:h" opt; do
	case $opt in
	q) quick=1 ;; o) out=$OPTARG ;; k) parts=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
((EUID == 0)) || { echo "all.sh: needs root (uprobes)" >&2; exit 3; }
[[ -x ${ADAPTRACE:-$here/../adaptrace} ]] || make -s -C "$here/.." adaptrace
make -s -C "$here" all >&2
# The comparison rows need Debian's bpftrace, which the build and tests do not.
if ! command -v bpftrace >/dev/null; then
	echo "all.sh: installing bpftrace for the comparison rows" >&2
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends bpftrace >/dev/null; }; then
		echo "all.sh: could not install bpftrace: run apt-get install bpftrace, then this again" >&2
		exit 1
	fi
fi
mkdir -p "$out"

# q FULL QUICK: the argument for this run's length.
q() { [[ -n $quick ]] && echo "$2" || echo "$1"; }

part() {
	local name=$1 file=$2
	shift 2
	echo "== $name ($(date +%H:%M:%S))" >&2
	"$@" | tee "$out/$file"
	echo
}

IFS=, read -ra want <<<"$parts"
for p in "${want[@]}"; do
	case $p in
	moobench) part "per-call cost" moobench.md "$here/run.sh" -r "$(q 15 3)" -n "$(q 200000 20000)" ;;
	detail)
		part "detail phase" detail.md "$here/run.sh" -r "$(q 9 3)" -d 1 -n "$(q 1000000 40000)" \
			-t 2000 -k none,coarse,dfloor,detail,budget,bpftrace-args ;;
	placement) part "probe placement" placement.md "$here/placement.sh" -r "$(q 7 3)" -n "$(q 20000 2000)" ;;
	usdt) part "USDT" usdt.md "$here/usdt.sh" -r "$(q 30 3)" -n "$(q 60000 6000)" ;;
	attach) part "attach and detach" attach.md "$here/attach.sh" -r 3 -s "$(q 1000 100)" ;;
	stream)
		part "streaming" stream.txt "$here/stream.sh" -r "$(q 3 1)" -t 0,2000 -n "$(q 1000000 100000)" \
			-s "$(q 5 2)" ;;
	redis) part "redis-server" redis.md "$here/redis.sh" -r "$(q 5 1)" -n "$(q 200000 20000)" ;;
	*) echo "all.sh: unknown part '$p' (moobench,detail,placement,usdt,attach,stream,redis)" >&2; exit 2 ;;
	esac
done
echo "all.sh: tables in $out" >&2
