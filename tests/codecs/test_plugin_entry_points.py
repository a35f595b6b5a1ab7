"""Codec plugins are found through the ``zarrpy.codecs`` entry-point group.

A real distribution (``tests/plugin_dist``) is installed with pip into a
temporary directory; Python subprocesses with that directory on ``PYTHONPATH``
then create and reopen arrays that name its codec ``example.xor``, without ever
importing the plugin module by hand. Without the directory on the path, the
same array fails to open with an UnknownCodecError naming the codec.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from zarrpy.stores.local import LocalStore

PLUGIN_SRC = Path(__file__).resolve().parents[1] / "plugin_dist"
CODEC = {"name": "example.xor", "configuration": {"key": 165}}
SUBPROCESS_TIMEOUT = 120


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    """A directory holding the installed plugin distribution (not the source tree)."""
    work = tmp_path_factory.mktemp("plugin")
    src = work / "src"
    # Build from a copy: an in-tree build would leave build/ and *.egg-info in the repository.
    shutil.copytree(PLUGIN_SRC, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = work / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--no-input", "--target", str(site), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, f"pip install failed:\n{proc.stdout}\n{proc.stderr}"
    assert (site / "zarrpy_plugin_example" / "__init__.py").is_file()
    eps = list(site.glob("zarrpy_plugin_example-*.dist-info/entry_points.txt"))
    assert eps, sorted(p.name for p in site.iterdir())
    text = eps[0].read_text()
    assert "[zarrpy.codecs]" in text and "example.xor = zarrpy_plugin_example:XorCodec" in text
    return site


def run_python(script: str, *, site: Path | None, log: Path | None = None) -> dict:
    """Run ``script`` in a fresh interpreter; it prints one JSON object last."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ZARRPY_PLUGIN_EXAMPLE_LOG")}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    if log is not None:
        env["ZARRPY_PLUGIN_EXAMPLE_LOG"] = str(log)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          env=env, timeout=SUBPROCESS_TIMEOUT, cwd=str(Path(__file__).resolve().parents[2]))
    assert proc.returncode == 0, f"subprocess failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def expected_data() -> np.ndarray:
    return (np.arange(70, dtype="int32").reshape(10, 7) * 1_000_003 - 12345).astype("int32")


CREATE = """
import json, sys
import numpy as np
import zarrpy
from zarrpy.stores.local import LocalStore

before = "zarrpy_plugin_example" in sys.modules
a = zarrpy.create_array(LocalStore({root!r}), shape=(10, 7), chunks=(4, 3), dtype="int32",
                        compressors=[{codec!r}], fill_value=-1)
after_create = "zarrpy_plugin_example" in sys.modules
a[...] = (np.arange(70, dtype="int32").reshape(10, 7) * 1_000_003 - 12345).astype("int32")
a[9, 6] = -1   # equals the fill value; that chunk still holds other data
print(json.dumps({{
    "before": before,
    "after_create": after_create,
    "codecs": [c.to_json() for c in a.codecs],
    "codec_module": type(a.compressors[0]).__module__,
}}))
"""

REOPEN = """
import json, sys
import numpy as np
import zarrpy
from zarrpy.codecs.abc import BytesToBytesCodec
from zarrpy.stores.local import LocalStore

before = "zarrpy_plugin_example" in sys.modules
a = zarrpy.open_array(LocalStore({root!r}), mode="r")
after_open = "zarrpy_plugin_example" in sys.modules
codec = a.compressors[0]
data = a[...]
print(json.dumps({{
    "before": before,
    "after_open": after_open,
    "codec_module": type(codec).__module__,
    "codec_class": type(codec).__name__,
    "is_b2b": isinstance(codec, BytesToBytesCodec),
    "codec_json": codec.to_json(),
    "data": data.tolist(),
    "dtype": str(data.dtype),
}}))
"""


