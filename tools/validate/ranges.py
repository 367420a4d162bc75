#!/usr/bin/env python3
"""ranges.py - one recording's predicted range against randomised runs.

For each program: record it once with address randomisation off
(thpsim record --no-aslr), replay the trace under its layouts (thpsim
replay --layouts N, the machine's own THP settings), then run it RUNS
times for real with randomisation on (thpsim record --measure --runs),
and hold the main process's (the one with the most Anonymous memory, a
tie within 64 kB to the lowest pid)
final AnonHugePages and Anonymous of each run against the predicted
[lowest, highest], widened by 3% or 1 MiB, and the runs' median against
[lowest, highest] itself (issue 24's must-show).  Anonymous adds the
private file pages the program wrote (file_copies_kB: anonymous in the
kernel, not held by the model), which do not depend on the layout.

A program whose own timing varies (a garbage collector, threads) needs
several recordings: --recordings R records R runs and predicts the union
of their ranges (item 3 of the issue).

usage: ranges.py THPSIM WORKDIR [--runs N] [--layouts N] [--recordings R] NAME=COMMAND...
Prints one Markdown table row per program; exit 1 when a run is outside.
It changes no setting: run it under the THP mode to be checked.
"""
import json
import os
import statistics
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit("ranges.py: %s failed (%d): %s" % (" ".join(cmd), p.returncode,
                                                          p.stderr.strip()[-500:]))
    return p.stdout


# processes within MAIN_TIE_KB of the most Anonymous tie, and the tie goes
# to the lowest pid (a fork's parent and children can end alike to a page;
# a real run lists them as they exited, the replay by pid): as
# tools/kernels/summarize.py's main_process
MAIN_TIE_KB = 64


def main_process(procs, key):
    top = max(key(p) for p in procs)
    return min((p for p in procs if key(p) >= top - MAIN_TIE_KB), key=lambda p: p.get("pid", 0))


def predicted(thpsim, trace, layouts):
    out = json.loads(run([thpsim, "replay", trace, "--format", "json", "--quiet",
                          "--layouts", str(layouts)]))
    procs = out["processes"]
    mp = main_process(procs, lambda p: p["final"]["Anonymous"])
    rng = mp["final"].get("range")
    files = mp.get("file_copies_kB", 0)
    if rng is None:  # one layout: the report's own figures
        rng = {k: {"min": mp["final"][k], "max": mp["final"][k]}
               for k in ("AnonHugePages", "Anonymous")}
    lay = out.get("layouts", {})
    return ({"AnonHugePages": (rng["AnonHugePages"]["min"], rng["AnonHugePages"]["max"]),
             "Anonymous": (rng["Anonymous"]["min"] + files, rng["Anonymous"]["max"] + files)},
            lay.get("replays", 1), lay.get("fixed"))


def measured(thpsim, prefix, runs, argv):
    run([thpsim, "record", "--measure", "--force", "--runs", str(runs), "-o", prefix, "--"] + argv)
    vals = {"AnonHugePages": [], "Anonymous": []}
    for k in range(1, runs + 1):
        with open("%s.%d.json" % (prefix, k)) as f:
            d = json.load(f)
        mp = main_process(d["processes"], lambda p: p["Anonymous"])
        for key in vals:
            vals[key].append(mp[key])
    return vals


def inside(v, lo, hi):
    return lo - max(lo * 3 // 100, 1024) <= v <= hi + max(hi * 3 // 100, 1024)


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        raise SystemExit(__doc__)
    thpsim, work, runs, layouts, recs, progs = args[0], args[1], 16, 16, 1, []
    i = 2
    while i < len(args):
        if args[i] == "--runs":
            runs, i = int(args[i + 1]), i + 2
        elif args[i] == "--recordings":
            recs, i = int(args[i + 1]), i + 2
        elif args[i] == "--layouts":
            layouts, i = int(args[i + 1]), i + 2
        else:
            name, _, cmd = args[i].partition("=")
            progs.append((name, cmd))
            i += 1
    os.makedirs(work, exist_ok=True)
    bad = 0
    print("| program | figure | kernel, %d runs (randomised): min / median / max | predicted "
          "(%d recording(s), %d layouts each) | runs inside | median inside |" % (runs, recs, layouts))
    print("|---|---|---|---|---|---|")
    for name, cmd in progs:
        argv = ["/bin/sh", "-c", cmd]
        pred, replays, fixed = None, 0, None
        for r in range(recs):
            trace = os.path.join(work, "%s.rec%d.trace" % (name, r))
            run([thpsim, "record", "-q", "--force", "--no-aslr", "-o", trace, "--"] + argv)
            p, n, fixed = predicted(thpsim, trace, layouts)
            replays += n
            pred = p if pred is None else {k: (min(pred[k][0], p[k][0]), max(pred[k][1], p[k][1]))
                                           for k in p}
        got = measured(thpsim, os.path.join(work, name), runs, argv)
        for key in ("AnonHugePages", "Anonymous"):
            lo, hi = pred[key]
            v = got[key]
            n_in = sum(inside(x, lo, hi) for x in v)
            med = statistics.median_low(v)
            med_in = lo <= med <= hi
            bad += n_in < len(v)
            print("| %s | %s kB | %d / %d / %d (%s) | %d-%d (%d replays%s) | %d of %d | %s |" % (
                name, key, min(v), med, max(v), ", ".join(str(x) for x in sorted(set(v))[:6]),
                lo, hi, replays, "; " + fixed if fixed else "", n_in, len(v),
                "yes" if med_in else "no (%+d kB)" % (med - (lo if med < lo else hi))))
        sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
