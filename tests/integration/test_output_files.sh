#!/usr/bin/env bash
# Output files: created 0600, an existing file is kept as FILE.old, a symlink
# planted at the output path is refused without touching what it points to;
# and the fallback attach path (no uprobe_multi) gives the same exact counts.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

SIMPLE=$TARGETS/simple

at_run "$WORK/a" record -q -o "$WORK/out.data" -- "$SIMPLE"
expect_eq "record exits 0" "$RC" 0
expect_eq "trace file mode is 0600" "$(stat -c %a "$WORK/out.data")" 600
first=$(sha256sum <"$WORK/out.data")
at_run "$WORK/b" record -q -o "$WORK/out.data" -- "$SIMPLE"
expect_eq "second record exits 0" "$RC" 0
expect_eq "the existing file is kept as FILE.old" "$(sha256sum <"$WORK/out.data.old")" "$first"

echo secret >"$WORK/victim"
ln -s "$WORK/victim" "$WORK/link.data"
at_run "$WORK/c" record -q -o "$WORK/link.data" -- "$SIMPLE"
expect_eq "a symlink at the output path: exit 2" "$RC" 2
expect_match "a symlink at the output path: says so" "$(cat "$WORK/c.err")" 'symbolic link'
expect_eq "the symlink's target is untouched" "$(cat "$WORK/victim")" secret
expect_eq "the symlink is left as it was" "$(readlink "$WORK/link.data")" "$WORK/victim"

mkdir "$WORK/dir.data"
at_run "$WORK/d" record -q -o "$WORK/dir.data" -- "$SIMPLE"
expect_eq "a directory at the output path: exit 2" "$RC" 2
expect_eq "a directory at the output path: one error line" "$(wc -l <"$WORK/d.err")" 1

# The kernel without uprobe_multi (simulated): one perf-event link per probe.
ADAPTRACE_NO_UPROBE_MULTI=1 at_run "$WORK/fb" record -q -o "$WORK/fb.data" -- "$TARGETS/mt"
expect_eq "fallback: record exits 0" "$RC" 0
expect_match "fallback: warns that it falls back" "$(cat "$WORK/fb.err")" 'uprobe_multi'
report_json "$WORK/fb.data" "$WORK/fb.json" && counts_match "fallback" "$WORK/fb.json" "$WORK/fb.out"
