#!/usr/bin/env python3
"""against_compare.py THPSIM PLAN MERGED_JSON: a merged sweep held against
"thpsim compare" on each trace, figure by figure.

For every trace and kernel of the plan, compare runs the plan's policies
with the plan's layouts (--set thpsim/kernel=X.Y unless "recorded") and
each policy's peak and final AnonPages and AnonHugePages must equal the
merged report's for that job.  A trace is a recording of a service (the
plan's "service", with its "recordings" and "weight", its instances): each
service's mean, lowest and highest per instance must be the mean of its
recordings' figures and the lowest and highest of their layouts (compare's
"range"), and each group's total, lowest and highest the sums of those
times the service's instances.  Prints one line per difference and ends with
"against compare: N passed, N failed".
"""
import json
import subprocess
import sys


def main():
    thpsim, plan_path, merged_path = sys.argv[1:4]
    with open(plan_path) as f:
        plan = [json.loads(line) for line in f if line.strip()]
    with open(merged_path) as f:
        merged = json.load(f)
    jobs = {j["job"]: j for j in merged["jobs"]}
    passed = failed = 0
    svc = {}   # (service, policy, kernel, fig) -> [sum/recordings, lowest, highest]
    weight = {}
    done = set()
    for job in plan:
        key = (job["trace"], job["kernel"])
        if key in done:
            continue
        done.add(key)
        mine = [j for j in plan if (j["trace"], j["kernel"]) == key]
        cmd = [thpsim, "compare", job["trace"], "--format", "json", "--quiet",
               "--layouts", str(job["layouts"])]
        if job["kernel"] != "recorded":
            cmd += ["--set", "thpsim/kernel=" + job["kernel"]]
        if job.get("memory_max", "max") != "max":
            cmd += ["--memory-max", str(job["memory_max"])]
        for j in mine:
            cmd += ["--policy", "%s=%s" % (j["policy"], j["knobs"])]
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if out.returncode not in (0, 1):
            print("FAIL %s: compare exited %d: %s" % (" ".join(cmd), out.returncode,
                                                      out.stderr.strip()[-300:]))
            failed += 1
            continue
        pols = {p["name"]: p for p in json.loads(out.stdout)["policies"]}
        for j in mine:
            p, m = pols.get(j["policy"]), jobs.get(j["job"])
            if p is None or m is None:
                print("FAIL %s: no figures (compare %s, merged %s)" % (j["job"], p is not None,
                                                                      m is not None))
                failed += 1
                continue
            for when in ("peak", "final"):
                for fig in ("AnonPages", "AnonHugePages"):
                    want, got = p[when][fig], m["%s_%s" % (when, fig)]
                    if want == got:
                        passed += 1
                    else:
                        print("FAIL %s %s %s: merged %d, compare %d" % (j["job"], when, fig,
                                                                       got, want))
                        failed += 1
                    name = "%s_%s" % (when, fig)
                    rg = p["range"][name]
                    acc = svc.setdefault((j["service"], j["policy"], j["kernel"], name),
                                         [0.0, rg["min"], rg["max"]])
                    acc[0] += want / j["recordings"]
                    acc[1] = min(acc[1], rg["min"])
                    acc[2] = max(acc[2], rg["max"])
                    weight[j["service"]] = j["weight"]

    def check(what, got, want):
        nonlocal passed, failed
        if want is not None and got is not None and abs(want - got) < 0.5:
            passed += 1
        else:
            print("FAIL %s: merged %s, from compare %s" % (what, got, want))
            failed += 1

    for s in merged["services"]:
        for g in s["groups"]:
            for name in ("peak_AnonPages", "final_AnonPages", "peak_AnonHugePages",
                         "final_AnonHugePages"):
                acc = svc.get((s["service"], g["policy"], g["kernel"], name))
                for k, i in (("mean_kB", 0), ("lowest_kB", 1), ("highest_kB", 2)):
                    check("service %s %s %s %s %s" % (s["service"], g["policy"], g["kernel"],
                                                     name, k), g[name][k],
                          acc[i] if acc else None)
    for grp in merged["groups"]:
        for name in ("peak_AnonPages", "final_AnonPages", "peak_AnonHugePages",
                     "final_AnonHugePages"):
            for k, i in (("total_kB", 0), ("lowest_kB", 1), ("highest_kB", 2)):
                want = sum(weight[sv] * acc[i] for (sv, pol, ker, n), acc in svc.items()
                           if (pol, ker, n) == (grp["policy"], grp["kernel"], name))
                check("total %s %s %s %s" % (grp["policy"], grp["kernel"], name, k),
                      grp[name][k], want)
    print("against compare: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
