"""The public namespace is a contract: ``zarrpy.__all__`` is pinned here.

Adding or removing a public name is a deliberate change to this list (and to
the docs), never a side effect of moving code between modules.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import zarrpy
import zarrpy.codecs
import zarrpy.stores

PUBLIC = [
    "Array",
    "BoundsCheckError",
    "BroadcastError",
    "ChecksumError",
    "ChunkAlignmentError",
    "ChunkDecodeError",
    "CodecError",
    "DataType",
    "DataTypeError",
    "DataTypeFamily",
    "Group",
    "GrowableArray",
    "GrowableRagged",
    "InvalidKeyError",
    "IrregularChunksError",
    "LockSynchronizer",
    "MetadataError",
    "NodeExistsError",
    "NodeNotFoundError",
    "OutTypeError",
    "ProcessLocalError",
    "ProcessSynchronizer",
    "RaggedArray",
    "ReadOnlyError",
    "SelectionError",
    "StoreError",
    "UnknownCodecError",
    "VirtualArray",
    "VirtualTable",
    "ZarrpyError",
    "array",
    "concat",
    "consolidate_metadata",
    "create",
    "create_array",
    "create_group",
    "empty",
    "empty_like",
    "from_array",
    "full",
    "full_like",
    "group",
    "iter_rows",
    "migrate_v3",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_arrays",
    "open_consolidated",
    "open_group",
    "register_codec",
    "register_data_type",
    "virtual",
    "zeros",
    "zeros_like",
]

CLASSES = {"Array", "DataType", "DataTypeFamily", "Group", "GrowableArray", "GrowableRagged", "LockSynchronizer",
           "ProcessSynchronizer", "RaggedArray", "VirtualArray", "VirtualTable"}
ERRORS = {name for name in PUBLIC if name.endswith("Error")}

# Names the subpackages export today; more may be added, none may go.
CODECS_EXPORTS = {
    "ArrayToArrayCodec", "ArrayToBytesCodec", "BytesToBytesCodec", "ChunkSpec", "Codec",
    "codec_from_any", "codec_from_json", "get_codec_class", "register_codec",
    "BytesCodec", "TransposeCodec", "GzipCodec", "ZstdCodec", "BloscCodec", "Crc32cCodec",
    "ShardingCodec", "VlenUtf8Codec", "VlenBytesCodec", "VLenUTF8Codec", "VLenBytesCodec",
    "VlenV2Codec", "VlenCodec", "VlenArrayCodec", "from_numcodecs",
}  # fmt: skip
STORES_EXPORTS = {
    "FsspecStore", "LocalStore", "MemoryStore", "ObjectStore", "Store", "ZarrPythonStore", "ZipStore", "store_from_url",
}


def test_all_is_pinned_and_sorted():
    assert zarrpy.__all__ == PUBLIC
    assert PUBLIC == sorted(PUBLIC) and len(set(PUBLIC)) == len(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_exists(name):
    value = getattr(zarrpy, name)
    if name in ERRORS:
        assert inspect.isclass(value) and issubclass(value, zarrpy.ZarrpyError)
        assert issubclass(value, Exception)
    elif name in CLASSES:
        assert inspect.isclass(value)
    else:
        assert inspect.isfunction(value), f"zarrpy.{name} is {value!r}, not a function"


def test_star_import_gives_exactly_all():
    namespace: dict[str, object] = {}
    exec("from zarrpy import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == PUBLIC


def test_version():
    assert isinstance(zarrpy.__version__, str) and zarrpy.__version__


@pytest.mark.parametrize(("package", "expected"), [(zarrpy.codecs, CODECS_EXPORTS), (zarrpy.stores, STORES_EXPORTS)])
def test_subpackage_exports_exist(package, expected):
    exported = list(package.__all__)
    assert len(set(exported)) == len(exported), f"{package.__name__}.__all__ has duplicates"
    missing = expected - set(exported)
    assert not missing, f"{package.__name__}.__all__ lost {sorted(missing)}"
    for name in exported:
        value = getattr(package, name)  # lazy exports resolve too
        assert inspect.isclass(value) or inspect.isfunction(value), f"{package.__name__}.{name} is {value!r}"


def test_codec_and_store_classes_are_what_they_say():
    from zarrpy.codecs import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, Codec
    from zarrpy.stores import Store

    for name in CODECS_EXPORTS:
        value = getattr(zarrpy.codecs, name)
        if name.endswith("Codec") and inspect.isclass(value):
            assert issubclass(value, Codec), name
    for base in (ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec):
        assert issubclass(base, Codec)
    for name in STORES_EXPORTS - {"store_from_url"}:
        assert issubclass(getattr(zarrpy.stores, name), Store), name


def test_array_and_group_are_functions_even_after_importing_every_submodule():
    """``zarrpy.array`` / ``zarrpy.group`` are zarr-python's convenience
    functions; a submodule of that name would replace them once imported."""
    for info in pkgutil.walk_packages(zarrpy.__path__, "zarrpy."):
        if info.name != "zarrpy.__main__":  # running it is the CLI
            importlib.import_module(info.name)
    for name in ("array", "group", "open", "create"):
        value = getattr(zarrpy, name)
        assert inspect.isfunction(value) and not inspect.ismodule(value), f"zarrpy.{name} is {value!r}"
    assert zarrpy.array is zarrpy.api._convenience.array
    assert zarrpy.group is zarrpy.api._convenience.group


def test_fresh_interpreter_sees_the_same_namespace():
    code = (
        "import inspect, zarrpy; "
        "print(sorted(zarrpy.__all__) == zarrpy.__all__, "
        "inspect.isfunction(zarrpy.array), inspect.isfunction(zarrpy.group), len(zarrpy.__all__))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True", "True", str(len(PUBLIC))]
