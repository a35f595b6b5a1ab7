"""String and bytes arrays end to end (variable-length data)."""

import numpy as np
import pytest

import zarrpy
from zarrpy.stores.local import LocalStore
from zarrpy.stores.memory import MemoryStore

STRINGS = ["", "a", "ĉ", "日本語", "x" * 5000, "tab\tnew\nline", "zero\x00inside", "end\x00"]
BYTES = [b"", b"\x00", b"\xff\xfe", b"abc", bytes(range(256)) * 10, b"end\x00"]


def test_string_array_round_trip_and_scalar_index():
    a = zarrpy.create_array(MemoryStore(), shape=(len(STRINGS),), dtype=str, chunks=(3,))
    a[:] = STRINGS
    out = a[:]
    assert out.dtype == np.dtypes.StringDType()
    assert out.tolist() == STRINGS
    assert a[3] == "日本語" and isinstance(a[3], str)
    assert a[-1] == "end\x00"
    assert a.metadata.to_json()["data_type"] == "string"
    assert a.metadata.codecs[0] == {"name": "vlen-utf8", "configuration": {}}


def test_bytes_array_round_trip_and_scalar_index():
    a = zarrpy.create_array(MemoryStore(), shape=(len(BYTES),), dtype=bytes, chunks=(4,))
    a[:] = np.array(BYTES, dtype=object)
    out = a[:]
    assert out.dtype == object and out.tolist() == BYTES
    assert a[2] == b"\xff\xfe" and type(a[2]) is bytes
    assert a.metadata.to_json()["data_type"] == "variable_length_bytes"


@pytest.mark.parametrize("dtype, value", [(str, "hi"), (bytes, b"hi"), ("f8", 2.5)])
def test_a_0d_array_reads_back_whole_and_by_scalar_index(dtype, value):
    # a 0-d chunk decodes into a 0-d view of the output (out[()] would be a scalar)
    a = zarrpy.create_array({}, shape=(), dtype=dtype)
    a[()] = value
    assert a[()] == value
    whole = a[...]
    assert whole.shape == () and whole[()] == value


def test_missing_chunks_read_as_the_fill_value_and_fill_chunks_are_not_stored():
    store = MemoryStore()
    a = zarrpy.create_array(store, shape=(6, 4), dtype=str, chunks=(2, 2), fill_value="-")
    assert a[...].tolist() == [["-"] * 4] * 6
    a[0:2, 0:2] = "-"
    assert a.nchunks_initialized == 0
    a[3, 3] = "q"
    expected = np.full((6, 4), "-", dtype=np.dtypes.StringDType())
    expected[3, 3] = "q"
    assert np.array_equal(a[...], expected)
    assert a.nchunks_initialized == 1


def test_two_dimensional_partial_writes_match_numpy():
    rng = np.random.default_rng(1)
    ref = np.array([["r%d_%d" % (i, j) for j in range(7)] for i in range(5)], dtype=np.dtypes.StringDType())
    a = zarrpy.create_array(MemoryStore(), shape=ref.shape, dtype=str, chunks=(2, 3))
    a[...] = ref
    for _ in range(20):
        r0, c0 = rng.integers(0, 5), rng.integers(0, 7)
        block = np.array([[f"w{r0}{c0}é"]], dtype=np.dtypes.StringDType())
        a[r0 : r0 + 2, c0 : c0 + 3] = block
        ref[r0 : r0 + 2, c0 : c0 + 3] = block
    assert np.array_equal(a[...], ref)
    assert np.array_equal(a[1:4, ::-2], ref[1:4, ::-2])
    assert np.array_equal(a.oindex[[4, 0], [6, 1]], ref[np.ix_([4, 0], [6, 1])])


