"""The one way ptdp's Python scripts write a JSON file, as core/io/staged_file.h does in C++: the
bytes go to a temporary created exclusively in the destination folder, then replace the path, so
the path holds its old bytes or all the new ones. A path that is a link, folder or device is
refused, never replaced or written through. Standard library only.
"""
import json
import os
import stat
import tempfile

from ptdp_report.load import Refused


def check_output(path):
    """Refused unless `path` is absent or a regular file: checked before any work, and again
    just before the replace."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise Refused(path, "", "is not a regular file (a link, folder or device is never replaced)")


def write_json(path, doc):
    """doc as indented JSON at path, through an exclusive temporary name beside it."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        os.chmod(tmp, 0o644)
        check_output(path)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
