"""The Hugging Face GPT-2 interchange against an independent implementation.

Export: ptdp trains a tiny GPT (vocabulary 100, held as 128 rows) and writes
it with `ptdp train --export-hf`; transformers' GPT2LMHeadModel loads the
folder (from_pretrained, float32) and computes the loss on the export's fixed
batch (ptdp_check.json), which must be ptdp's own within 1e-4 relative.
Import: a GPT-2 made and saved by transformers (save_pretrained) starts
`ptdp train --init-hf`, whose first loss must be transformers' on that batch.

Needs torch and transformers (CI has neither): the tests skip visibly
(unittest's skip with the reason, exit status 77 for ctest's SKIP_RETURN_CODE)
where they cannot be imported. Registered in ctest as interop.hf_gpt2_torch
with the Python in PTDP_TORCH_PYTHON (cmake -DPTDP_TORCH_PYTHON=...).

Run: python3 tests/report/hf_gpt2_torch_check.py --ptdp build/endtoend/ptdp
"""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "report"))
from ptdp_report.load import read_json, read_result  # noqa: E402
from torch_interop import ptdp_option, requires_torch, run_tests  # noqa: E402

REL_TOL = 1e-4  # fp32 forwards of a 2-layer GPT by two implementations agree to ~1e-6; 1e-4 is the task's bound
PTDP = None  # the ptdp program, from --ptdp


def tiny_config(vocab_pad_to):
    return {"model": {"layers": 2, "hidden": 64, "heads": 4, "seq_len": 16, "vocab": 100,
                      "vocab_pad_to": vocab_pad_to},
            # one micro-batch of 2 a step: iteration 1's batch is the export's check batch
            "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 2, "global_batch": 2, "precision": "fp32", "seed": 1},
            "optimizer": {"lr": 0.003},
            "machine": "cpu-host"}


def ptdp_train(tmp, config, *options):
    cfg = Path(tmp) / "config.json"
    cfg.write_text(json.dumps(config))
    r = subprocess.run([PTDP, "train", "--config", str(cfg), "--warmup", "0", *options], cwd=tmp,
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"ptdp train {' '.join(options)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")


def transformers_loss(model_or_dir, check):
    """Mean cross-entropy of GPT2LMHeadModel's logits (float32) at the check's targets."""
    import torch
    from transformers import GPT2LMHeadModel
    model = model_or_dir
    if not isinstance(model, torch.nn.Module):
        model = GPT2LMHeadModel.from_pretrained(model_or_dir).float()
    model.eval()  # no dropout, as ptdp's forward
    with torch.no_grad():
        logits = model(torch.tensor(check["tokens"], dtype=torch.long)).logits  # (b, s, V) float32
        targets = torch.tensor(check["targets"], dtype=torch.long).reshape(-1)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).double(), targets)
    return float(loss)


@requires_torch
class HfGpt2AgainstTransformers(unittest.TestCase):
    def compare(self, ours, theirs, what):
        rel = abs(theirs - ours) / abs(ours)
        print(f"\n{what}: ptdp {ours:.9f}, transformers {theirs:.9f}, relative difference {rel:.3e}")
        self.assertLessEqual(rel, REL_TOL)

    def test_export_loads_in_transformers_with_ptdp_loss(self):
        with tempfile.TemporaryDirectory() as tmp:
            ptdp_train(tmp, tiny_config(128), "--iterations", "3", "--export-hf", "hf")
            check = read_json(Path(tmp) / "hf" / "ptdp_check.json")
            self.assertIn("loss_as_trained", check)  # 28 padded rows were dropped
            self.compare(check["loss"], transformers_loss(str(Path(tmp) / "hf"), check), "export")

    def test_transformers_model_starts_ptdp_with_its_loss(self):
        import torch
        from transformers import GPT2Config, GPT2LMHeadModel
        torch.manual_seed(0)
        config = GPT2Config(vocab_size=100, n_positions=32, n_embd=64, n_layer=2, n_head=4,
                            activation_function="gelu_new", layer_norm_epsilon=1e-5, bos_token_id=99, eos_token_id=99)
        model = GPT2LMHeadModel(config)
        with torch.no_grad():  # weights far from the initialisation, so that every tensor matters
            for p in model.parameters():
                p.normal_(0.0, 0.3)
        with tempfile.TemporaryDirectory() as tmp:
            model.save_pretrained(str(Path(tmp) / "theirs"))  # safetensors: the default since transformers 4.35
            ptdp_train(tmp, tiny_config(1), "--iterations", "1", "--init-hf", "theirs", "--out", "r.json",
                       "--export-hf", "again")
            first = read_result(Path(tmp) / "r.json")["metrics"]["loss"][0]
            check = read_json(Path(tmp) / "again" / "ptdp_check.json")
            self.compare(first, transformers_loss(model, check), "import")


def main():
    global PTDP
    PTDP, rest = ptdp_option(__doc__.splitlines()[0])
    run_tests(rest)


if __name__ == "__main__":
    main()
