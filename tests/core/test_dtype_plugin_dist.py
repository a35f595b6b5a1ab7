"""Data-type plugins are found through the ``zarrpy.data_types`` entry-point group.

The same real distribution as the codec plugin test (``tests/plugin_dist``,
installed with pip into a temporary directory) declares ``example.q8_8``
(8.8 fixed point over int16). Fresh interpreters with that directory on
``PYTHONPATH`` create, write, reopen and read arrays of that type by name
(V3 and V2), without importing the plugin by hand; without it the same store
fails to open with "unknown data type" naming the type and the group.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.codecs.test_plugin_entry_points import plugin_site, run_python  # noqa: F401 - fixture

SCRIPT = """
import json, sys
import numpy as np
import zarrpy
before = "zarrpy_dtype_example" in sys.modules
a = zarrpy.create_array({root!r}, shape=(3, 4), chunks=(2, 2), dtype="example.q8_8",
                        fill_value=-1.5, zarr_format={fmt})
a[...] = np.arange(12, dtype="int16").reshape(3, 4) * 100 - 500
b = zarrpy.open_array({root!r}, mode="r")
print(json.dumps({{"before": before, "after": "zarrpy_dtype_example" in sys.modules,
                  "name": b.metadata.data_type.name if {fmt} == 3 else None,
                  "fill": float(b.fill_value), "data": b[...].tolist(), "dtype": str(b.dtype)}}))
"""


@pytest.mark.parametrize("fmt", [3, 2])
def test_plugin_data_type_round_trip(plugin_site, tmp_path, fmt):  # noqa: F811
    root = str(tmp_path / "q.zarr")
    out = run_python(SCRIPT.format(root=root, fmt=fmt), site=plugin_site)
    assert out["before"] is False and out["after"] is True
    assert out["dtype"] == "int16"
    want = (np.arange(12, dtype="int16").reshape(3, 4) * 100 - 500).tolist()
    assert out["data"] == want
    if fmt == 3:
        doc = json.loads((tmp_path / "q.zarr" / "zarr.json").read_text())
        assert doc["data_type"] == "example.q8_8"
        assert doc["fill_value"] == -1.5  # the plugin's JSON: real units, not the int16 count
        assert out["name"] == "example.q8_8" and out["fill"] == -384.0
    else:
        doc = json.loads((tmp_path / "q.zarr" / ".zarray").read_text())
        assert doc["dtype"] == "example.q8_8"


def test_without_the_plugin_the_type_is_unknown(plugin_site, tmp_path):  # noqa: F811
    root = str(tmp_path / "q.zarr")
    run_python(SCRIPT.format(root=root, fmt=3), site=plugin_site)
    out = run_python(f"""
        import json, zarrpy
        try:
            zarrpy.open_array({root!r}, mode="r")
        except zarrpy.MetadataError as exc:
            print(json.dumps({{"msg": str(exc)}}))
        else:
            print(json.dumps({{"msg": None}}))
    """, site=None)
    assert out["msg"] is not None
    assert "unknown data type 'example.q8_8'" in out["msg"] and "zarrpy.data_types" in out["msg"]
