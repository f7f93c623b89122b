"""What the checks against PyTorch and transformers share (label interop): the skip where
torch, transformers or safetensors cannot be imported, the --ptdp option, and the unittest run
whose exit status ctest reads (0 passed, 1 failed, 77 every test skipped: SKIP_RETURN_CODE).
"""
import argparse
import importlib.util
import sys
import unittest
from pathlib import Path

MISSING = [m for m in ("torch", "transformers", "safetensors") if importlib.util.find_spec(m) is None]

# Decorates a TestCase: skipped visibly, with the reason, by a Python that lacks any of them.
requires_torch = unittest.skipIf(
    MISSING, "not importable by " + sys.executable + ": " + ", ".join(MISSING) +
    " (pip install torch transformers safetensors, then cmake -DPTDP_TORCH_PYTHON=that python)")


def ptdp_option(description):
    """(the ptdp program from --ptdp, resolved since the tests run it in temporary folders;
    the other arguments, for unittest)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--ptdp", required=True, help="the ptdp program")
    args, rest = parser.parse_known_args()
    return str(Path(args.ptdp).resolve()), rest


def run_tests(rest):
    """Runs __main__'s tests; exits 1 on a failure, 77 when every test was skipped."""
    result = unittest.main(module="__main__", argv=[sys.argv[0], "-v", *rest], exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.testsRun > 0 and len(result.skipped) == result.testsRun:
        print("SKIPPED: " + result.skipped[0][1], file=sys.stderr)
        sys.exit(77)
