"""The GPU campaign's machinery (scripts/gpu_campaign.py): one wall-clock
budget, the step table's rows run in order each under its own cap, commands in
process groups killed at their cap, one line of status per step (an outcome of
campaign/outcome.py), and a background packer that rewrites OUT's archive every
30 s, so a call cut off at its limit still returns everything finished so far.
Standard library only.
"""
import collections
import json
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import threading
import time

from campaign.outcome import FAILED, OK, OUTCOMES, SKIPPED, TIMEOUT_EXIT

STATUS_COLUMNS = ("step", "status", "seconds", "note")
# Files larger than this stay out of the archive (named in archive-skipped.txt):
# what comes back from the device is at most 16 MiB a file.
ARCHIVE_FILE_LIMIT = 12 << 20


# A row of the step table: its name, its cap in seconds, the least it needs to
# be started, and body(ctx, room) -> its outcome (None: ok), room the seconds it may use.
Step = collections.namedtuple("Step", ("name", "cap", "least", "body"))


class StepSkipped(Exception):
    """A step that cannot run here (no GPU, no torch, out of time): recorded as skipped, with the reason."""


def write_atomic(path, text):
    tmp = f"{path}.tmp{os.getpid()}.{threading.get_ident()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json(path, value):
    write_atomic(path, json.dumps(value, indent=1) + "\n")


def copy_into(path, fileobj):
    with open(path, "rb") as f:
        shutil.copyfileobj(f, fileobj)


class Runner:
    """Budget, logging, commands and the step table of one campaign."""

    def __init__(self, out, work, budget, pack_every=30.0):
        self.out, self.work, self.budget = out, work, budget
        self.start = time.monotonic()
        self.steps = []  # rows of status.tsv, in order
        self.notes = []  # the running step's notes
        self.lock = threading.Lock()
        self.log_path = os.path.join(work, "campaign.log")
        self.stop = threading.Event()
        self.packer = threading.Thread(target=self._pack_loop, args=(pack_every,), daemon=True)
        self.packer.start()

    # --- time and words ---------------------------------------------------
    def elapsed(self):
        return time.monotonic() - self.start

    def left(self):
        return self.budget - self.elapsed()

    def say(self, text):
        line = f"[{time.strftime('%H:%M:%S', time.gmtime())} +{self.elapsed():4.0f}s] {text}"
        print(line, flush=True)
        with self.lock, open(self.log_path, "a") as f:
            f.write(line + "\n")

    def note(self, text):
        """A finding of the running step: in the log now, in its status row at its end."""
        self.notes.append(" ".join(str(text).split()))
        self.say(f"  {text}")

    # --- commands ---------------------------------------------------------
    def run(self, cmd, log, cap, env=None, cwd=None):
        """Runs cmd (a list: no shell) in its own process group with stdout and stderr
        into `log`, for at most `cap` seconds and what the budget leaves. Returns the
        exit status; TIMEOUT_EXIT when it was stopped at its cap, 127 when it cannot start."""
        limit = max(1.0, min(cap, self.left() - 3))
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "ab") as f:
            f.write(("$ " + " ".join(cmd) + "\n").encode())
            f.flush()
            try:
                proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                        start_new_session=True)
            except OSError as e:
                f.write(f"cannot start: {e}\n".encode())
                return 127
            try:
                return proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                f.write(f"\nstopped at its cap of {limit:.0f} s\n".encode())
                return TIMEOUT_EXIT

    # --- steps --------------------------------------------------------------
    def step(self, step, ctx):
        """Runs row `step` of the step table under min(cap, what is left): a step that no
        longer fits (less than its least) is skipped; StepSkipped skips with its reason;
        any other exception fails the step, and the campaign goes on. Returns its outcome."""
        self.notes = []
        t0 = time.monotonic()
        room = min(step.cap, self.left() - 5)
        if room < step.least:
            outcome, self.notes = SKIPPED, [f"out of time ({max(self.left(), 0):.0f} s left, needs {step.least} s)"]
        else:
            self.say(f"== {step.name} (up to {room:.0f} s)")
            try:
                outcome = step.body(ctx, room) or OK
            except StepSkipped as e:
                outcome = SKIPPED
                self.notes.append(str(e))
            except Exception as e:  # a bug in a step must not end the campaign
                outcome = FAILED
                self.notes.append(f"{type(e).__name__}: {e}")
            if outcome not in OUTCOMES:
                self.notes.append(f"a step's bug: it returned {outcome!r}, not an outcome")
                outcome = FAILED
        self.record(step.name, outcome, time.monotonic() - t0, self.notes)
        self.pack_now()
        return outcome

    def record(self, name, outcome, seconds, notes):
        """The status row of step `name`: its outcome, seconds and notes."""
        row = {"step": name, "status": outcome, "seconds": f"{seconds:.0f}", "note": "; ".join(notes)}
        self.steps.append(row)
        self.say(f"== {name}: {outcome}" + (f" ({row['note']})" if row["note"] else ""))
        self.write_status()

    def write_status(self):
        lines = ["\t".join(STATUS_COLUMNS)] + ["\t".join(r[c] for c in STATUS_COLUMNS) for r in self.steps]
        write_atomic(os.path.join(self.work, "status.tsv"), "\n".join(lines) + "\n")

    # --- what comes back ------------------------------------------------------
    def pack_now(self, summary=None):
        """Rewrites OUT: the small files by name, everything else in campaign.tar.gz (atomically)."""
        with self.lock:
            if summary is not None:
                try:
                    summary()
                except Exception as e:  # a summary bug must not cost the results
                    write_atomic(os.path.join(self.work, "summary.md"), f"summary failed: {e}\n")
            for name in ("campaign.log", "status.tsv", "summary.md", "env.txt", "tests.tsv"):
                src = os.path.join(self.work, name)
                if os.path.isfile(src):
                    self._replace(name, lambda f, src=src: copy_into(src, f))
            self._replace("campaign.tar.gz", self._archive)

    def _replace(self, name, write):
        """OUT/name rewritten through an exclusive temporary name (never through a planted link)."""
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=self.out)
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.chmod(tmp, 0o644)
            os.replace(tmp, os.path.join(self.out, name))
        except BaseException:
            os.unlink(tmp)
            raise

    def _archive(self, fileobj):
        """Every file of the work folder but the unpacked pack, each under ARCHIVE_FILE_LIMIT."""
        skipped = []
        with tarfile.open(fileobj=fileobj, mode="w:gz", compresslevel=6) as tar:
            for folder, dirs, files in os.walk(self.work):
                dirs[:] = sorted(d for d in dirs if not (folder == self.work and d == "pack"))
                for name in sorted(files):
                    path = os.path.join(folder, name)
                    if ".tmp" in name or name.startswith(".ptdp-") or os.path.islink(path) or \
                            name == "archive-skipped.txt":
                        continue
                    rel = os.path.relpath(path, self.work)
                    if os.path.getsize(path) > ARCHIVE_FILE_LIMIT:
                        skipped.append(f"{rel} ({os.path.getsize(path)} bytes)")
                        continue
                    tar.add(path, arcname=rel)
            if skipped:
                note = os.path.join(self.work, "archive-skipped.txt")
                write_atomic(note, "\n".join(skipped) + "\n")
                tar.add(note, arcname="archive-skipped.txt")

    def _pack_loop(self, every):
        while not self.stop.wait(every):
            try:
                self.pack_now()
            except Exception as e:  # keep packing on the next round
                print(f"gpu_campaign: packing failed: {e}", flush=True)

    def close(self, summary):
        self.stop.set()
        self.packer.join()
        self.pack_now(summary)
