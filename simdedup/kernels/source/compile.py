"""Every kernel by the name :mod:`simdedup.kernels.load` loads it under; importing this module
imports numba."""

import numba

from .bounds import EXACT_BITS_SIGNATURE, EXACT_BOUNDED_SIGNATURE, EXACT_ELEMENTS_SIGNATURE, exact_bounded, exact_elements, exact_frequent_bits
from .exact import EXACT_DISTINCT_SIGNATURE, EXACT_SHARED_SIGNATURE, EXACT_TOKENS_SIGNATURE, EXACT_VERDICTS_SIGNATURE, exact_distinct, exact_shared, exact_tokens, exact_verdicts
from .fastpath import SIGNATURE, fingerprint_batch
from .keywords import KEYWORD_SIGNATURE, keyword_batch
from .linkage import LINKAGE_SIGNATURE, link_complete
from .pairs import CANONICAL_SIGNATURE, CROSS_SIGNATURE, PACKED_SIGNATURE, PAIRS_SIGNATURE, canonical_pairs, cross_pairs, packed_pairs, table_pairs
from .scan import SCAN_SIGNATURE, scan_records


#: every kernel by the name :mod:`simdedup.fastpath` loads it under: its function and C signature
KERNELS = {
    "fastpath": (fingerprint_batch, SIGNATURE),
    "keywords": (keyword_batch, KEYWORD_SIGNATURE),
    "pairs": (table_pairs, PAIRS_SIGNATURE),
    "cross": (cross_pairs, CROSS_SIGNATURE),
    "packed": (packed_pairs, PACKED_SIGNATURE),
    "canonical": (canonical_pairs, CANONICAL_SIGNATURE),
    "linkage": (link_complete, LINKAGE_SIGNATURE),
    "scan": (scan_records, SCAN_SIGNATURE),
    "exact-tokens": (exact_tokens, EXACT_TOKENS_SIGNATURE),
    "exact-distinct": (exact_distinct, EXACT_DISTINCT_SIGNATURE),
    "exact-shared": (exact_shared, EXACT_SHARED_SIGNATURE),
    "exact-elements": (exact_elements, EXACT_ELEMENTS_SIGNATURE),
    "exact-bits": (exact_frequent_bits, EXACT_BITS_SIGNATURE),
    "exact-bounded": (exact_bounded, EXACT_BOUNDED_SIGNATURE),
    "exact-verdicts": (exact_verdicts, EXACT_VERDICTS_SIGNATURE),
}


def compile_kernel(name: str):
    """Kernel ``name`` compiled by numba as a C function (a cfunc: ``.address``, ``._library``)."""
    function, signature = KERNELS[name]
    return numba.cfunc(signature, nopython=True, error_model="numpy")(function)
