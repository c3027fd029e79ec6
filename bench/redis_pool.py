#!/usr/bin/env python3
"""Pool bench/redis.sh rounds: per configuration, the median of every traced
run's throughput and redis CPU per request against the untraced run of its
round (the one before it in rounds run with -F, or before stop 56), over all
the rounds given, with a bootstrap 95 % interval, and how many
rounds' own medians fell under 93 %. "Either side" holds each traced run
against the mean of the untraced runs before and after it: a run that comes
second tends to be the faster on this host, and before stop 56 a traced run
always did.

One round's median moves with the host (an untraced configuration paired
like a traced one, `-k none,again`, spans several points from round to
round); the pooled median says where the tracer's cost sits.

Usage: bench/redis_pool.py [--config NAME] ROUND...
  ROUND: a redis.sh results directory (its runs.txt) or a file holding
  redis.sh's stderr (its "run i/n" lines)
"""
import os
import random
import re
import statistics
import sys

RUN = re.compile(r'redis\.sh: run (\d+)/\d+ (\w+): (\d+) requests/s; '
                 r'CPU per request: redis ([\d.]+) us')
GOAL = 93.0


def runs_of(path):
    """The round's runs in order: (configuration, requests/s, redis us/request, round)."""
    if os.path.isdir(path):
        path = os.path.join(path, 'runs.txt')
    out = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = RUN.match(line)
            if m:
                out.append((m.group(2), int(m.group(3)), float(m.group(4)), int(m.group(1))))
    return out


def pairs(runs, cfg):
    """Each run of cfg against the untraced run of its round: (throughput %, CPU %)."""
    untraced = {n: (rps, cpu) for c, rps, cpu, n in runs if c == 'none'}
    out = []
    for c, rps, cpu, n in runs:
        base = untraced.get(n)
        if c == cfg and base and base[0] > 0 and base[1] > 0:
            out.append((100.0 * rps / base[0], 100.0 * cpu / base[1]))
    return out


def either_side(runs, cfg):
    """Each run of cfg against the mean of the untraced runs before and after it
    (throughput %): a drift of the host, or a second run's gain, cancels."""
    out = []
    for i, (c, rps, _, _) in enumerate(runs):
        if c != cfg:
            continue
        before = next((r[1] for r in reversed(runs[:i]) if r[0] == 'none'), 0)
        after = next((r[1] for r in runs[i + 1:] if r[0] == 'none'), 0)
        if before > 0 and after > 0:
            out.append(200.0 * rps / (before + after))
    return out


def interval(xs, n=2000):
    """The median and a bootstrap 95 % interval of it (fixed seed: reproducible)."""
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(n))
    return statistics.median(xs), meds[int(0.025 * n)], meds[int(0.975 * n) - 1]


def main(argv):
    cfgs, paths, args = None, [], iter(argv[1:])
    for a in args:
        if a == '--config':
            cfgs = [next(args, '')]
        elif a.startswith('-'):
            paths = []
            break
        else:
            paths.append(a)
    if not paths or cfgs == ['']:
        sys.stderr.write('Usage: ' + __doc__.split('Usage: ')[1])
        return 2
    rounds = []
    for p in paths:
        try:
            rounds.append(runs_of(p))
        except OSError as e:
            sys.stderr.write('redis_pool.py: %s: %s\n' % (p, e.strerror))
            return 1
    names = cfgs or sorted({c for r in rounds for c, _, _, _ in r if c != 'none'})
    if not names:
        sys.stderr.write('redis_pool.py: no traced runs in the rounds given\n')
        return 1
    print('| configuration | rounds | pairs | throughput per pair, median [95 %%] '
          '| rounds under %g %% | either side, median [95 %%] '
          '| redis CPU per pair, median [95 %%] |' % GOAL)
    print('|---|---:|---:|---|---:|---|---|')
    for cfg in names:
        per_round = [pairs(r, cfg) for r in rounds]
        per_round = [p for p in per_round if p]
        allp = [x for p in per_round for x in p]
        if not allp:
            continue
        under = sum(1 for p in per_round if statistics.median(t for t, _ in p) < GOAL)
        t = interval([x[0] for x in allp])
        c = interval([x[1] for x in allp])
        sides = [x for r in rounds for x in either_side(r, cfg)]
        e = '%.1f %% [%.1f, %.1f]' % interval(sides) if sides else '-'
        print('| %s | %d | %d | %.1f %% [%.1f, %.1f] | %d | %s | %.1f %% [%.1f, %.1f] |' %
              ((cfg, len(per_round), len(allp)) + t + (under, e) + c))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