def test_non_string_element_is_a_type_error_naming_the_position_and_writes_nothing(tmp_path):
    store = LocalStore(tmp_path / "s.zarr")
    a = zarrpy.create_array(store, shape=(2, 2), dtype=str, chunks=(1, 2))
    a[...] = [["a", "b"], ["c", "d"]]
    before = {k: store.get(k) for k in store.list()}
    with pytest.raises(TypeError, match=r"position \(1, 0\)"):
        a[...] = np.array([["a", "b"], [3, "d"]], dtype=object)
    with pytest.raises(TypeError):
        a[0, 0] = b"bytes"
    assert {k: store.get(k) for k in store.list()} == before


def test_non_bytes_element_in_a_bytes_array_is_a_type_error():
    a = zarrpy.create_array(MemoryStore(), shape=(3,), dtype=bytes, chunks=(3,))
    with pytest.raises(TypeError, match=r"position \(2,\)"):
        a[:] = [b"a", b"b", "c"]


def test_create_from_data_infers_variable_types():
    s = zarrpy.create_array(MemoryStore(), data=["x", "yy", ""], chunks=(2,))
    b = zarrpy.create_array(MemoryStore(), data=[b"x", b""], chunks=(2,))
    assert s.metadata.data_type.name == "string" and s[...].tolist() == ["x", "yy", ""]
    assert b.metadata.data_type.name == "variable_length_bytes" and b[...].tolist() == [b"x", b""]


def test_invalid_utf8_in_a_stored_chunk_is_a_chunk_decode_error_naming_the_key():
    store = MemoryStore()
    a = zarrpy.create_array(store, shape=(2,), dtype=str, chunks=(2,), compressors=None)
    a[:] = ["ab", "c"]
    raw = bytearray(store.get("c/0"))
    raw[8] = 0xFF  # first byte of "ab"
    store.set("c/0", bytes(raw))
    with pytest.raises(zarrpy.ChunkDecodeError, match="c/0"):
        a[:]


@pytest.mark.integration
@pytest.mark.parametrize("compressors", [None, "auto"])
@pytest.mark.parametrize("kind", ["str", "bytes"])
def test_interop_with_zarr_python_both_ways(tmp_path, kind, compressors):
    zarr = pytest.importorskip("zarr")
    values = STRINGS if kind == "str" else BYTES
    dtype = str if kind == "str" else bytes
    n = len(values) + 5  # the tail stays missing: fill value
    fill = "fill" if kind == "str" else b"fi"
    ref = np.array(values + [fill] * 5, dtype=object)

    # zarrpy writes, zarr-python reads
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(n,), dtype=dtype, chunks=(3,),
                            fill_value=fill, compressors=compressors)
    a[: len(values)] = np.array(values, dtype=object)
    z = zarr.open_array(str(tmp_path / "a.zarr"), mode="r")
    assert [(x.decode() if isinstance(x, bytes) and kind == "str" else x) for x in z[:].tolist()] == ref.tolist()

    # zarr-python writes, zarrpy reads
    zdtype = str if kind == "str" else "variable_length_bytes"
    kwargs = {} if compressors == "auto" else {"compressors": None}
    z2 = zarr.create_array(str(tmp_path / "b.zarr"), shape=(n,), dtype=zdtype, chunks=(3,), fill_value=fill, **kwargs)
    z2[: len(values)] = np.array(values, dtype=object)
    b = zarrpy.open_array(str(tmp_path / "b.zarr"))
    assert b[...].tolist() == ref.tolist()
    assert b[0] == values[0] and b[n - 1] == fill


class _CountingStore(MemoryStore):
    """Counts the bytes that reads return."""

    def __init__(self):
        super().__init__()
        self.nbytes_read = 0

    def get(self, key, byte_range=None):
        value = super().get(key, byte_range)
        self.nbytes_read += len(value or b"")
        return value

    def get_partial_values(self, requests):
        return [self.get(k, r) for k, r in requests]


