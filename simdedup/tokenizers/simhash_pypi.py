"""The features of the PyPI ``simhash`` package (2.1.2), for migrating stored fingerprints.

``Simhash(text)`` lower-cases the text, keeps only the runs matched by ``[\\w\\u4e00-\\u9fcc]+``
joined together, and slides a window of ``width`` (4) characters over the result; each
character 4-gram is a feature weighted by its count, hashed with MD5. With ``--hash md5`` and
this tokenizer, simdedup's 64-bit fingerprints equal that package's ``Simhash(text).value``.
"""

from __future__ import annotations

import re
from typing import Iterable

from . import Tokenizer

_KEEP = re.compile(r"[\w\u4e00-\u9fcc]+")


class SimhashPypiTokenizer(Tokenizer):
    name = "simhash-pypi"
    description = "PyPI simhash 2.1.2 features: character 4-grams of the lower-cased word characters"
    defaults = {"width": 4}
    shingle_separator = ""

    def __init__(self, **options):
        super().__init__(**options)
        if self.options["width"] < 1:
            from ..errors import TokenizerOptionError

            raise TokenizerOptionError("width must be at least 1")
        self.options_for_shingles = {"shingle": self.options["width"]}

    def tokens(self, text: str) -> Iterable[str]:
        return "".join(_KEEP.findall(text.lower()))

    def features(self, chunks: Iterable[str]) -> dict[str, float]:
        # The base class shingles tokens (here characters) across chunks; a text shorter than
        # the width is one feature, as the package's ``_slide`` makes it.
        saved, self.options = self.options, self.options_for_shingles
        try:
            return super().features(chunks)
        finally:
            self.options = saved
