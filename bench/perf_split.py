#!/usr/bin/env python3
"""Split a perf profile (perf script with call chains) into what the budget costs.

Usage: perf script -F comm,ip,sym -i FILE | bench/perf_split.py --hz HZ --requests N [--estimated NAMES]

Prints one line per process kind (redis-server, redis-benchmark, adaptrace,
other, and idle: the CPUs' spare time) with its CPU per request in us, by
category:
  user      the process's own code
  kernel    the kernel's work for it (system calls, network)
  yard      the socket yardsticks: the tracepoints' programs and their dispatch
  win       probe traps and their programs at functions the windows count
  exact     the same at functions probed all along (exact counts)
  ret       return probes (the uretprobe trampoline), either kind
  step      single-steps of probed instructions the kernel cannot emulate
            (their function is not on the stack: either kind)
NAMES: a file with one function name per line, those the recording
estimated (the others count as exact).
"""
import argparse
import re
import sys

YARD = re.compile(
    r"call_trace_sock_(recv|send)_length|__bpf_trace_sock_msg_length|_duty_(inputs|outputs)$")
TRAP = re.compile(r"^(asm_exc_int3|uprobe_notify_resume|handle_swbp)$")
STEP = re.compile(r"^(asm_exc_debug|exc_debug_user|noist_exc_debug)$")
RET = re.compile(r"^(__x64_sys_uretprobe|uprobe_handle_trampoline|arch_uretprobe_trampoline)$")
PROBE_PROGS = ("_coarse_session", "_coarse_entry", "_coarse_return")
DSO = re.compile(r" \([^()]*\)$")  # perf script -F ...,dso adds " (DSO)"
KINDS = ("redis-server", "redis-benchmark", "adaptrace")
IDLE = "swapper"
CATS = ("user", "kernel", "yard", "win", "exact", "ret", "step")


def kind_of(comm):
    if comm in KINDS:
        return comm
    return "idle" if comm.startswith(IDLE) else "other"


def classify(frames, estimated):
    """frames: [(is_kernel, sym)], leaf first."""
    kern = []
    user = None
    for is_k, sym in frames:
        if is_k:
            kern.append(sym)
        else:
            user = sym
            break
    if not frames or not frames[0][0]:
        return "user"
    if any(YARD.search(s) for s in kern):
        return "yard"
    if any(STEP.match(s) for s in kern):
        return "step"
    if any(RET.match(s) for s in kern):
        return "ret"
    if any(TRAP.match(s) or s.endswith(PROBE_PROGS) for s in kern):
        fn = re.sub(r"\+0x[0-9a-f]+$", "", user or "")
        return "win" if fn in estimated else "exact"
    return "kernel"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hz", type=float, required=True)
    ap.add_argument("--requests", type=float, required=True)
    ap.add_argument("--estimated")
    a = ap.parse_args()
    estimated = set()
    if a.estimated:
        with open(a.estimated) as f:
            estimated = {line.strip() for line in f if line.strip()}
    counts = {}
    comm = None
    frames = []

    def flush():
        if comm is not None:
            k = (kind_of(comm), classify(frames, estimated))
            counts[k] = counts.get(k, 0) + 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            comm, frames = None, []
        elif line[0] not in " \t":
            flush()
            comm, frames = line.split()[0], []
        else:
            parts = line.split(None, 1)
            if len(parts) < 2:
                continue
            addr, sym = parts[0], DSO.sub("", parts[1].strip())
            frames.append((addr.startswith("ffffffff") and len(addr) == 16, sym))
    flush()
    us = 1e6 / a.hz / a.requests
    for kind in KINDS + ("other", "idle"):
        row = {c: counts.get((kind, c), 0) * us for c in CATS}
        total = sum(row.values())
        print(kind, f"total={total:.3f}", " ".join(f"{c}={row[c]:.3f}" for c in CATS))


if __name__ == "__main__":
    main()
