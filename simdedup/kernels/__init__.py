"""Compiled kernels for the hot loops, loaded without numba, one module per family, each with a
Python path that gives the same results:

- :mod:`~simdedup.kernels.fastpath`: tokens, simhash and sketch of a batch of UTF-8 documents;
- :mod:`~simdedup.kernels.jieba_cut`: jieba's segmentation (``jieba.cut``) of a batch of texts,
  and :mod:`~simdedup.kernels.keywords`: the TF-IDF keywords of segmented documents, for the
  ``jieba`` and ``jieba-fast`` tokenizers (:mod:`simdedup.tokenizers.jieba_tfidf`);
- :mod:`~simdedup.kernels.pairs`: the candidate pairs of the pair search (:mod:`simdedup.pairs`,
  :mod:`simdedup.engines.pairs`);
- :mod:`~simdedup.kernels.linkage`: complete linkage over many verified pairs (:mod:`simdedup.group`);
- :mod:`~simdedup.kernels.exact`: exact sets, their merges and upper bounds
  (:mod:`simdedup.similarity`). These have no Python path (``SIMDEDUP_FASTPATH=0`` leaves them on);
- :mod:`~simdedup.kernels.scan`: fingerprint lines read without Python's JSON parser
  (:mod:`simdedup.fingerprints.columns`).

Each module holds the Python side (buffers in, results out, a check at load); the numba source of
the kernels is in :mod:`simdedup.kernels.source`, which only the compiler imports.

Loading (:mod:`~simdedup.kernels.load`): numba compiles a kernel once (about 2 s) and its machine
code is kept in a cache file (:mod:`simdedup.cache`), keyed by the kernel source, the llvmlite
version, the CPU and the Unicode version (the fast path's tables are kept beside it, keyed by
their sources and Python). Later processes load that file with llvmlite alone in about 40 ms,
without importing numba (about 0.4 s). A kernel is checked against the Python arithmetic when it
loads. Without numba, llvmlite or the XXH3 symbol everything works, only slower.
``SIMDEDUP_FASTPATH=0`` turns off all but the exact kernels.
"""