def test_plugin_round_trip_through_entry_point(plugin_site, tmp_path):
    root = tmp_path / "xor.zarr"
    log = tmp_path / "imports.log"
    created = run_python(CREATE.format(root=str(root), codec=CODEC), site=plugin_site, log=log)
    assert created["before"] is False, "importing zarrpy imported the plugin eagerly"
    assert created["after_create"] is True
    assert created["codecs"][-1] == CODEC
    assert created["codec_module"] == "zarrpy_plugin_example"

    doc = json.loads((root / "zarr.json").read_bytes())
    assert doc["codecs"] == [{"name": "bytes", "configuration": {"endian": "little"}}, CODEC]

    # The stored bytes really went through the plugin: XOR 165 of the little-endian elements.
    want = expected_data()
    want[9, 6] = -1
    raw = (root / "c" / "0" / "0").read_bytes()
    assert bytes(b ^ 165 for b in raw) == want[0:4, 0:3].astype("<i4").tobytes()
    edge = (root / "c" / "2" / "2").read_bytes()  # edge chunk stored at full chunk shape
    assert len(edge) == 4 * 3 * 4

    reopened = run_python(REOPEN.format(root=str(root)), site=plugin_site, log=log)
    assert reopened["before"] is False
    assert reopened["after_open"] is True
    assert reopened["codec_module"] == "zarrpy_plugin_example"
    assert reopened["codec_class"] == "XorCodec"
    assert reopened["is_b2b"] is True
    assert reopened["codec_json"] == CODEC
    assert reopened["dtype"] == "int32"
    np.testing.assert_array_equal(np.array(reopened["data"], dtype="int32"), want)

    # One import per process, each caused by zarrpy meeting the codec name.
    assert log.read_text().splitlines() == ["imported", "imported"]


def test_plugin_not_imported_until_its_name_is_needed(plugin_site, tmp_path):
    root = tmp_path / "plain.zarr"
    log = tmp_path / "imports.log"
    out = run_python(f"""
        import json, sys
        import numpy as np
        import zarrpy
        from zarrpy.stores.local import LocalStore
        a = zarrpy.create_array(LocalStore({str(root)!r}), shape=(4,), chunks=(2,), dtype="uint8",
                                compressors=[{{"name": "gzip", "configuration": {{"level": 1}}}}])
        a[...] = np.arange(4)
        b = zarrpy.open_array(LocalStore({str(root)!r}))
        print(json.dumps({{"imported": "zarrpy_plugin_example" in sys.modules, "data": b[...].tolist()}}))
    """, site=plugin_site, log=log)
    assert out == {"imported": False, "data": [0, 1, 2, 3]}
    assert not log.exists()


def test_plugin_offered_among_the_close_names(plugin_site, tmp_path):
    out = run_python("""
        import json
        import zarrpy
        from zarrpy.codecs.registry import codec_from_json, get_codec_class
        cls = get_codec_class("example.xor")
        try:
            codec_from_json({"name": "example.xro"})
        except zarrpy.UnknownCodecError as exc:
            msg = str(exc)
        else:
            msg = None
        c = codec_from_json({"name": "example.xor", "configuration": {"key": 7}})
        print(json.dumps({"cls": f"{cls.__module__}:{cls.__name__}", "msg": msg, "json": c.to_json()}))
    """, site=plugin_site)
    assert out["cls"] == "zarrpy_plugin_example:XorCodec"
    assert out["json"] == {"name": "example.xor", "configuration": {"key": 7}}
    assert out["msg"] is not None and "'example.xro'" in out["msg"]
    assert "did you mean 'example.xor'" in out["msg"]  # the plugin's codec is a name that works
    assert "zarrpy.codecs" in out["msg"]


