"""``zarrpy tree``: the hierarchy as text (zarr-python's drawing) and as one nested JSON document."""

from __future__ import annotations

import io
import json

import pytest

import zarrpy
from zarrpy.tools.cli import main
from zarrpy.tools.tree import tree_document, tree_text


@pytest.fixture
def hierarchy(tmp_path):
    root = tmp_path / "g.zarr"
    g = zarrpy.open_group(str(root), mode="w", attributes={"title": "t"})
    g.create_array("x", shape=(2, 3), dtype="uint16", chunks=(1, 3))
    sub = g.create_group("sub", attributes={"k": 1})
    sub.create_array("y", shape=(100,), dtype="float32", chunks=(10,), shards=(50,),
                     compressors=[{"name": "zstd", "configuration": {"level": 3}}, {"name": "crc32c"}])
    sub.create_array("s", shape=(4,), dtype=str, chunks=(2,))
    sub.create_group("deeper").create_array("r", shape=(5,), dtype="int16", serializer="numcodecs.vlen-array")
    return root


def test_text_tree_shows_layout(hierarchy, capsys):
    assert main(["tree", str(hierarchy)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "/ V3",
        "├── sub V3",
        "│   ├── deeper V3",
        "│   │   └── r V3 (5,) ragged int16 chunks=(5,) numcodecs.vlen-array > zstd:0",
        "│   ├── s V3 (4,) string chunks=(2,) vlen-utf8 > zstd:0",
        "│   └── y V3 (100,) float32 chunks=(10,) shards=(50,) bytes > zstd:3 > crc32c",
        "└── x V3 (2, 3) uint16 chunks=(1, 3) bytes > zstd:0",
    ]


def test_depth_limits_the_levels(hierarchy, capsys):
    assert main(["tree", str(hierarchy), "--depth", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == ["/ V3", "├── sub V3", "└── x V3 (2, 3) uint16 chunks=(1, 3) bytes > zstd:0"]
    assert main(["tree", str(hierarchy), "--depth", "0"]) == 0
    assert capsys.readouterr().out.splitlines() == ["/ V3"]
    doc = tree_document(zarrpy.open_group(str(hierarchy)), depth=2)
    sub = next(m for m in doc["members"] if m["name"] == "sub")
    deeper = next(m for m in sub["members"] if m["name"] == "deeper")
    assert "members" not in deeper  # not looked into


def test_json_is_one_nested_document(hierarchy, capsys):
    assert main(["tree", str(hierarchy), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["path"] == "/" and doc["node_type"] == "group" and doc["attributes"] == {"title": "t"}
    assert [m["name"] for m in doc["members"]] == ["sub", "x"]
    sub = doc["members"][0]
    assert sub["path"] == "/sub" and sub["attributes"] == {"k": 1}
    y = next(m for m in sub["members"] if m["name"] == "y")
    assert y["shape"] == [100] and y["chunks"] == [10] and y["shards"] == [50] and y["dtype"] == "float32"
    assert y["codecs_summary"] == "bytes > zstd:3 > crc32c"
    assert [c["name"] for c in y["codecs"]] == ["sharding_indexed"]
    deeper = next(m for m in sub["members"] if m["name"] == "deeper")
    assert deeper["members"][0]["path"] == "/sub/deeper/r"


def test_an_array_and_a_v2_group(tmp_path, capsys):
    g = zarrpy.open_group(str(tmp_path / "v2.zarr"), mode="w", zarr_format=2)
    g.create_array("a", shape=(6, 4), dtype=">i8", chunks=(3, 2), order="F")
    assert main(["tree", str(tmp_path / "v2.zarr")]) == 0
    assert capsys.readouterr().out.splitlines() == ["/ V2", "└── a V2 (6, 4) int64 chunks=(3, 2) transpose > bytes:big > zstd:0"]
    assert main(["tree", str(tmp_path / "v2.zarr"), "--path", "a", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["node_type"] == "array" and doc["path"] == "/a" and doc["zarr_format"] == 2
    assert main(["tree", str(tmp_path / "v2.zarr"), "--path", "a"]) == 0
    assert capsys.readouterr().out.strip() == "/a V2 (6, 4) int64 chunks=(3, 2) transpose > bytes:big > zstd:0"


def test_ascii_drawing_where_the_output_cannot_encode_box_characters(hierarchy):
    doc = tree_document(zarrpy.open_group(str(hierarchy)), depth=1)
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert tree_text(doc, stream).splitlines() == ["/ V3", "|-- sub V3", "`-- x V3 (2, 3) uint16 chunks=(1, 3) bytes > zstd:0"]


def test_a_missing_node_is_one_error_line(tmp_path, capsys):
    assert main(["tree", str(tmp_path / "nope.zarr")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.zarr" in err


def test_bad_depth_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["tree", str(tmp_path), "--depth", "-1"])
    assert exit_info.value.code == 2 and "--depth" in capsys.readouterr().err
