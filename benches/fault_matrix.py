#!/usr/bin/env python3
"""Fault matrix: a fleet apply under each emulator fault, run twice, judged host by host.

For each fault kind, starts `rftune sim` with N hosts and that fault, runs `rftune apply` twice
(JSON output, forced reboots), then checks every host through the emulator itself:

- converged: the host ends with the profile's values and nothing pending;
- failed with reason: apply reported an error for it (its reason is counted by first words);
- silently wrong: apply said converged or in sync, but the host does not have the values;
- duplicates: a run in which one host received more than one BIOS PATCH or job;
- leaked sessions: sessions still open on the host after both runs.

Exits 1 when any host is silently wrong, got a duplicate PATCH or job, or was left with an open
session (a login whose answer was lost must not leave its session behind for the BMC's idle
timeout), so CI can hold rftune to it.

Usage: benches/fault_matrix.py [--rftune PATH] [--sim PATH] [--hosts 200] [--faults 503:0.1,...]
(--sim: the rftune binary whose emulator serves the fleet; defaults to --rftune, so an older
client can be judged against the same emulator.)
Prints a Markdown table. Uses only 127.0.0.1 and the Python standard library.
"""

import argparse
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

DEFAULT_FAULTS = [
    "503:0.1",
    "reset:0.1",
    "timeout:0.03",
    "malformed:0.1",
    "session-expiry:0.1",
    "stuck-job@10%",
    "job-fails@10%",
    "no-return@5%",
]
PROFILE = "performance"
WANT = {"SysProfile": "PerfOptimized"}
AUTH = "Basic " + base64.b64encode(b"root:calvin").decode()


def get(url, path):
    req = urllib.request.Request(url + path, headers={"Authorization": AUTH})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def post(url, path):
    req = urllib.request.Request(url + path, data=b"{}", method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()


def host_truth(url):
    """What the emulated host really holds, read with retries (faults apply to us too)."""
    for _ in range(40):
        try:
            bios = get(url, "/redfish/v1/Systems/System.Embedded.1/Bios")["Attributes"]
            pending = get(url, "/redfish/v1/Systems/System.Embedded.1/Bios/Settings")["Attributes"]
            sessions = get(url, "/redfish/v1/SessionService/Sessions").get("Members", [])
            return bios, pending, len(sessions)
        except Exception:
            time.sleep(0.05)
    return None, None, None


def stats(url):
    with urllib.request.urlopen(url + "/_sim/stats", timeout=10) as r:
        return json.load(r)


def run_fault(rftune, sim_binary, fault, hosts, seed):
    for attempt in range(5):
        try:
            return run_fault_once(rftune, sim_binary, fault, hosts, seed)
        except EmulatorStopped as e:
            # Older emulators bind in the ephemeral range and may meet a busy port: try again.
            if attempt == 4:
                raise SystemExit(str(e))
            time.sleep(2)


class EmulatorStopped(Exception):
    pass


def run_fault_once(rftune, sim_binary, fault, hosts, seed):
    work = tempfile.mkdtemp(prefix="rftune-faults-")
    inventory = os.path.join(work, "fleet.toml")
    sim = subprocess.Popen(
        [sim_binary, "sim", "--http", "--model", "r7525", "--hosts", str(hosts), "--listen", "127.0.0.1:0",
         "--fault", fault, "--seed", str(seed), "--boot-time", "1s", "--write-inventory", inventory],
        stdout=subprocess.PIPE, stderr=open(os.path.join(work, "sim.err"), "w"), text=True)
    urls = []
    while len(urls) < hosts:
        line = sim.stdout.readline()
        if not line:
            raise EmulatorStopped("the emulator stopped: " + fault + ": " + open(os.path.join(work, "sim.err")).read()[-2000:])
        m = re.search(r"listening (\S+)", line)
        if m:
            urls.append(m.group(1))
    while not os.path.exists(inventory):
        time.sleep(0.05)
    env = dict(os.environ, RFTUNE_PASSWORD="calvin", RFTUNE_STATE_DIR=os.path.join(work, "state"))
    outcome = {}
    duplicates = set()
    for run in (1, 2):
        for u in urls:
            post(u, "/_sim/stats/reset")
        p = subprocess.run(
            [rftune, "apply", "--inventory", inventory, "-p", PROFILE, "--reboot", "force",
             "--max-unavailable", str(hosts), "--job-timeout", "20s", "--boot-timeout", "20s",
             "--timeout", "5s", "--retry-for", "30s", "-o", "json"],
            env=env, capture_output=True, text=True, timeout=900)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = {"hosts": []}
        for i, h in enumerate(doc.get("hosts", [])):
            outcome[i] = h
        for i, u in enumerate(urls):
            s = stats(u)
            if s["bios_patches"] > 1 or s["jobs_created"] > 1:
                duplicates.add(i)
    converged = failed = wrong = leaked = 0
    reasons = {}
    for i, u in enumerate(urls):
        bios, pending, sessions = host_truth(u)
        h = outcome.get(i, {})
        good = bios is not None and all(bios.get(k) == v for k, v in WANT.items()) and not pending
        said_good = h.get("outcome") in ("converged", "in_sync")
        if said_good and not good:
            wrong += 1
        elif good and said_good:
            converged += 1
        else:
            failed += 1
            reason = re.sub(r"^\S+: ", "", h.get("error", "no report"))[:60]
            reasons[reason] = reasons.get(reason, 0) + 1
        if sessions:
            leaked += sessions
    sim.terminate()
    sim.wait()
    return converged, failed, wrong, len(duplicates), leaked, reasons


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rftune", default="target/release/rftune")
    ap.add_argument("--sim", default=None)
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--faults", default=",".join(DEFAULT_FAULTS))
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    print(f"| fault ({a.hosts} hosts, apply twice) | converged | failed with reason | silently wrong | duplicate PATCH/job | leaked sessions |")
    print("|---|--:|--:|--:|--:|--:|")
    details = []
    broken = []
    for fault in a.faults.split(","):
        c, f, w, d, l, reasons = run_fault(a.rftune, a.sim or a.rftune, fault, a.hosts, a.seed)
        print(f"| `{fault}` | {c} | {f} | {w} | {d} | {l} |", flush=True)
        if reasons:
            details.append((fault, reasons))
        for count, what in ((w, "silently wrong"), (d, "with a duplicate PATCH or job"), (l, "leaked session(s)")):
            if count:
                broken.append(f"{fault}: {count} {what}")
    for fault, reasons in details:
        top = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
        print(f"\n{fault}: " + "; ".join(f"{n}× {r}" for r, n in top))
    if broken:
        print("\nFAILED: " + "; ".join(broken), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
