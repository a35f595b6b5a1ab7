"""Build of zarrpy's one compiled module, ``zarrpy.core._cstrings`` (see
``zarrpy/core/vlen_kernels.py``). Everything else is in ``pyproject.toml``.

The extension is optional: when it cannot be compiled (no C compiler, no
numpy headers) setuptools warns and the install goes on, and zarrpy runs its
pure-Python converters instead (``zarrpy --version`` says which is in use).
"""

from setuptools import Extension, setup


class _NumpyInclude:
    """numpy's header directory, looked up only when the extension is built
    (so reading this file needs no numpy)."""

    def __fspath__(self) -> str:
        import numpy

        return numpy.get_include()

    def __str__(self) -> str:
        return self.__fspath__()


setup(
    ext_modules=[
        Extension(
            "zarrpy.core._cstrings",
            sources=["zarrpy/core/_cstrings.c"],
            include_dirs=[_NumpyInclude()],  # type: ignore[list-item]
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
