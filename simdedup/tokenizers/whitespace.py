"""Whitespace tokenizer: Unicode whitespace split, lower-cased (unless ``lowercase`` is false),
counts as weights."""

from __future__ import annotations

from . import Tokenizer


class WhitespaceTokenizer(Tokenizer):
    name = "whitespace"
    description = "Unicode whitespace split, lower-cased; weight = count (of shingles with --shingle N)"
    optional = {"lowercase": True}

    def tokens(self, text: str) -> list[str]:
        return (text.lower() if self.option("lowercase") else text).split()
