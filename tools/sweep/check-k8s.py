#!/usr/bin/env python3
"""check-k8s.py MANIFEST PLAN WORKDIR THPSIM: tools/sweep/k8s-job.yaml
checked, then run here as the Indexed Job it describes (make check's sweep).

1. Schema: where kubectl is installed, the manifest is decoded offline into
   Kubernetes' own batch/v1 types (kubectl's --local mode: no API
   server).  A value of the wrong type fails the decoding; a
   field the types do not know is dropped on the way through, so every
   field of the manifest must come out again as it went in ("kubectl set
   image --local" to another image, which is then put back: the typed
   decoding happens only for a change).  Without
   kubectl this part is skipped, saying so.
2. The rules the API server applies to a Job that matter here (Kubernetes'
   documentation of Jobs and Indexed Jobs): kind Job in batch/v1, a name,
   completionMode Indexed with completions set, parallelism and completions
   above 0, backoffLimitPerIndex only with Indexed, restartPolicy Never or
   OnFailure, container names DNS labels, a memory request no more than its
   limit, every volumeMount naming a volume.
3. The Job run here: what the Job controller does with it, for the plan's
   jobs (completions set to the plan's job count, as its comment says):
   each index 0..N-1 runs the container's command with
   JOB_COMPLETION_INDEX=I in its workingDir, at most parallelism at once;
   the volume is WORKDIR, its mountPath replaced by WORKDIR in the command
   and the working directory (the plan's traces are named relative to it),
   so the results land where the command's -o puts them, in WORKDIR, for
   the caller to merge.

Prints "ok"/"FAIL"/"skip" lines; exit 1 when one failed.
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
fails = 0


def say(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += 0 if ok else 1


def lost(inp, out, path=""):
    """The fields of inp that are not in out as they were: [path, ...]."""
    if isinstance(inp, dict):
        if not isinstance(out, dict):
            return [path or "."]
        res = []
        for k, v in inp.items():
            if k not in out:
                res.append(path + "." + k)
            else:
                res += lost(v, out[k], path + "." + k)
        return res
    if isinstance(inp, list):
        if not isinstance(out, list) or len(out) != len(inp):
            return [path]
        res = []
        for i, (a, b) in enumerate(zip(inp, out)):
            res += lost(a, b, "%s[%d]" % (path, i))
        return res
    return [] if inp == out or str(inp) == str(out) else [path]


def schema(manifest, doc):
    kubectl = shutil.which("kubectl")
    if not kubectl:
        print("skip schema: kubectl is not installed (Kubernetes' own types decode the "
              "manifest offline where it is)")
        return
    cont = doc["spec"]["template"]["spec"]["containers"][0]
    out = subprocess.run([kubectl, "set", "image", "--local", "-f", manifest,
                          "%s=%s" % (cont["name"], cont["image"] + "-check"), "-o", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         timeout=60)
    if out.returncode:
        say(False, "kubectl decodes the manifest into batch/v1 types: %s"
            % out.stderr.strip()[-300:])
        return
    typed = json.loads(out.stdout)
    typed["spec"]["template"]["spec"]["containers"][0]["image"] = cont["image"]
    gone = lost(doc, typed)
    ver = subprocess.run([kubectl, "version", "--client", "-o", "json"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    try:
        ver = json.loads(ver)["clientVersion"]["gitVersion"]
    except (ValueError, KeyError):
        ver = "?"
    say(not gone, "every field of the manifest is one of Kubernetes' batch/v1 Job fields "
        "(kubectl %s, offline)%s" % (ver, ": unknown " + ", ".join(gone) if gone else ""))


def rules(doc):
    spec = doc.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    conts = pod.get("containers", [])
    vols = {v.get("name") for v in pod.get("volumes", [])}
    problems = []
    if doc.get("apiVersion") != "batch/v1" or doc.get("kind") != "Job":
        problems.append("not a batch/v1 Job")
    if not doc.get("metadata", {}).get("name"):
        problems.append("no metadata.name")
    if spec.get("completionMode") != "Indexed":
        problems.append("completionMode is not Indexed (JOB_COMPLETION_INDEX is unset)")
    for k in ("completions", "parallelism"):
        if not isinstance(spec.get(k), int) or spec[k] < 1:
            problems.append("spec.%s is not a count above 0" % k)
    if "backoffLimitPerIndex" in spec and spec.get("completionMode") != "Indexed":
        problems.append("backoffLimitPerIndex needs completionMode Indexed")
    if pod.get("restartPolicy") not in ("Never", "OnFailure"):
        problems.append("restartPolicy must be Never or OnFailure for a Job")
    if len(conts) != 1:
        problems.append("one container expected")
    for c in conts:
        if not DNS_LABEL.match(c.get("name", "")):
            problems.append("container name %r is not a DNS label" % c.get("name"))
        res = c.get("resources", {})
        req, lim = res.get("requests", {}).get("memory"), res.get("limits", {}).get("memory")
        if req and lim and parse_qty(req) > parse_qty(lim):
            problems.append("memory request %s above its limit %s" % (req, lim))
        for m in c.get("volumeMounts", []):
            if m.get("name") not in vols:
                problems.append("volumeMount %r names no volume" % m.get("name"))
        cmd = c.get("command", [])
        if cmd[:3] != ["thpsim", "sweep", "run"] or "--index" in cmd:
            problems.append("the command is not 'thpsim sweep run PLAN' taking the index "
                            "from $JOB_COMPLETION_INDEX")
    say(not problems, "the Job rules the API server applies%s" % (
        ": " + "; ".join(problems) if problems else ""))
    return not problems


def parse_qty(q):
    m = re.match(r"^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$", str(q))
    if not m:
        return float("inf")
    mult = {None: 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1024, "Mi": 1024 ** 2,
            "Gi": 1024 ** 3, "Ti": 1024 ** 4}[m.group(2)]
    return int(m.group(1)) * mult


def run(doc, plan, workdir, thpsim):
    pod = doc["spec"]["template"]["spec"]
    c = pod["containers"][0]
    mount = c["volumeMounts"][0]["mountPath"].rstrip("/")
    n = sum(1 for line in open(plan) if line.strip())
    par = doc["spec"]["parallelism"]

    def here(s):
        return workdir + s[len(mount):] if s == mount or s.startswith(mount + "/") else s

    cmd = [thpsim] + [here(a) for a in c["command"][1:]]
    cwd = here(c.get("workingDir", "/"))
    if not os.path.exists(cmd[3]) or not os.path.samefile(cmd[3], plan):
        say(False, "the manifest's plan %s, in the volume, is %s" % (c["command"][3], plan))
        return

    def one(i):
        env = dict(os.environ, JOB_COMPLETION_INDEX=str(i))
        for k in ("SLURM_ARRAY_TASK_ID", "PARALLEL_SEQ"):
            env.pop(k, None)
        return subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode

    with concurrent.futures.ThreadPoolExecutor(max_workers=min(par, 4)) as ex:
        codes = list(ex.map(one, range(n)))
    bad = [i for i, rc in enumerate(codes) if rc]
    say(not bad, "the Indexed Job's %d pods (completions %d, parallelism %d, 4 at a time "
        "here), each with JOB_COMPLETION_INDEX=I: %s" % (
            n, n, par, "every one succeeded" if not bad else "indices %s failed" % bad[:10]))


def main():
    manifest, plan, workdir, thpsim = sys.argv[1:5]
    with open(manifest) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    say(len(docs) == 1, "the manifest is one YAML document")
    doc = docs[0]
    schema(manifest, doc)
    if rules(doc):
        run(doc, plan, os.path.abspath(workdir), thpsim)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
