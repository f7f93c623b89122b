#!/usr/bin/env python3
"""The GPU campaign rehearsed on a machine without a GPU (label campaign): a
pack made from this build (scripts/gpu_pack.py, xz -0), then
scripts/gpu_campaign.py against it: every GPU step skipped visibly with its
summary written; the CPU rehearsal's training, kernel and summary steps; a
step that no longer fits the budget skipped; a call killed mid-way still
returning what finished; a pack that cannot run here stopped at once (exit 3)
with the reason; bad input refused (exit 2). Standard library only.

Usage: check_gpu_campaign.py --build-dir BUILD
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gpu_pack  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "report"))
from ptdp_report.load import read_json  # noqa: E402
CAMPAIGN = os.path.join(ROOT, "scripts", "gpu_campaign.py")
ALLOWED_OUT = {"summary.md", "status.tsv", "tests.tsv", "env.txt", "campaign.log", "campaign.tar.gz"}
ARGS = None


def status(out):
    with open(os.path.join(out, "status.tsv")) as f:
        rows = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    return {r[0]: (r[1], r[3] if len(r) > 3 else "") for r in rows[1:]}


def campaign(tmp, name, *extra, pack=None):
    out, work = os.path.join(tmp, name), os.path.join(tmp, name + "-work")
    r = subprocess.run([sys.executable, CAMPAIGN, out, "--work", work, "--pack", pack or GpuCampaign.pack, *extra],
                       capture_output=True, text=True, timeout=300)
    return r, out


class GpuCampaign(unittest.TestCase):
    pack = None

    @classmethod
    def setUpClass(cls):
        cls.tmp_dir = tempfile.TemporaryDirectory()
        cls.tmp = cls.tmp_dir.name
        cls.pack = os.path.join(cls.tmp, "pack")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu_pack.py"), "--build-dir",
                            ARGS.build_dir, "--out", cls.pack, "--fast", "--max-mib", "400"],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        cls.pack_said = r.stdout

    @classmethod
    def tearDownClass(cls):
        cls.tmp_dir.cleanup()

    def test_the_pack_loads_in_a_clean_environment_and_names_its_build(self):
        self.assertIn("load in a clean environment", self.pack_said)
        m = read_json(os.path.join(self.pack, "manifest.json"))
        self.assertEqual(set(m["programs"]), {"ptdp", "ptdp_gpu_tests", "ptdp_bench_kernels"})
        self.assertIn("libopenblas.so.0", m["packed_libraries"])
        self.assertIn("libcudart.so.13", m["device_libraries"])
        self.assertEqual(m["build"]["PTDP_WITH_CUDA"], "ON")

    def test_without_a_gpu_every_gpu_step_is_skipped_visibly(self):
        r, out = campaign(self.tmp, "nogpu")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        s = status(out)
        self.assertEqual(s["env"][0], "ok")
        for step in ("smoke", "headline", "tests", "kernels", "baseline", "more", "slices", "ncu"):
            self.assertEqual(s[step], ("skipped", "no GPU (nvidia-smi lists none)"), step)
        self.assertTrue(set(os.listdir(out)) <= ALLOWED_OUT, os.listdir(out))
        with open(os.path.join(out, "summary.md")) as f:
            summary = f.read()
        self.assertIn("| smoke | skipped |", summary)
        self.assertIn("cuBLASLt", summary)

    def test_the_packs_gpu_tests_load_and_skip_visibly_through_the_driver(self):
        _, out = campaign(self.tmp, "driver", "--steps", "env")
        work = out + "-work"
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(work, "pack", "lib") + ":/usr/local/cuda/lib64")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gtest_driver.py"), "--binary",
                            os.path.join(work, "pack", "bin", "ptdp_gpu_tests"), "--out", os.path.join(work, "t"),
                            "--sanitizer", "none"], capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(work, "t", "tests.tsv")) as f:
            rows = [l.split("\t") for l in f.read().splitlines()[1:]]
        self.assertGreater(len(rows), 100)
        self.assertEqual({row[1] for row in rows}, {"skipped"})
        self.assertIn("no CUDA device", rows[0][4])

    def test_the_cpu_rehearsal_trains_benchmarks_and_summarises(self):
        r, out = campaign(self.tmp, "cpu", "--device", "cpu", "--steps", "env,smoke,headline,kernels,more")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        s = status(out)
        self.assertEqual({k: v[0] for k, v in s.items()},
                         {"env": "ok", "smoke": "ok", "headline": "ok", "kernels": "ok", "more": "ok"})
        self.assertIn("machine profile cpu-host", s["smoke"][1])
        self.assertIn("micro-batch 4 ran", s["headline"][1])
        with open(os.path.join(out, "summary.md")) as f:
            summary = f.read()
        for row in ("| ptdp | measured | 4 | none |", "| ptdp | projected (profile) | 4 | none |",
                    "| ptdp | projected (this device's calibration) | 4 | none |", "op closure, forward",
                    "- GEMM ceiling, 512x512x512, ptdp: "):
            self.assertIn(row, summary)
        with tarfile.open(os.path.join(out, "campaign.tar.gz")) as tar:
            names = set(tar.getnames())
        for name in ("headline/ptdp-1.7b-none-b4.json", "headline/ptdp-1.7b-none-b4.trace.json.gz",
                     "kernels/kernels.json", "kernels/calibration.json", "attempts.tsv", "logs/first-run.log"):
            self.assertIn(name, names)
        self.assertFalse(any(n.startswith("pack/") for n in names))

    def test_a_step_that_no_longer_fits_is_skipped(self):
        r, out = campaign(self.tmp, "short", "--device", "cpu", "--budget", "30", "--steps", "env,smoke,headline")
        s = status(out)
        self.assertEqual(s["headline"][0], "skipped", r.stdout)
        self.assertIn("out of time", s["headline"][1])

    def test_a_call_killed_midway_returns_what_finished(self):
        out, work = os.path.join(self.tmp, "killed"), os.path.join(self.tmp, "killed-work")
        proc = subprocess.Popen([sys.executable, CAMPAIGN, out, "--work", work, "--pack", self.pack, "--device", "cpu",
                                 "--steps", "env,smoke,headline,kernels,more"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "headline" not in status_or_empty(out):
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        self.assertEqual(status(out)["headline"][0], "ok")
        with tarfile.open(os.path.join(out, "campaign.tar.gz")) as tar:
            self.assertIn("headline/ptdp-1.7b-none-b4.json", tar.getnames())

    def test_a_pack_of_another_build_stops_at_once(self):
        bad = os.path.join(self.tmp, "bad-pack")
        shutil.copytree(self.pack, bad)
        m = read_json(os.path.join(bad, "manifest.json"))
        m["archive"]["sha256"] = "0" * 64
        with open(os.path.join(bad, "manifest.json"), "w") as f:
            json.dump(m, f)
        r, out = campaign(self.tmp, "badsha", pack=bad)
        self.assertEqual(r.returncode, 3)
        self.assertEqual(status(out)["pack"][0], "failed")
        self.assertIn("sha256", status(out)["pack"][1])

    def test_a_missing_library_stops_at_once_naming_it(self):
        bad = self.pack_with_a_program_needing("libptdp_absent.so")
        r, out = campaign(self.tmp, "nolib", pack=bad)
        self.assertEqual(r.returncode, 3, r.stdout)
        self.assertIn("libptdp_absent.so not found", status(out)["pack"][1])
        self.assertNotIn("env", status(out))

    def pack_with_a_program_needing(self, soname):
        """A copy of the pack whose ptdp_bench_kernels needs a library nobody has."""
        d = tempfile.mkdtemp(dir=self.tmp)
        with open(os.path.join(d, "x.c"), "w") as f:
            f.write("int x(void) { return 1; }\n")
        with open(os.path.join(d, "main.c"), "w") as f:
            f.write("int x(void);\nint main(void) { return x(); }\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(d, soname), os.path.join(d, "x.c")], check=True)
        subprocess.run(["cc", "-o", os.path.join(d, "prog"), os.path.join(d, "main.c"), os.path.join(d, soname)],
                       check=True)
        os.unlink(os.path.join(d, soname))
        stage = os.path.join(d, "stage")
        gpu_pack.extract_pack(os.path.join(self.pack, "ptdp-pack.tar.xz"), stage)
        shutil.copyfile(os.path.join(d, "prog"), os.path.join(stage, "bin", "ptdp_bench_kernels"))
        bad = os.path.join(d, "pack")
        os.makedirs(bad)
        archive = os.path.join(bad, "ptdp-pack.tar.xz")
        with tarfile.open(archive, "w:xz", preset=0) as tar:
            tar.add(stage, arcname=".")
        import hashlib
        m = read_json(os.path.join(self.pack, "manifest.json"))
        with open(archive, "rb") as f:
            m["archive"]["sha256"] = hashlib.sha256(f.read()).hexdigest()
        with open(os.path.join(bad, "manifest.json"), "w") as f:
            json.dump(m, f)
        return bad

    def test_bad_input_is_refused(self):
        for extra, word in ((["--steps", "env,bogus"], "--steps"), (["--budget", "5"], "--budget"),
                            (["--only-failed", "/nonexistent/tests.tsv"], "--only-failed")):
            r, _ = campaign(self.tmp, "refused", *extra)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(word, r.stderr)
        foreign = os.path.join(self.tmp, "foreign")
        os.makedirs(foreign)
        open(os.path.join(foreign, "keep.txt"), "w").close()
        r = subprocess.run([sys.executable, CAMPAIGN, os.path.join(self.tmp, "o"), "--work", foreign, "--pack",
                            self.pack], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertTrue(os.path.exists(os.path.join(foreign, "keep.txt")))


def status_or_empty(out):
    try:
        return status(out)
    except (OSError, IndexError):
        return {}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
