#!/usr/bin/env python3
"""validate.py - recorded programs against the kernel (docs/validation.md).

For each program: record it once (THP disabled by the recorder), run it once
more for real with the machine's THP settings ("thpsim record --measure"),
then replay the trace twice:

  THP off        replay with enabled=never, against what the kernel reported
                 for the recorded run itself (the trace's KFIG records);
  THP as asked   replay with the recording machine's settings (madvise here),
                 against the real run.

A prediction is the model's Anonymous (or AnonHugePages) plus, for Anonymous,
the pages the program wrote in private file mappings (which the kernel copies
into anonymous pages and the model does not hold).  It passes within 3% or
1 MiB of the kernel's figure.  Then, by mapping: each of the real run's
anonymous VMAs of 1 MiB or more at exit against the model's VMAs over the
same range (attribution.py), the same tolerance.  Needs root.  Exit status 1
if any row fails.

usage: validate.py BUILD_DIR [NAME...]
"""
import json
import os
import subprocess
import sys
import tempfile

import attribution

TOL_PCT, TOL_KB = 3.0, 1024


def programs(build):
    progs = os.path.join(build, "progs")
    tun = {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "..", "src", "mm", "huge_memory.c")
    inc = [os.path.join(here, "..", "..", d) for d in ("include", "src/mm")]
    return [
        ("coverletter", "the cover letter's program (200 MiB, a read every 4 KiB)",
         [progs + "/coverletter"], {}),
        ("coverletter-madvise", "the same with MADV_HUGEPAGE",
         [progs + "/coverletter", "--madvise"], {}),
        ("coverletter-madvise-write", "MADV_HUGEPAGE, then a write every 2 MiB",
         [progs + "/coverletter", "--madvise", "--write", "2097152"], {}),
        ("churn", "brk heap, mmap, munmap, mremap, threads, fork (ours), "
         "glibc.malloc.hugetlb=1", [progs + "/churn"], tun),
        ("snapshot", "a BGSAVE-like snapshot: MADV_HUGEPAGE heap, a child that exits and "
         "one killed by SIGKILL while the parent writes (ours)", [progs + "/snapshot"], {}),
        ("mappings", "one mapping of each kind: brk heap, MADV_HUGEPAGE and plain mmaps, "
         "small mmaps, thread stacks, a forked child (ours)", [progs + "/mappings"], {}),
        ("xz", "xz -6 of 4 MB (Debian's xz-utils), glibc.malloc.hugetlb=1",
         ["xz", "-6", "-T1", "-c", "@INPUT@"], tun),
        ("gcc", "gcc -O2 -c huge_memory.c: gcc, cc1, as (Debian's gcc-12), "
         "glibc.malloc.hugetlb=1",
         ["gcc", "-O2", "-I" + inc[0], "-I" + inc[1], "-c", src, "-o", "@TMP@/hm.o"], tun),
    ]


def vmstat(name):
    with open("/proc/vmstat") as f:
        for line in f:
            k, v = line.split()
            if k == name:
                return int(v)
    return 0


