#!/bin/bash
# Estimated counts against a full-probe run's, per request: bench/redis.sh -o
# keeps its recordings named by the SETs sent (as many GETs). For each
# function that the full-probe (coarse) recording calls at least 0.5 times
# per request, compares calls per request in each --budget recording.
#
# Usage: bench/counts.sh COARSE.data BUDGET.data...
# Environment: ADAPTRACE (default ./adaptrace at the top).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ADAPTRACE=${ADAPTRACE:-$here/../adaptrace}
(($# >= 2)) || { sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
requests() { local b; b=$(basename "$1"); b=${b#*-}; echo $((2 * ${b%%-sets*})); }
full=$1
shift
"$ADAPTRACE" report "$full" --json >"${TMPDIR:-/tmp}/counts-full.$$.json"
trap 'rm -f "${TMPDIR:-/tmp}"/counts-*.$$.json' EXIT
for f in "$@"; do
	"$ADAPTRACE" report "$f" --json >"${TMPDIR:-/tmp}/counts-est.$$.json"
	jq -rn --slurpfile a "${TMPDIR:-/tmp}/counts-full.$$.json" --slurpfile b "${TMPDIR:-/tmp}/counts-est.$$.json" \
		--argjson na "$(requests "$full")" --argjson nb "$(requests "$f")" --arg f "$(basename "$f")" '
		($b[0].functions | map({key: .name, value: .}) | from_entries) as $est |
		[$a[0].functions[] | (.calls / $na) as $pa | select($pa >= 0.5) |
		 ($est[.name] // {calls: 0}) as $e | {name, pa: $pa, pb: ($e.calls / $nb), est: ($e.estimated // false)} |
		 .err = (100 * (.pb - .pa) / .pa)] as $rows |
		"\($f): \($rows | map(select(.err | fabs <= 10)) | length) of \($rows | length) functions called 0.5+ times per request within 10 % per request" +
		([$rows[] | select(.err | fabs > 10) | "\n  \(.name): \(.pa * 1000 | round / 1000) per request, \(if .est then "estimated " else "" end)\(.pb * 1000 | round / 1000) (\(.err * 10 | round / 10) %)"] | join(""))'
done
