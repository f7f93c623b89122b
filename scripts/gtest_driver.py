#!/usr/bin/env python3
"""Runs the tests of one GoogleTest program in as few processes as it can,
for a GPU lease where each process start pays CUDA, cuBLASLt and cuDNN
initialisation (docs/gpu-campaign.md).

One process runs every test still to run. It stops at the first test that
crashes, hangs (no end within --test-timeout) or leaves the process broken
(the program's BreakGuard prints "[ BROKEN   ] Suite.Test: why" and exits,
tests/gtest_break_guard.h: the GPU tests' sticky CUDA error); that test is
recorded and the rest resume in a fresh process. Afterwards each test that did
not pass is run alone again with CUDA_LAUNCH_BLOCKING=1 and the cuDNN frontend,
cuDNN, cuBLASLt and NCCL logs on, then under compute-sanitizer's memcheck when
it is there and a GPU is.

OUT/tests.tsv (test, status, seconds, process, note, alone) is rewritten
atomically after every test; statuses: passed, failed, skipped, crashed, hang,
broken, not-run. A table already in OUT is resumed: tests with a final status
there are not run again. Logs: OUT/logs/process-N.log, OUT/alone/*.log.

Usage: gtest_driver.py --binary PROGRAM --out DIR [--filter GTEST_FILTER]
         [--only-failed OLD_TABLE] [--test-timeout S] [--budget S]
         [--rerun-limit N] [--sanitizer auto|none|PATH] [--sanitizer-timeout S]
Exit status: 0 every test run passed or skipped, 1 one did not or some were
not run, 2 refused input or the program could not list its tests.
Standard library only.
"""
import argparse
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from campaign.runner import write_atomic  # noqa: E402

FINAL = ("passed", "failed", "skipped", "crashed", "hang", "broken")
NOT_PASSED = ("failed", "crashed", "hang", "broken")
COLUMNS = ("test", "status", "seconds", "process", "note", "alone")
# The logs a failing test is rerun with: CUDA errors at the launch that made
# them, and what cuDNN's frontend, cuDNN, cuBLASLt and NCCL say.
RERUN_ENV = {"CUDA_LAUNCH_BLOCKING": "1", "CUDNN_FRONTEND_LOG_INFO": "1", "CUDNN_FRONTEND_LOG_FILE": "stderr",
             "CUDNN_LOGLEVEL_DBG": "2", "CUDNN_LOGDEST_DBG": "stderr", "CUBLASLT_LOG_LEVEL": "2",
             "NCCL_DEBUG": "INFO"}
LINE = re.compile(r"^\[ *(RUN|OK|FAILED|SKIPPED|BROKEN) *\] (\S+)(.*)$")
MILLISECONDS = re.compile(r"\((\d+) ms\)\s*$")


def parse(line):
    """(kind, test, milliseconds or None, rest) of one of GoogleTest's status lines, else None.
    A typed or parameterised test's FAILED line carries ", where TypeParam = ..." after its name."""
    m = LINE.match(line)
    if m is None:
        return None
    kind, name, rest = m.groups()
    ms = MILLISECONDS.search(rest)
    return kind, name.rstrip(",:"), int(ms.group(1)) if ms else None, rest.strip()


def refuse(why):
    print(f"gtest_driver: refused: {why}", file=sys.stderr)
    sys.exit(2)


def list_tests(binary, gtest_filter):
    """The program's test names (Suite.Test), in its order."""
    args = [binary, "--gtest_list_tests"] + ([f"--gtest_filter={gtest_filter}"] if gtest_filter else [])
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        refuse(f"--binary {binary}: cannot list its tests: {e}")
    if r.returncode != 0:
        refuse(f"--binary {binary}: listing its tests exited {r.returncode}: {(r.stdout + r.stderr)[-400:]}")
    names, suite = [], None
    for line in r.stdout.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        elif suite:
            names.append(suite + line.split("#")[0].strip())
    return names


def read_table(path):
    """{test: row} of a table written by this driver ({} when there is none)."""
    rows = {}
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return rows
    for line in lines[1:]:
        cells = line.split("\t")
        if len(cells) >= 2:
            rows[cells[0]] = dict(zip(COLUMNS, cells + [""] * (len(COLUMNS) - len(cells))))
    return rows


def clean(text):
    return " ".join(str(text).split())[:300]


class Table:
    """The per-test table, rewritten through a temporary name after every change."""

    def __init__(self, path, earlier, selected):
        """Rows of the earlier table (tests another selection recorded stay), then the selected tests
        it lacks; only the selected ones without a final status are to run."""
        self.path = path
        self.rows = dict(earlier)
        for n in selected:
            self.rows.setdefault(n, {"test": n, "status": "not-run", "seconds": "", "process": "", "note": "",
                                     "alone": ""})
        self.selected = list(selected)
        self.write()

    def set(self, name, **cells):
        self.rows[name].update({k: clean(v) if k in ("note", "alone") else str(v) for k, v in cells.items()})
        self.write()

    def todo(self):
        return [n for n in self.selected if self.rows[n]["status"] not in FINAL]

    def write(self):
        write_atomic(self.path, "".join("\t".join(cells) + "\n" for cells in
                                        [COLUMNS] + [[r[c] for c in COLUMNS] for r in self.rows.values()]))


