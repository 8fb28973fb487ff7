"""numba source of the :mod:`simdedup.kernels`; importing any of these modules imports numba.

Each kernel is a C function over raw pointers that allocates nothing: the caller passes every
buffer, including the scratch hash tables. So its machine code refers to no numba runtime
symbol, only to ``XXH3_64bits`` and ``XXH3_128bits``, and :mod:`simdedup.kernels.load` can keep
that code and load it later with llvmlite alone, without importing numba (which costs about 0.4 s
per process).
"""
