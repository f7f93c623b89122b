#!/usr/bin/env bash
# The one command of a GPU lease (docs/gpu-campaign.md): the campaign of
# scripts/gpu_campaign.py from the pack in .gpupack/ (scripts/gpu_pack.sh, built
# on the CPU machine and carried with the call), results into OUT.
#   device call: command "bash scripts/gpu_campaign.sh $OUT", carry [".gpupack"], timeout_s 600
# Usage: scripts/gpu_campaign.sh OUT [--steps LIST] [--only-failed TESTS.TSV] [--budget S] [--device cuda|cpu]
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
exec python3 scripts/gpu_campaign.py "$@"
