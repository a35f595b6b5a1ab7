"""``rows_equal_fill`` (which chunks, and which inner chunks of a shard, are
left unwritten): bit for bit, whatever the probe of a row's first, middle
and last element suggests, against numpy as the reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrpy.codecs.fill import rows_equal_fill


def reference(rows: np.ndarray, fill: np.ndarray) -> np.ndarray:
    raw = np.ascontiguousarray(rows).view(np.uint8).reshape(rows.shape[0], -1)
    return (raw == np.tile(fill.reshape(1).view(np.uint8), rows.shape[1])).all(axis=1)


@settings(max_examples=300, deadline=None)
@given(
    dtype=st.sampled_from(["uint8", "uint16", "float32", "float64", "complex128", "V3"]),
    nrows=st.integers(1, 6),
    ncols=st.integers(0, 40),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=4),
    fill_byte=st.integers(0, 255),
    reverse=st.booleans(),
)
def test_rows_equal_fill_matches_numpy(dtype, nrows, ncols, flips, fill_byte, reverse):
    dt = np.dtype(dtype)
    fill = np.frombuffer(bytes([fill_byte]) * dt.itemsize, dtype=dt).reshape(())
    rows = np.full((nrows, ncols), fill, dtype=dt)
    raw = rows.view(np.uint8).reshape(nrows, -1)
    for r, b in flips:  # elements anywhere that differ in one byte: the middle of a row too
        if raw.shape[1]:
            raw[r % nrows, b % raw.shape[1]] ^= 0xFF
    if reverse:
        rows = rows[:, ::-1]  # a strided view: probed without a copy, compared whole after one
    np.testing.assert_array_equal(rows_equal_fill(rows, fill), reference(rows, fill))


def test_a_row_differing_only_between_the_probes_is_not_fill():
    rows = np.zeros((2, 100), dtype="uint16")
    rows[0, 17] = 1  # not the first, middle or last element
    assert rows_equal_fill(rows, np.zeros((), "uint16")).tolist() == [False, True]
