"""The outcomes of the GPU campaign's steps and commands: the names of ptdp's
step runner (core/process/outcome.h; tests/driver/check_campaign_runner.py
holds the two lists equal), read from exit statuses and result files, never
from printed text. Standard library only.
"""
OK, FAILED, TIMEOUT, OOM, SKIPPED, REFUSED = "ok", "failed", "timeout", "oom", "skipped", "refused"
OUTCOMES = (OK, FAILED, TIMEOUT, OOM, SKIPPED, REFUSED)

REFUSED_EXIT = 2  # every program of the campaign refuses its input with 2
OOM_EXIT = 4  # ptdp's out of memory (the PyTorch baseline's is 3)
TIMEOUT_EXIT = 124  # what Runner.run returns for a command it stopped at its cap


def of_exit(rc, oom_exit=OOM_EXIT):
    """The outcome of a command that ended with exit status rc."""
    if rc == 0:
        return OK
    if rc == TIMEOUT_EXIT:
        return TIMEOUT
    if rc == oom_exit:
        return OOM
    if rc == REFUSED_EXIT:
        return REFUSED
    return FAILED


def passed(outcome):
    """Whether a step with this outcome leaves the campaign's verdict at pass: ok or skipped."""
    return outcome in (OK, SKIPPED)


def combined(parts):
    """A step's outcome from those of its parts: the first that did not pass, else ok."""
    return next((p for p in parts if not passed(p)), OK)
