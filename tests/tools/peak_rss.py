"""Peak resident memory of a command, for the tests that bound what copies hold."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

RSS_WRAPPER = textwrap.dedent("""
    import resource, subprocess, sys
    subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, timeout=120)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, KiB elsewhere
""")


def peak_rss(*command: str) -> int:
    """Peak resident bytes of ``command`` (two codec threads), run by a
    wrapper process that waits for nothing else."""
    env = {**os.environ, "ZARRPY_THREADS": "2"}
    proc = subprocess.run([sys.executable, "-c", RSS_WRAPPER, *command], capture_output=True, text=True,
                          timeout=150, env=env)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.strip())