def signal_name(rc):
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


class Process:
    """One run of the program over `names`; parses GoogleTest's lines as they come."""

    def __init__(self, binary, names, log_path, env):
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen([binary, "--gtest_color=no", "--gtest_filter=" + ":".join(names)],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        self.buffer = b""
        self.current, self.started, self.broken, self.failure = None, 0.0, "", []

    def lines(self, wait):
        """Complete lines read within `wait` seconds; [] at a quiet moment, None at the end of output."""
        ready, _, _ = select.select([self.proc.stdout], [], [], wait)
        if not ready:
            return []
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return None
        self.log.write(chunk)
        self.log.flush()
        self.buffer += chunk
        *complete, self.buffer = self.buffer.split(b"\n")
        return [l.decode("utf-8", "replace") for l in complete]

    def close(self):
        self.proc.stdout.close()
        self.log.close()


def run_all(args, table, env):
    """The main pass: processes until every test has a status or time is up."""
    deadline = time.monotonic() + args.budget
    reserve = min(5.0, 0.1 * args.budget)  # too little left to start a process and finish a test
    number = 0
    while table.todo():
        todo = table.todo()
        if time.monotonic() > deadline - reserve:
            for n in todo:
                table.set(n, note="not run: out of time")
            return
        number += 1
        print(f"gtest_driver: process {number}: {len(todo)} tests", flush=True)
        p = Process(args.binary, todo, os.path.join(args.out, "logs", f"process-{number}.log"), env)
        ended, reason, quiet_since = 0, "", time.monotonic()
        while True:
            lines = p.lines(1.0)
            now = time.monotonic()
            if lines is None:
                break
            for line in lines:
                parsed = parse(line)
                if parsed is None:
                    if p.current and (": Failure" in line or ": Skipped" in line or p.failure) and len(p.failure) < 6:
                        p.failure.append(line.strip())
                    continue
                kind, name, ms, rest = parsed
                if kind == "RUN" and name in table.rows:
                    p.current, p.started, p.failure = name, now, []
                elif kind == "BROKEN" and name == p.current:
                    p.broken = rest.lstrip(":").strip()
                elif kind in ("OK", "FAILED", "SKIPPED") and name == p.current and ms is not None:
                    status = {"OK": "passed", "FAILED": "failed", "SKIPPED": "skipped"}[kind]
                    note = " ".join(p.failure[:3] if status == "failed" else p.failure[1:2] if status == "skipped" else [])
                    table.set(name, status=status, seconds=f"{ms / 1000:.3f}", process=number, note=note)
                    if status == "failed":
                        print(f"gtest_driver: FAILED {name}", flush=True)
                    p.current, ended, quiet_since = None, ended + 1, now
            if p.current and now - p.started > args.test_timeout:
                reason = "hang"
                break
            if not p.current and now - quiet_since > args.test_timeout:
                reason = "stall"  # no test running and none starting: stuck before, between or after tests
                break
            if now > deadline:
                reason = "budget"
                break
        if reason:
            kill_group(p.proc)
        rc = p.proc.wait()
        p.close()
        if p.current:
            seconds = f"{time.monotonic() - p.started:.3f}"
            if reason == "budget":
                table.set(p.current, note="not run to its end: out of time")
                continue
            if reason == "hang":
                status, note = "hang", f"no end within {args.test_timeout:g} s; killed"
            elif p.broken:
                status, note = "broken", p.broken
            else:
                status, note = "crashed", (signal_name(rc) if rc < 0 else f"exit {rc}") + (
                    ": " + " ".join(p.failure[-3:]) if p.failure else "")
            table.set(p.current, status=status, seconds=seconds, process=number, note=note)
            print(f"gtest_driver: {status.upper()} {p.current}: {note}", flush=True)
        elif reason == "stall":
            for n in table.todo():
                table.set(n, note=f"not run: the program stalled outside a test for {args.test_timeout:g} s; killed")
            return
        elif ended == 0:
            # No test started or ended: the program cannot run these (it did not
            # start, or they are not its tests). Stop rather than loop.
            with open(os.path.join(args.out, "logs", f"process-{number}.log"), errors="replace") as f:
                tail = clean(f.read()[-300:])
            for n in table.todo():
                table.set(n, note=f"not run: the program ran none of them (exit {rc}): {tail}")
            return


def rerun_alone(args, table, env):
    """Each test that did not pass, alone: with blocking launches and the libraries' logs,
    then under compute-sanitizer's memcheck when there is one and a GPU."""
    sanitizer = find_sanitizer(args.sanitizer)
    deadline = time.monotonic() + args.rerun_budget
    failing = [n for n in table.selected if table.rows[n]["status"] in NOT_PASSED and not table.rows[n]["alone"]]
    failing = failing[: args.rerun_limit]
    os.makedirs(os.path.join(args.out, "alone"), exist_ok=True)
    for name in failing:
        left = deadline - time.monotonic()
        if left < 5:
            table.set(name, alone="not rerun: out of time")
            continue
        base = os.path.join(args.out, "alone", re.sub(r"[^A-Za-z0-9._-]", "_", name))
        outcome = run_one(args.binary, name, base + ".log", {**env, **RERUN_ENV}, min(args.test_timeout, left))
        text = f"alone with CUDA_LAUNCH_BLOCKING=1: {outcome}"
        left = deadline - time.monotonic()
        if sanitizer and left > 5:
            checked = run_one(args.binary, name, base + ".memcheck.log", env, min(args.sanitizer_timeout, left),
                              [sanitizer, "--tool", "memcheck", "--error-exitcode", "99", "--print-limit", "20"])
            text += "; memcheck: " + ("errors found" if checked == "exit 99" else checked)
        elif not sanitizer:
            text += "; memcheck: not run (no compute-sanitizer or no GPU)"
        table.set(name, alone=text)
        print(f"gtest_driver: {name}: {text}", flush=True)


def run_one(binary, name, log_path, env, timeout, prefix=()):
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(list(prefix) + [binary, "--gtest_color=no", f"--gtest_filter={name}"], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True, env=env)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            return f"no end within {timeout:.0f} s"
    if rc < 0:
        return f"crashed ({signal_name(rc)})"
    if rc == 0:
        with open(log_path, errors="replace") as f:
            return "skipped" if "[  SKIPPED ]" in f.read() else "passed"
    return f"exit {rc}"


def find_sanitizer(choice):
    if choice == "none":
        return None
    if choice != "auto":
        return choice if os.access(choice, os.X_OK) else refuse(f"--sanitizer {choice}: not an executable")
    path = shutil.which("compute-sanitizer") or next(
        (p for p in ("/usr/local/cuda/bin/compute-sanitizer",) if os.access(p, os.X_OK)), None)
    try:
        gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20).stdout.startswith("GPU")
    except (OSError, subprocess.TimeoutExpired):
        gpu = False
    return path if gpu else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--filter", default="", help="a GoogleTest filter selecting the tests")
    ap.add_argument("--only-failed", help="a table of an earlier run: only its tests that did not pass or skip")
    ap.add_argument("--test-timeout", type=float, default=120, help="seconds one test may run")
    ap.add_argument("--budget", type=float, default=300, help="seconds for the main pass")
    ap.add_argument("--rerun-budget", type=float, default=120, help="seconds for rerunning failures alone")
    ap.add_argument("--rerun-limit", type=int, default=6, help="most failing tests rerun alone")
    ap.add_argument("--sanitizer", default="auto", help="auto, none, or compute-sanitizer's path")
    ap.add_argument("--sanitizer-timeout", type=float, default=90)
    args = ap.parse_args()
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        refuse(f"--binary {args.binary}: not an executable file")
    for field in ("test_timeout", "budget", "rerun_budget", "sanitizer_timeout"):
        if not getattr(args, field) > 0:
            refuse(f"--{field.replace('_', '-')}: must be a positive number of seconds")
    if args.rerun_limit < 0:
        refuse("--rerun-limit: must be 0 or more")
    if os.path.islink(args.out) or (os.path.exists(args.out) and not os.path.isdir(args.out)):
        refuse(f"--out {args.out}: not a folder")
    names = list_tests(args.binary, args.filter)
    if args.only_failed:
        if not os.path.isfile(args.only_failed):
            refuse(f"--only-failed {args.only_failed}: no such table")
        old = read_table(args.only_failed)
        names = [n for n in names if n in old and old[n]["status"] not in ("passed", "skipped")]
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    table_path = os.path.join(args.out, "tests.tsv")
    if os.path.islink(table_path):
        refuse(f"{table_path}: a symbolic link")
    table = Table(table_path, read_table(table_path), names)
    env = dict(os.environ)
    run_all(args, table, env)
    if args.rerun_limit > 0:
        rerun_alone(args, table, env)
    mine = [table.rows[n]["status"] for n in names]
    print("gtest_driver: " + ", ".join(f"{mine.count(s)} {s}" for s in FINAL + ("not-run",) if mine.count(s)) +
          f" of {len(names)} selected ({len(table.rows)} in {table_path})", flush=True)
    return 0 if all(s in ("passed", "skipped") for s in mine) else 1


if __name__ == "__main__":
    sys.exit(main())
