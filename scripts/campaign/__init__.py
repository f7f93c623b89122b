"""The GPU campaign (scripts/gpu_campaign.py): its runner, context and steps.

Its modules read JSON through report/ptdp_report/load.py (standard library only, like them):
report/ is put on the import path here, found from this folder.
"""
import os
import sys

_REPORT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "report")
if _REPORT not in sys.path:
    sys.path.insert(0, _REPORT)
