#!/usr/bin/env python3
"""host_replays.py - the randomised rows' predictions, replayed on the host.

usage: host_replays.py RESULTS THPSIM

The 6.12 guest records each row of tools/kernels/aslr with randomisation
off and runs it 16 times with randomisation on (tools/kernels/init); the
prediction, the trace replayed under its layouts and khugepaged's phases,
is a replay like any other, and the model gives the same figures wherever
it runs (the trace carries the recording kernel's settings and profile;
the replay's machine is --ram's, 64 GiB by default, not the host's).  In
the guest, under TCG, those replays took 62 s of the 6.12 guest's 467
(2026-12-07: python3's 148 replays alone 21 s); here they take a second or
two.  So the guest sends the traces and this replays them with the same
static thpsim the guest ran, appending to RESULTS, for each row with
randomised runs ("aslr-run NAME 1"), the section "aslr-pred NAME" that
summarize.py reads: the replay's JSON and its exit status.

A row's traces are its own recordings ("aslr-trace-base64 NAME I", I = 1,
2, ...: a program recorded several times, gocache), or else its programs
row's recording ("trace-base64 NAME").

The guest's other replays whose figures it does not need itself (a
program's replay as recorded, a limit row's replay under its memory.max,
the global-pressure rows' under their free blocks: 36 s of the 6.12
guest's time, 2026-12-07) come here the same way: a section
"host-replay SECTION" names, on its first line, the section holding the
trace ("trace-base64 NAME"), and on its second the replay's arguments;
this appends SECTION, the replay's JSON, and its exit status.

Exit status 0, or 2 for bad arguments or a RESULTS that cannot be read or
written.
"""
import base64
import binascii
import os
import re
import subprocess
import sys
import tempfile

SECTION = re.compile(r"@@THPSIM-BEGIN (.+?)@@\n(.*?)\n?@@THPSIM-END \1 rc=(\d+)@@", re.S)


def traces_of(sec, name):
    """The base64 bodies of NAME's traces, in recording order."""
    own = sorted((int(k.rsplit(" ", 1)[1]), body)
                 for k, (body, rc) in sec.items()
                 if k.startswith("aslr-trace-base64 %s " % name) and not rc
                 and k.rsplit(" ", 1)[1].isdigit())
    if own:
        return [b for _, b in own]
    body, rc = sec.get("trace-base64 " + name, ("", 1))
    return [body] if not rc and body.strip() else []


def replay(thpsim, name, bodies, work, args=()):
    """(JSON text or a reason, exit status) of thpsim replay over the traces,
    with ARGS besides."""
    paths = []
    for i, body in enumerate(bodies):
        path = os.path.join(work, "%s.%d.trace" % (name, i + 1))
        try:
            data = base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError) as e:
            return "trace %d of %s is not base64: %s" % (i + 1, name, e), 2
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
    p = subprocess.run([thpsim, "replay"] + paths + list(args) + ["--format", "json", "--quiet"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return (p.stdout if p.stdout.strip() else p.stderr.strip()), p.returncode


def section(name, body, rc):
    return "@@THPSIM-BEGIN %s@@\n%s\n@@THPSIM-END %s rc=%d@@\n" % (name, body.rstrip("\n"), name, rc)


def asked_replay(thpsim, sec, target, request, work):
    """(JSON text or a reason, exit status) of the replay a guest's
    "host-replay TARGET" section asks for: the trace's section, then the
    arguments."""
    lines = request.strip().split("\n")
    if len(lines) != 2 or not lines[0].startswith("trace-base64 "):
        return "the guest's request for '%s' is not a trace section and arguments: %r" % (
            target, request.strip()[:200]), 2
    body, rc = sec.get(lines[0], ("", 1))
    if rc or not body.strip():
        return "no '%s' from the guest for '%s'" % (lines[0], target), 2
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", target)
    return replay(thpsim, name, [body], work, lines[1].split())


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    results, thpsim = argv[1], argv[2]
    try:
        with open(results, "rb") as f:
            text = f.read().decode("utf-8", "replace").replace("\r", "")
    except OSError as e:
        print("host_replays: %s: %s" % (results, e.strerror), file=sys.stderr)
        return 2
    sec = {m.group(1): (m.group(2), int(m.group(3))) for m in SECTION.finditer(text)}
    names = sorted(k[len("aslr-run "):-len(" 1")] for k in sec
                   if k.startswith("aslr-run ") and k.endswith(" 1"))
    out = []
    with tempfile.TemporaryDirectory(prefix="thpsim-aslr-") as work:
        for name in names:
            if "aslr-pred " + name in sec:
                continue  # a guest of before, which replayed it itself
            bodies = traces_of(sec, name)
            if not bodies:
                body, rc = "no trace of %s from the guest" % name, 2
            else:
                body, rc = replay(thpsim, name, bodies, work)
            out.append(section("aslr-pred " + name, body, rc))
        for key in sorted(k for k in sec if k.startswith("host-replay ")):
            target = key[len("host-replay "):]
            if target in sec:
                continue
            body, rc = asked_replay(thpsim, sec, target, sec[key][0], work)
            out.append(section(target, body, rc))
    try:
        with open(results, "a") as f:
            f.write("".join(out))
    except OSError as e:
        print("host_replays: %s: %s" % (results, e.strerror), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
