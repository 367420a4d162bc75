#!/usr/bin/env python3
"""attribution.py - the kernel's VMAs against the model's, at exit.

usage: attribution.py REPLAY.json MEASURE.json

REPLAY.json is 'thpsim replay --format json' of a trace recorded with
'--no-aslr'; MEASURE.json is 'thpsim record --measure --no-aslr' of the same
command (or both run where randomisation is off), so both runs have one
layout.  For each process that exited (matched by program and order, as
validate.py matches them), each of the kernel's VMAs of 1 MiB or more that is
anonymous ([heap], [stack], no name) or holds anonymous memory is held against
the model's VMAs over the same range (the replay's "vmas"; for a file
mapping's VMA, the model's private copies of written file pages over the
range, the replay's "file_copies"): Anonymous and AnonHugePages within 3% or
1 MiB.  The model's mappings by origin (the
replay's "mappings") sum to its VMAs exactly (tests/unit/test_replay.c), so
this checks attribution's figures against the kernel's.  Prints one row per
VMA and figure; exit status 1 if any is outside.
"""
import json
import os
import sys

TOL_PCT, TOL_KB = 3.0, 1024
MIN_VMA = 1 << 20


def within(pred, kern):
    d = abs(pred - kern)
    return d <= TOL_KB or (kern and 100.0 * d / kern <= TOL_PCT)


def pair_processes(replay, measured):
    """(measured process, replayed process) in exit order, by program name."""
    mine = sorted((p for p in replay["processes"]
                   if p["ended_by"] not in ("exec", "end of trace")),
                  key=lambda p: p["end_s"])
    used, pairs = set(), []
    for r in measured["processes"]:
        base = os.path.basename(r["exe"])
        cand = [i for i, p in enumerate(mine) if i not in used and p["name"] == base]
        if cand:
            used.add(cand[0])
            pairs.append((r, mine[cand[0]]))
        else:
            pairs.append((r, None))
    return pairs


def model_over(vmas, start, end):
    """The model's figures over [start, end): its VMAs inside the range,
    and whether each one found lies wholly inside."""
    anon = huge = 0
    whole = True
    for v in vmas:
        if v["end"] <= start or v["start"] >= end:
            continue
        whole &= v["start"] >= start and v["end"] <= end
        anon += v["Anonymous"]
        huge += v["AnonHugePages"]
    return anon, huge, whole


def anonymous_vma(v):
    name = v.get("name", "")
    return not name or name.startswith("[") or v["Anonymous"] or v["AnonHugePages"]


def file_vma(v):
    """A file mapping's VMA (a path): its Anonymous is the private copies
    of written file pages, which the model keeps by file range
    ("file_copies"), not among its anonymous VMAs."""
    return v.get("name", "").startswith("/")


def pair_rows(label, real, mine):
    """One row per (VMA, figure) of one real process against its replayed
    one: (label, process, range, figure, kernel kB, model kB, ok, note)."""
    out = []
    proc = "%s %d" % (mine["name"], mine["pid"])
    for v in real.get("vmas", []):
        if v["end"] - v["start"] < MIN_VMA or not anonymous_vma(v):
            continue
        if file_vma(v):
            copies = [dict(c, AnonHugePages=0) for c in mine.get("file_copies", [])]
            anon, huge, whole = model_over(copies, v["start"], v["end"])
        else:
            anon, huge, whole = model_over(mine.get("vmas", []), v["start"], v["end"])
        rng = "%x-%x %s" % (v["start"], v["end"], v.get("name") or "anon")
        note = "" if whole else "the model's VMA reaches past the kernel's"
        for fig, k, m in (("Anonymous", v["Anonymous"], anon),
                          ("AnonHugePages", v["AnonHugePages"], huge)):
            out.append((label, proc, rng, fig, k, m, within(m, k), note))
    return out


def rows(replay, measured, label=""):
    """pair_rows() of every process that exited in both runs; one the
    replay has not got is the process table's to report (validate.py)."""
    out = []
    for real, mine in pair_processes(replay, measured):
        if mine is not None:
            out += pair_rows(label, real, mine)
    return out


def print_rows(rs, f=sys.stdout):
    print("%-12s %-18s %-40s %-14s %10s %10s  %s" % (
        "program", "process", "VMA", "figure", "kernel kB", "model kB", "within 3% or 1 MiB"),
        file=f)
    for label, proc, rng, fig, k, m, good, note in rs:
        print("%-12s %-18.18s %-40.40s %-14s %10d %10d  %s%s" % (
            label, proc, rng, fig, k, m, "ok" if good else "FAIL",
            " (" + note + ")" if note else ""), file=f)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        replay = json.load(f)
    with open(sys.argv[2]) as f:
        measured = json.load(f)
    rs = rows(replay, measured)
    print_rows(rs)
    bad = sum(1 for r in rs if not r[6])
    print("attribution: %d passed, %d failed" % (len(rs) - bad, bad))
    return 1 if bad or not rs else 0


if __name__ == "__main__":
    sys.exit(main())