@pytest.mark.parametrize("index_location", ["start", "end"])
def test_reading_a_few_strings_of_an_uncompressed_vlen_chunk_reads_less_than_the_chunk(index_location):
    store = _CountingStore()
    values = [f"value-{i}-" * 4 for i in range(2000)]
    serializer = {"name": "zarrs.vlen", "configuration": {
        "data_codecs": [{"name": "bytes"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_data_type": "uint32", "index_location": index_location}}
    a = zarrpy.create_array(store, shape=(2000,), dtype=str, chunks=(2000,), serializer=serializer, compressors=None)
    a[:] = values
    chunk_nbytes = len(store.get("c/0"))
    store.nbytes_read = 0
    assert a[100:110].tolist() == values[100:110]
    assert a[1999] == values[1999]
    partial = store.nbytes_read
    store.nbytes_read = 0
    assert a[:].tolist() == values
    assert store.nbytes_read == chunk_nbytes
    # two small reads, each the index plus a few elements, cost far less than one full read
    assert partial < chunk_nbytes


def test_corrupt_vlen_chunk_through_the_array_names_the_key():
    store = MemoryStore()
    a = zarrpy.create_array(store, shape=(4,), dtype=str, chunks=(4,), compressors=None,
                            serializer={"name": "zarrs.vlen", "configuration": {}})
    a[:] = ["a", "bb", "ccc", "d"]
    raw = store.get("c/0")
    store.set("c/0", raw[:-3])  # truncated data
    with pytest.raises(zarrpy.ChunkDecodeError, match="c/0"):
        a[:]
    with pytest.raises(zarrpy.ChunkDecodeError, match="c/0"):
        a[3]


@pytest.mark.parametrize("corrupt", ["count", "truncated", "length_past_end", "short_header"])
def test_corrupt_vlen_utf8_chunk_is_a_chunk_decode_error_naming_the_key(corrupt):
    store = MemoryStore()
    a = zarrpy.create_array(store, shape=(3,), dtype=str, chunks=(3,), compressors=None)
    a[:] = ["ab", "", "ĉ"]
    raw = store.get("c/0")
    bad = {
        "count": (1000).to_bytes(4, "little") + raw[4:],
        "truncated": raw[:-1],
        "length_past_end": raw[:4] + (10**6).to_bytes(4, "little") + raw[8:],
        "short_header": raw[:3],
    }[corrupt]
    store.set("c/0", bad)
    with pytest.raises(zarrpy.ChunkDecodeError, match="c/0"):
        a[:]


def _vlen_start_chunk(index, data):
    index_bytes = np.asarray(index, dtype="<u4").tobytes()
    return len(index_bytes).to_bytes(8, "little") + index_bytes + data


@pytest.mark.parametrize(
    "corrupt",
    ["offsets_past_end", "non_monotonic", "truncated_index", "index_size_too_large", "invalid_utf8"],
)
def test_corrupt_zarrs_vlen_chunks_through_the_array_name_the_key(corrupt):
    store = MemoryStore()
    serializer = {"name": "zarrs.vlen", "configuration": {
        "data_codecs": [{"name": "bytes"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_data_type": "uint32", "index_location": "start"}}
    a = zarrpy.create_array(store, shape=(3,), dtype=str, chunks=(3,), serializer=serializer, compressors=None)
    a[:] = ["ab", "", "c"]
    assert store.get("c/0") == _vlen_start_chunk([0, 2, 2, 3], b"abc")  # the notes' worked example
    bad = {
        "offsets_past_end": _vlen_start_chunk([0, 2, 2, 9], b"abc"),
        "non_monotonic": _vlen_start_chunk([0, 2, 1, 3], b"abc"),
        "truncated_index": _vlen_start_chunk([0, 2, 2, 3], b"abc")[:14],
        "index_size_too_large": (10**9).to_bytes(8, "little") + _vlen_start_chunk([0, 2, 2, 3], b"abc")[8:],
        "invalid_utf8": _vlen_start_chunk([0, 2, 2, 3], b"a\xffc"),
    }[corrupt]
    store.set("c/0", bad)
    # a partial read checks what it reads: read the element the corruption touches
    touched = {"offsets_past_end": 2, "invalid_utf8": 0}.get(corrupt, 1)
    for read in (lambda: a[:], lambda: a[touched]):
        with pytest.raises(zarrpy.ChunkDecodeError, match="c/0"):
            read()
