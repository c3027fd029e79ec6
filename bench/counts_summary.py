#!/usr/bin/env python3
"""Sum up bench/counts.sh -v over many recordings: how many recordings had
every function within 10 % per request, the mean and worst error of the
estimated functions, and the misses.

Usage: bench/counts_summary.py FILE...
  FILE: counts.sh -v output, each line optionally prefixed with a round's
  name and a space (bench/redis_rounds.sh writes them so); - for stdin.
"""
import re
import sys

HEAD = re.compile(r"^(?:(\S+) )?(\S+\.data): (\d+) of (\d+) functions")
ROW = re.compile(r"^(?:\S+ )?\s+(\S+): ([\d.]+) per request, (estimated )?([\d.]+) "
                 r"\((-?[\d.]+) %\)")


def summarise(lines):
    """Returns (recordings, all within, estimated errors, misses)."""
    recs = within = 0
    errs = []
    misses = []
    where = ""
    for line in lines:
        m = HEAD.match(line)
        if m:
            recs += 1
            within += m.group(3) == m.group(4)
            where = (m.group(1) + " " if m.group(1) else "") + m.group(2)
            continue
        m = ROW.match(line.rstrip("\n"))
        if not m:
            continue
        err = float(m.group(5))
        if m.group(3):
            errs.append(err)
        if abs(err) > 10:
            misses.append((where, m.group(1), err))
    return recs, within, errs, misses


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    lines = []
    for path in sys.argv[1:]:
        with (sys.stdin if path == "-" else open(path)) as f:
            lines.extend(f)
    recs, within, errs, misses = summarise(lines)
    if not recs:
        sys.exit("counts_summary.py: no counts.sh lines in the input")
    line = f"{within} of {recs} recordings with every function within ±10 %"
    if errs:
        worst = max(errs, key=abs)
        line += (f"; {len(errs)} estimates, mean error {sum(map(abs, errs)) / len(errs):.2f} %,"
                 f" worst {worst:+.1f} %")
    print(line)
    for where, name, err in misses:
        print(f"  {where}: {name} {err:+.1f} %")


if __name__ == "__main__":
    main()
