#!/usr/bin/env bash
# Soak on real servers, by hand: tests/integration/test_soak.sh for SECONDS
# per server (default 600) with its checks, then a table of the figures.
# Usage: bench/soak.sh [-s SECONDS] [-o DIR] [SERVERS, e.g. redis,nginx]
set -u
cd "$(dirname "$0")/.."
SECS=600
OUT=bench/results
while getopts s:o: opt; do
	case $opt in
	s) SECS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) echo "usage: bench/soak.sh [-s SECONDS] [-o DIR] [SERVERS]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
mkdir -p "$OUT"
fig=$OUT/soak.txt
: >"$fig"
SOAK_SECONDS=$SECS SOAK_SERVERS=${1:-redis,nginx} SOAK_FIGURES=$fig \
	bash tests/integration/test_soak.sh | tee "$OUT/soak.log"
rc=${PIPESTATUS[0]}
echo
echo "| server | duration | requests served | events captured | dropped | peak RSS | request handler: calls |"
echo "|---|---:|---:|---:|---:|---:|---|"
while read -r line; do
	declare -A f=()
	for kv in $line; do f[${kv%%=*}]=${kv#*=}; done
	printf '| %s | %s s | %s | %s | %s | %.1f MiB | `%s`: %s |\n' "${f[server]}" "${f[seconds]}" \
		"${f[requests]}" "${f[events]}" "${f[dropped]}" "$(awk -v k="${f[peak_rss_kib]}" 'BEGIN { print k / 1024 }')" \
		"${f[handler]}" "${f[calls]}"
	unset f
done <"$fig"
exit "$rc"
