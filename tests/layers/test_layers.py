"""scripts/layers.py on small fake trees: a tree that keeps the order passes, and
each check (an include running up or sideways, a folder not in the table, a
cycle, too many levels) fails it with its own message."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "layers.py"

# A tree that keeps the order: io (0) <- kernels (1) <- kernels/cuda (2) <- comm (3) <- the top.
GOOD = {"core/io/poll.h": "",
        "core/kernels/ops.h": '#include "core/io/poll.h"\n',
        "core/kernels/cuda/ops_cuda.cpp": '#include "core/kernels/ops.h"\n',
        "core/comm/nccl.cpp": '#include "core/kernels/cuda/ops_cuda.h"\n#include <vector>\n',
        "tests/unit/test_comm.cpp": '#include "core/comm/nccl.h"\n#include "util.h"\n',
        "tests/unit/util.h": ""}


def run(files, *options):
    """The script's exit status and its output (stdout and stderr) on a tree of `files`."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            path = Path(tmp) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        done = subprocess.run([sys.executable, str(SCRIPT), "--root", tmp, *options],
                              capture_output=True, text=True, check=False)
        return done.returncode, done.stdout + done.stderr


class Layers(unittest.TestCase):
    def assert_fails(self, files, message, *options):
        rc, out = run(files, *options)
        self.assertEqual(rc, 1, out)
        self.assertIn(message, out)

    def test_a_tree_in_order_passes(self):
        rc, out = run(GOOD)
        self.assertEqual(rc, 0, out)
        self.assertIn("depth 5 levels (top -> core/comm -> core/kernels/cuda -> core/kernels -> core/io)", out)

    def test_an_upward_include_fails(self):
        self.assert_fails({**GOOD, "core/io/poll.h": '#include "core/comm/nccl.h"\n'},
                          "core/io/poll.h includes core/comm/nccl.h: core/io (level 0) may include only lower "
                          "levels; core/comm is level 3")

    def test_a_cuda_kernel_including_comm_fails(self):  # core/kernels/cuda is a folder of its own
        self.assert_fails({**GOOD, "core/kernels/cuda/wait_cuda.cpp": '#include "core/comm/poll_wait.h"\n'},
                          "core/kernels/cuda (level 2) may include only lower levels; core/comm is level 3")

    def test_a_sideways_include_fails(self):
        self.assert_fails({**GOOD, "core/kernels/cpu/gemm.cpp": '#include "core/kernels/cuda/gemm.h"\n'},
                          "core/kernels/cpu (level 2) may include only lower levels; core/kernels/cuda is level 2")

    def test_library_code_including_the_top_fails(self):
        self.assert_fails({**GOOD, "core/comm/probe.cpp": '#include "tests/unit/util.h"\n'},
                          "core/comm (level 3) may include only lower levels; top is level")

    def test_a_folder_not_in_the_table_fails(self):  # even one that includes nothing
        self.assert_fails({**GOOD, "core/newfloor/thing.h": ""}, "core/newfloor is in no level of LEVELS")

    def test_a_cycle_fails(self):
        self.assert_fails({**GOOD, "core/io/poll.h": '#include "core/tensor/tensor.h"\n',
                           "core/tensor/tensor.h": '#include "core/io/poll.h"\n'},
                          "cycle core/io <-> core/tensor: core/io/poll.h includes core/tensor/tensor.h; "
                          "core/tensor/tensor.h includes core/io/poll.h")

    def test_more_levels_than_allowed_fail(self):
        self.assert_fails(GOOD, "depth 5 levels, over 4", "--max-depth", "4")

    def test_a_root_without_core_is_refused(self):
        rc, out = run({"src/main.cpp": ""})
        self.assertEqual(rc, 2, out)
        self.assertIn("--root", out)
        self.assertIn("no core/ folder there", out)

    def test_print_draws_the_levels(self):
        rc, out = run(GOOD, "--print")
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"(?m)^ 3  .*core/comm(  |$)")  # where the table puts it, and its includes too
        self.assertIn(" 8  top (graph: 4)\n", out)  # the table's level, and the one its includes give


class TheMapInTheDocs(unittest.TestCase):
    def test_docs_design_draws_the_levels_the_script_prints(self):
        """docs/design.md's map is the table as --print draws it on this tree."""
        root = SCRIPT.parents[1]
        done = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), "--print"],
                              capture_output=True, text=True, check=False)
        drawing = [line for line in done.stdout.splitlines() if line[:3].strip().isdigit()]
        self.assertTrue(drawing, done.stdout + done.stderr)
        self.assertIn("\n".join(drawing) + "\n```", (root / "docs" / "design.md").read_text())


if __name__ == "__main__":
    unittest.main()