def run(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if r.returncode:
        sys.exit("validate: %s failed (%d): %s" % (" ".join(cmd), r.returncode,
                                                    r.stderr.decode()[-2000:]))


def replay(thpsim, trace, *sets):
    cmd = [thpsim, "replay", trace, "--format", "json", "--quiet", "--layouts", "1"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
    return json.loads(out.stdout)


def ok(pred, kern):
    d = abs(pred - kern)
    return d <= TOL_KB or (kern and 100.0 * d / kern <= TOL_PCT)


def row(rows, prog, mode, proc, fig, kern, pred):
    good = ok(pred, kern)
    d = pred - kern
    rows.append((prog, mode, proc, fig, kern, pred, d,
                 100.0 * d / kern if kern else 0.0, "ok" if good else "FAIL"))
    return good


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    only = sys.argv[2:]
    thpsim = os.path.join(build, "thpsim")
    if os.geteuid() != 0:
        sys.exit("validate: needs root (the recorder uses perf tracepoints and ptrace)")
    tmp = tempfile.mkdtemp(prefix="thpsim-validate-")
    inp = os.path.join(tmp, "input.txt")
    with open(inp, "w") as f:  # 4 MB of text that compresses
        for i in range(1, 290000):
            f.write("%d %d\n" % (i * 7919 % 100003, i))
    rows, attrib, all_ok = [], [], True
    for name, desc, cmd, extra_env in programs(build):
        if only and name not in only:
            continue
        cmd = [c.replace("@INPUT@", inp).replace("@TMP@", tmp) for c in cmd]
        env = dict(os.environ, **extra_env)
        # the same layout in both runs: no address randomization
        full = ["setarch", "-R"] + cmd
        trace = os.path.join(tmp, name + ".trace")
        measured = os.path.join(tmp, name + ".json")
        print("%-26s %s" % (name, desc), file=sys.stderr)
        run([thpsim, "record", "-q", "-o", trace, "--"] + full, env)
        collapse0 = vmstat("thp_collapse_alloc")
        run([thpsim, "record", "--measure", "-o", measured, "--"] + full, env)
        collapsed = vmstat("thp_collapse_alloc") - collapse0
        off = replay(thpsim, trace, "transparent_hugepage/enabled=never")
        asked = replay(thpsim, trace)
        # THP off: the recorded run itself
        for p in off["processes"]:
            if "recorded_kernel" not in p:
                continue
            k, m = p["recorded_kernel"], p["model_at_recorded_exit"]
            label = "%s %d" % (p["name"], p["pid"])
            all_ok &= row(rows, name, "off", label, "Anonymous", k["Anonymous"],
                          m["Anonymous"] + p["file_copies_kB_at_recorded_exit"])
            all_ok &= row(rows, name, "off", label, "AnonHugePages", k["AnonHugePages"],
                          m["AnonHugePages"])
        # THP as the program asked: the real run, matched by program and order
        with open(measured) as f:
            real = json.load(f)["processes"]
        # the real run's processes are listed as they exited: so are these
        # (those that ended: by exit or by a signal, not by exec or at the end
        # of the trace)
        mine = sorted((p for p in asked["processes"]
                       if p["ended_by"] not in ("exec", "end of trace")),
                      key=lambda p: p["end_s"])
        used = set()
        for r in real:
            base = os.path.basename(r["exe"])
            cand = [i for i, p in enumerate(mine) if i not in used and p["name"] == base]
            if not cand:
                rows.append((name, "asked", base, "-", 0, 0, 0, 0.0, "FAIL (not in the trace)"))
                all_ok = False
                continue
            # the same program's processes exit in the same order
            i = cand[0]
            used.add(i)
            p = mine[i]
            label = "%s %d" % (p["name"], p["pid"])
            all_ok &= row(rows, name, "asked", label, "Anonymous", r["Anonymous"],
                          p["final"]["Anonymous"] + p["file_copies_kB"])
            all_ok &= row(rows, name, "asked", label, "AnonHugePages", r["AnonHugePages"],
                          p["final"]["AnonHugePages"])
            attrib += attribution.pair_rows(name, r, p)
        if collapsed:
            print("  note: khugepaged collapsed %d THPs during the real run (system-wide); "
                  "the replay's khugepaged runs on the trace's clock, the real one when "
                  "the scheduler lets it" % collapsed, file=sys.stderr)
    print("%-26s %-6s %-22s %-14s %10s %10s %8s %7s  %s" % (
        "program", "THP", "process", "figure", "kernel kB", "predicted", "diff", "diff%",
        "within 3% or 1 MiB"))
    for r in rows:
        print("%-26s %-6s %-22.22s %-14s %10d %10d %+8d %+6.2f%%  %s" % r)
    print("\nby mapping: the real run's anonymous VMAs of 1 MiB+ at exit, THP as asked")
    attribution.print_rows(attrib)
    bad = sum(1 for r in attrib if not r[6])
    all_ok &= not bad
    print("\nvalidate: %d comparisons, %d outside 3%% and 1 MiB; by mapping %d, %d outside" % (
        len(rows), sum(1 for r in rows if r[-1] != "ok"), len(attrib), bad))
    subprocess.run(["rm", "-rf", tmp])
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
