"""The project's promises about itself: README commands, CI, license, floors, no warnings."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

import zarrpy

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block, "README.md must start with a bash block of commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_starts_with_the_two_commands():
    demo, tests = readme_commands()
    assert "pip install" in demo and "zarrpy demo" in demo
    assert 'pip install -e ".[test]"' in tests and "pytest" in tests


def test_ci_runs_the_readme_test_command_verbatim_and_nothing_before_it():
    ci = (ROOT / ".ci" / "run").read_text()
    _, tests = readme_commands()
    assert tests in ci
    before = ci[: ci.index(tests)]
    assert "pip install" not in re.sub(r"#.*", "", before), ".ci/run installs something the README does not"


def test_ci_type_checks_the_package_with_the_strict_layers():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python3 -m mypy" in re.sub(r"#.*", "", ci)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["files"] == ["zarrpy"]
    strict = [o for o in config["overrides"] if o.get("disallow_untyped_defs")]
    assert strict and {"zarrpy.codecs.*", "zarrpy.stores.*"} <= set(strict[0]["module"])


def test_minimum_versions_are_pinned_from_pyproject():
    script = (ROOT / ".ci" / "min-versions").read_text()
    assert "pyproject.toml" in script and "==" in script
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+>=[0-9][^,;\s]*", d) for d in deps), deps


def test_license_file_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_version_is_the_declared_one():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert zarrpy.__version__ == project["version"]


def test_plain_use_prints_no_warning():
    """Strings, bytes, every built-in compressor and crc32c, V2 and V3: no warning at all."""
    script = textwrap.dedent("""
        import warnings
        warnings.simplefilter("error")
        import numpy as np, zarrpy
        store = {}
        s = zarrpy.create_array(store, name="s", shape=(3,), dtype=str)
        s[:] = ["a", "bb", ""]
        b = zarrpy.create_array(store, name="b", shape=(2,), dtype=bytes)
        b[:] = [b"x", b""]
        blosc = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                     "blocksize": 0}}
        for i, c in enumerate(["gzip", "zstd", blosc]):
            a = zarrpy.create_array(store, name=f"n{i}", shape=(10,), dtype="i4",
                                    compressors=[c, "crc32c"])
            a[:] = np.arange(10)
            assert (a[:] == np.arange(10)).all()
        v2 = zarrpy.create_array(store, name="v2", shape=(3,), dtype=str, zarr_format=2)
        v2[:] = ["x", "y", "z"]
        assert list(zarrpy.open_array(store, path="s")[:]) == ["a", "bb", ""]
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-W", "error", "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
    assert proc.stderr == ""


def test_readme_python_examples_run(tmp_path):
    """Every ```python block of the README runs, in order, in one fresh interpreter."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 3
    proc = subprocess.run([sys.executable, "-W", "error", "-c", "\n".join(blocks)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Chunks Initialized" in proc.stdout and "No. bytes stored" in proc.stdout


@pytest.mark.parametrize("compiler", ["default", "none"])
def test_wheel_ships_py_typed_and_the_string_converter(tmp_path, compiler):
    """PEP 561: the wheel carries ``zarrpy/py.typed``, so type checkers read
    zarrpy's inline annotations instead of treating it as untyped. It holds
    the compiled string converter, and with no working C compiler the build
    still succeeds, without it (zarrpy then falls back to pure Python)."""
    assert (ROOT / "zarrpy" / "py.typed").is_file()
    src = tmp_path / "src"
    # Build from a copy: an in-tree build would leave build/ and *.egg-info in the repository.
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", "tests", "bench", "docs", "spec-fixtures", ".*",
        "*.so"))
    out = tmp_path / "wheels"
    env = {**os.environ, **({"CC": "/bin/false"} if compiler == "none" else {})}
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--no-input", "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert proc.returncode == 0, f"pip wheel failed:\n{proc.stdout}\n{proc.stderr}"
    (wheel,) = out.glob("zarrpy-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "zarrpy/py.typed" in names, sorted(n for n in names if n.startswith("zarrpy/"))[:20]
    assert "zarrpy/__init__.py" in names
    compiled = [n for n in names if n.startswith("zarrpy/core/_cstrings") and n.endswith((".so", ".pyd"))]
    assert len(compiled) == (1 if compiler == "default" else 0), compiled
