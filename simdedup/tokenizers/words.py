"""Unicode word tokenizer, the default: words for alphabetic scripts, characters for CJK.

A token is a run of letters, digits and underscores (lower-cased unless the ``lowercase``
option is false), except that every Chinese, Japanese or Korean character is a token by itself,
since those scripts do not separate words with spaces. Punctuation and whitespace separate
tokens and are dropped, so reflowed, re-punctuated or re-cased copies keep their features. Mixed documents need no per-document
choice: each token is cut by the rule of its own script. With ``shingle`` N the features are
N-grams of tokens, which means word N-grams in English and character N-grams in Chinese.

Why unigrams by default: candidates come from simhash and are confirmed by the sketch's
weighted Jaccard of token counts, which tracks the share of edited words; on the development
sets unigram counts verified better than 2- or 3-shingles (see README, "Detection quality").
The simhash counts each distinct token once (``weighting = "binary"``): with counts, frequent
words decide most bits and unrelated documents of one language fall within a few bits of each
other, which makes every pair a candidate.
"""

from __future__ import annotations

import re

from . import Tokenizer

# Han (with extensions A and compatibility), kana, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
#: a token of lower-cased text (the compiled path classes characters by it: simdedup.kernels.fastpath)
TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")


class WordsTokenizer(Tokenizer):
    name = "words"
    description = (
        "Unicode words, each CJK character a token, lower-cased, punctuation dropped; "
        "simhash votes once per distinct word, the sketch counts them"
    )
    weighting = "binary"
    optional = {"lowercase": True}

    def tokens(self, text: str) -> list[str]:
        return TOKEN.findall(text.lower() if self.option("lowercase") else text)