def test_plugin_bad_configuration_writes_nothing(plugin_site, tmp_path):
    root = tmp_path / "bad.zarr"
    out = run_python(f"""
        import json
        import zarrpy
        from zarrpy.stores.local import LocalStore
        try:
            zarrpy.create_array(LocalStore({str(root)!r}), shape=(4,), chunks=(2,), dtype="uint8",
                                compressors=[{{"name": "example.xor", "configuration": {{"key": 300}}}}])
        except zarrpy.CodecError as exc:
            print(json.dumps({{"error": type(exc).__name__, "msg": str(exc)}}))
        else:
            print(json.dumps({{"error": None}}))
    """, site=plugin_site)
    assert out["error"] is not None
    assert "example.xor" in out["msg"] and "key" in out["msg"]
    assert not root.exists()


def _make_xor_array(plugin_site: Path, root: Path) -> None:
    run_python(CREATE.format(root=str(root), codec=CODEC), site=plugin_site)
    assert (root / "zarr.json").is_file()


def test_without_plugin_open_raises_unknown_codec(plugin_site, tmp_path):
    root = tmp_path / "xor.zarr"
    _make_xor_array(plugin_site, root)
    out = run_python(f"""
        import json, sys
        import zarrpy
        from zarrpy.stores.local import LocalStore
        try:
            zarrpy.open_array(LocalStore({str(root)!r}))
        except zarrpy.UnknownCodecError as exc:
            print(json.dumps({{"error": type(exc).__name__, "msg": str(exc),
                               "imported": "zarrpy_plugin_example" in sys.modules}}))
        else:
            print(json.dumps({{"error": None}}))
    """, site=None)
    assert out["error"] == "UnknownCodecError"
    assert "example.xor" in out["msg"]
    assert "zarrpy.codecs" in out["msg"]
    assert out["imported"] is False


def test_without_plugin_in_this_process(plugin_site, tmp_path):
    root = tmp_path / "xor.zarr"
    _make_xor_array(plugin_site, root)
    before = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(zarrpy.UnknownCodecError, match=r"example\.xor"):
        zarrpy.open_array(LocalStore(root))
    with pytest.raises(zarrpy.UnknownCodecError, match=r"example\.xor"):
        zarrpy.open(LocalStore(root), mode="a")
    assert {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert "zarrpy_plugin_example" not in sys.modules


def test_plugin_found_by_its_v2_id(plugin_site, tmp_path):
    """A V2 array whose compressor id only the plugin declares (``v2_id``)
    opens through the entry point, and zarrpy writes it back in V2 form."""
    root = tmp_path / "v2.zarr"
    root.mkdir()
    data = np.arange(12, dtype="<i4")
    (root / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [12], "chunks": [6], "dtype": "<i4", "order": "C",
        "compressor": {"id": "example-xor", "key": 165}, "filters": None, "fill_value": 0,
    }))
    for i in range(2):
        (root / str(i)).write_bytes(bytes(b ^ 165 for b in data[6 * i : 6 * (i + 1)].tobytes()))
    script = f"""
        import json, sys
        import zarrpy
        a = zarrpy.open_array({str(root)!r}, mode="r+")
        loaded = "zarrpy_plugin_example" in sys.modules
        values = a[...].tolist()
        a[0] = 100
        print(json.dumps({{"loaded": loaded, "values": values, "class": type(a.compressors[0]).__name__}}))
    """
    out = run_python(script, site=plugin_site)
    assert out == {"loaded": True, "values": data.tolist(), "class": "XorCodec"}
    assert json.loads((root / ".zarray").read_text())["compressor"] == {"id": "example-xor", "key": 165}
    raw = bytes(b ^ 165 for b in (root / "0").read_bytes())
    assert np.frombuffer(raw, "<i4").tolist() == [100, *range(1, 6)]

    without = run_python(f"""
        import json, zarrpy
        try:
            zarrpy.open_array({str(root)!r})
        except zarrpy.ZarrpyError as exc:
            print(json.dumps({{"error": type(exc).__name__, "msg": str(exc)}}))
    """, site=None)
    assert "example-xor" in without["msg"]
