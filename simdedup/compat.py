"""``--compat`` presets: the options that reproduce another tool's fingerprints bit for bit.

Each preset is a set of explicit command-line options (by their parameter names); what each
reproduces, and on which published values it was checked, is in the README ("Other methods").
With ``--features-field`` the tokenizer options drop out: the features come made.
"""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    # python-hashes' simhash (sangelone/python-hashes, and the HTTP-response article's weighted
    # port): tokens of str.split(), case kept, every occurrence a vote, ties set the bit.
    "python-hashes": {
        "tokenizer_name": "whitespace",
        "tokenizer_options": ("lowercase=false",),
        "hash_name": "python-hashes",
        "weighting": "feature",
        "ties": "one",
    },
    # The jieba TF-IDF recipe of the widely copied article: extract_tags top 20 over the words
    # of jieba.cut joined with "|", weights int(weight * 20), python-hashes' hash (its low 64
    # bits), a bit set only when its sum is above 0.
    "jieba-article": {
        "tokenizer_name": "jieba",
        "topk": 20,
        "tokenizer_options": ("recut=true", "scale=20"),
        "hash_name": "python-hashes",
        "bits": "64",
        "weighting": "feature",
        "ties": "zero",
    },
    # PyPI simhash 2.x: Simhash(text).value (character 4-grams, MD5, ties give 0).
    "pypi-simhash": {"tokenizer_name": "simhash-pypi", "hash_name": "md5", "weighting": "feature", "ties": "zero"},
    # yanyiwu/simhash's Simhasher: cppjieba's top-5 TF-IDF keywords, lookup3 (jenkins), 64 bits.
    "yanyiwu": {
        "tokenizer_name": "jieba",
        "topk": 5,
        "hash_name": "jenkins",
        "bits": "64",
        "weighting": "feature",
        "ties": "zero",
    },
}

#: the preset settings that say how text becomes features (dropped when features are given)
TOKENIZER_SETTINGS = ("tokenizer_name", "topk", "tokenizer_options", "shingle")

#: settings the reproduced tools take as an argument (yanyiwu's ``make(text, topN)``): the
#: preset's value is a default that the command line may change
ADJUSTABLE = ("topk",)
