"""The documentation site builds (``mkdocs build --strict``), and its examples run.

Strict mode turns every warning into a failure: a broken link or anchor, a
page missing from the nav, a docstring the API reference cannot parse. The
docs packages come with the test extras (``zarrpy[docs]``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

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


# Pages whose ```python blocks make one program each (run in order, in a fresh
# interpreter, in an empty directory): the examples must work as written.
EXAMPLE_PAGES = [
    "index.md",
    "guide/arrays.md",
    "guide/indexing.md",
    "guide/groups.md",
    "guide/stores.md",
    "guide/codecs.md",
    "guide/sharding.md",
    "guide/strings.md",
    "guide/v2-and-migration.md",
    "guide/buffers.md",
    "guide/lazy-arrays.md",
    "plugins.md",
    "from-zarr-python.md",
]


@pytest.mark.parametrize("page", EXAMPLE_PAGES)
def test_the_python_examples_of_a_page_run(page, tmp_path):
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, f"docs/{page} has no python example"
    proc = subprocess.run([sys.executable, "-W", "error", "-c", "\n".join(blocks)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
