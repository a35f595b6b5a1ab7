"""The documentation site builds: ``mkdocs build --strict`` (mkdocs.yml, docs/).

Strict mode turns every warning into a failure: a broken link or anchor, a
page missing from the nav, a docstring the API reference cannot parse. The
docs packages come with the test extras (``zarrpy[docs]``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_docs_site_builds_in_strict_mode(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's banner about its successor
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "api" / "zarrpy" / "index.html").is_file()
