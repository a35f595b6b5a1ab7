"""zarrpy: a fast, safe storage engine for chunked, compressed N-dimensional arrays (Zarr V3).

>>> import zarrpy, numpy as np
>>> a = zarrpy.create_array({}, shape=(4, 4), dtype="uint16", chunks=(2, 2))
>>> a[1:3, 1:3] = 7
>>> int(a[...].sum())
28
"""

from .api._open import create_array, create_group, open, open_array, open_arrays, open_group
from .api._array import Array
from .api._buffers import GrowableArray, GrowableRagged
from .api._convenience import (
    array,
    create,
    empty,
    empty_like,
    from_array,
    full,
    full_like,
    group,
    ones,
    ones_like,
    open_consolidated,
    zeros,
    zeros_like,
)
from .codecs.registry import register_codec
from .core.dtypes import DataType, DataTypeFamily, register_data_type
from .errors import (
    BoundsCheckError,
    BroadcastError,
    ChecksumError,
    ChunkAlignmentError,
    ChunkDecodeError,
    CodecError,
    DataTypeError,
    InvalidKeyError,
    IrregularChunksError,
    MetadataError,
    NodeExistsError,
    NodeNotFoundError,
    OutTypeError,
    ProcessLocalError,
    ReadOnlyError,
    SelectionError,
    StoreError,
    UnknownCodecError,
    ZarrpyError,
)
from .api._group import Group, consolidate_metadata
from .api._iterate import concat, iter_rows
from .api._lazy import VirtualArray
from .api._lazy_stored import virtual
from .api._lazy_table import VirtualTable
from .pipeline.synchronizer import LockSynchronizer, ProcessSynchronizer
from .tools.migrate import migrate_v3
from .core.ragged import RaggedArray

__version__ = "0.1.0"

__all__ = [
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
