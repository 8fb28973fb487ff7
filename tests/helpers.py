"""Shared by the test files: running the CLI, small corpora, fingerprint and cluster lines."""

from __future__ import annotations

import functools
import itertools
import json
import os
import random
import re
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import strategies as st

from simdedup.cli import cli
from simdedup.fingerprints import FingerprintRecord
from simdedup.similarity import CJK_SHARE

REPO = Path(__file__).resolve().parents[1]


CLUSTER_FIELDS = {"cluster", "size", "representative", "max_distance", "min_similarity", "members"}


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()

    @property
    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.lines]

    @property
    def err_lines(self) -> list[str]:
        return self.stderr.splitlines()


def words(seed: int, n: int = 300) -> str:
    r = random.Random(seed)
    return " ".join(f"w{r.randrange(5000)}" for _ in range(n))


def word_tokens(text: str) -> list[str]:
    """The default tokenizer's tokens, spelled independently: CJK characters alone, other words."""
    return re.findall(r"[\u4e00-\u9fff]|[^\W\u4e00-\u9fff]+", text.lower())


def near_copy(text: str) -> str:
    tokens = text.split()
    tokens[len(tokens) // 2] = "changed"
    return " ".join(tokens)


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


# File names sorted per directory (not as whole strings): A.txt < a (dir) < a-1.txt < a.txt.
WALK_ORDER = [
    "corpus/A.txt",
    "corpus/a/sub/y y.txt",
    "corpus/a/z.txt",
    "corpus/a-1.txt",
    "corpus/a.txt",
    "corpus/b.txt",
]


def member_sets(records: list[dict]) -> set[tuple[str, ...]]:
    return {tuple(m["id"] for m in r["members"]) for r in records}


def record_line(doc_id: str, value: int = 0x0123456789ABCDEF, bits: int = 64, **extra) -> str:
    obj = {
        "id": doc_id,
        "simhash": format(value, f"0{bits // 4}x"),
        "bits": bits,
        "features": 3,
        "tokenizer": "whitespace",
        "options": {"shingle": 1},
        "hash": "xxh3",
        **extra,
    }
    return json.dumps(obj)


def check_cluster(rec: dict) -> None:
    """A cluster line as the README describes it: its least score to the representative is the
    least of its members' (each named for what it is: exact or estimated, resemblance or bag)."""
    from simdedup.cluster_lines import SCORE_FIELDS

    scores = {field for field in rec if field.startswith("min_")}
    assert set(rec) - scores == CLUSTER_FIELDS - {"min_similarity"} and len(scores) <= 1
    assert re.fullmatch("[0-9a-f]{16}", rec["cluster"])
    ids = [m["id"] for m in rec["members"]]
    assert rec["size"] == len(ids)
    assert ids == sorted(ids)
    assert rec["representative"] in ids
    distances = [m["distance"] for m in rec["members"]]
    assert rec["max_distance"] == max(distances)
    assert dict(zip(ids, distances))[rec["representative"]] == 0
    for member in rec["members"]:
        named = set(member) & set(SCORE_FIELDS)
        assert set(member) - named - {"bytes"} == {"id", "distance"} and len(named) == (1 if scores else 0)
    if scores:
        (field,) = scores
        least = min(member[name] for member in rec["members"] for name in set(member) & set(SCORE_FIELDS))
        assert rec[field] == least and field.removeprefix("min_") in SCORE_FIELDS


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


TEXT = " ".join(f"word{i}" for i in range(60))


def rows():
    return [
        {"id": "a", "body": {"text": TEXT}},
        {"id": "b", "body": {"text": TEXT + " plus one"}},
        {"id": "c", "body": {"text": " ".join(f"other{i}" for i in range(60))}},
    ]


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def write_file(path, data: bytes | str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return str(path)


# --- fingerprint records for the persistent index -------------------------------------------


def index_settings(bits: int = 64, sketch: int = 32) -> dict:
    return {
        "method": "simhash",
        "tokenizer": "words",
        "options": {"shingle": 1},
        "bits": bits,
        "hash": "xxh3",
        "weighting": "feature",
        "sketch": sketch,
    }


def make_records(seed: int, n: int, bits: int = 64, sketch: int = 32, prefix: str = "d") -> list[FingerprintRecord]:
    """Families of near-duplicates: perturbed fingerprints and sketches, exact copies (some with
    fewer than 10 features), and unrelated documents."""
    rng = np.random.default_rng(seed)
    settings = index_settings(bits, sketch)
    records: list[FingerprintRecord] = []
    names = rng.permutation(n)
    for i in range(n):
        doc_id = f"{prefix}{names[i]:05d}"
        features = int(rng.integers(4, 40))
        if records and rng.random() < 0.6:
            base = records[int(rng.integers(len(records)))]
            value, sk = base.simhash, bytearray(base.sketch or b"")
            if rng.random() < 0.75:  # else an exact copy
                for bit in rng.choice(bits, int(rng.integers(0, 2 * bits // 64 + 4)), replace=False):
                    value ^= 1 << int(bit)
                for j in rng.choice(sketch, int(rng.integers(0, max(1, sketch // 5))), replace=False) if sketch else []:
                    sk[j] = int(rng.integers(256))
            records.append(
                FingerprintRecord(
                    doc_id,
                    value,
                    bits,
                    features,
                    settings,
                    int(rng.integers(-1, 500)) or None,
                    bytes(sk) if sketch else None,
                )
            )
        else:
            records.append(
                FingerprintRecord(
                    doc_id,
                    int.from_bytes(rng.bytes(bits // 8), "little"),
                    bits,
                    features,
                    settings,
                    None,
                    rng.bytes(sketch) if sketch else None,
                )
            )
    return records


# ---- exact verification's shingles, from their definition (simdedup.similarity) ----------------

# Han ideographs and kana (the BMP's after NFKC; beyond it, planes 2 and 3 as they are)
CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F))


def shingle_character(c: str, lowercase: bool) -> str:
    """The character ``c`` counts as: its NFKC form, then its lower case, each where that is one
    character (code points beyond the BMP as they are)."""
    if ord(c) >= 0x10000:
        return c
    normal = unicodedata.normalize("NFKC", c)
    normal = normal if len(normal) == 1 else c
    low = normal.lower() if lowercase else normal
    return low if len(low) == 1 else normal


def is_word_character(c: str) -> bool:
    if ord(c) >= 0x10000:
        return 0x20000 <= ord(c) <= 0x3134F
    return c.isalnum() or c == "_"


@functools.lru_cache(maxsize=4096)  # brute-force references ask again for each pair of a text
def shingles(text: str, lowercase: bool = True) -> tuple[frozenset, frozenset]:
    """``(word 3-grams, 5-character shingles)`` of a text; the second empty for a text of words."""
    chars = [shingle_character(c, lowercase) for c in text]
    words = ["".join(run) for word, run in itertools.groupby(chars, is_word_character) if word]
    grams = frozenset({tuple(words[i : i + 3]) for i in range(len(words) - 2)} or ({tuple(words)} if words else set()))
    visible = [c for c in chars if ord(c) >= 0x10000 or not c.isspace()]
    cjk = sum(any(low <= ord(c) <= high for low, high in CJK_RANGES) for c in visible)
    if words and not (cjk and cjk >= CJK_SHARE * len(visible)):
        return grams, frozenset()
    characters = {tuple(visible[i : i + 5]) for i in range(len(visible) - 4)} or (
        {tuple(visible)} if visible else set()
    )
    return grams, frozenset(characters)


def jaccard(x: set, y: set) -> float:
    return len(x & y) / len(x | y) if x | y else 0.0


def compared_shingles(a: str, b: str) -> tuple[frozenset, frozenset]:
    """The shingles two texts are compared on: 5-character shingles when both are texts of
    characters, else word 3-grams."""
    (ga, ca), (gb, cb) = shingles(a), shingles(b)
    return (ca, cb) if ca and cb else (ga, gb)


def resemblance(a: str, b: str) -> float:
    return jaccard(*compared_shingles(a, b))


WORD_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" + "_"
#: what comes between words: ASCII separators of every length, and characters that are not
#: ASCII (a letter, one that lower-cases to two, a capital sigma, an ideograph, a space, an emoji)
BETWEEN_WORDS = [
    " ",
    "  ",
    "\n",
    "\t",
    ", ",
    ".\n\n",
    " - ",
    " " * 12,
    "(",
    ")\n",
    "\u00e9",
    "\u0130",
    "\u03a3",
    "\u4e2d",
    "\u00a0",
    "\U0001f600",
]


@st.composite
def word_like_texts(draw, ascii_only: bool = False) -> str:
    """Text of ASCII words of every length, short and as long as the kernels' 64-byte blocks
    and beyond, in mixed case, between separators of every kind (``ascii_only``: ASCII ones):
    words cross the blocks' edges at every offset."""
    between = [s for s in BETWEEN_WORDS if s.isascii()] if ascii_only else BETWEEN_WORDS
    parts = []
    for _ in range(draw(st.integers(1, 80))):
        length = draw(st.sampled_from([1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 62, 63, 64, 65, 127, 130]))
        parts.append(draw(st.text(alphabet=WORD_CHARACTERS, min_size=length, max_size=length)))
        parts.append(draw(st.sampled_from(between)))
    return "".join(parts)


def install_plugin(root: Path, source: str) -> dict[str, str]:
    """A tokenizer plugin ``hostile`` (class ``Hostile`` in ``source``) installed under ``root`` as an
    installer leaves one; the environment that loads it in a process started from Python."""
    (root / "hostile_plugin.py").write_text(source, encoding="utf-8")
    dist_info = root / "hostile_plugin-1.0.dist-info"
    dist_info.mkdir(exist_ok=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[simdedup.tokenizers]\nhostile = hostile_plugin:Hostile\n")
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "SIMDEDUP_LOAD_PLUGINS": "hostile", "PYTHONDONTWRITEBYTECODE": "1"}


#: for tests that run only under ``make fuzz``
FUZZ_ONLY = pytest.mark.skipif(not os.environ.get("SIMDEDUP_FUZZ_SECONDS"), reason="make fuzz: SIMDEDUP_FUZZ_SECONDS=N")


def fuzz_folders(root: Path) -> Iterator[tuple[Path, int]]:
    """A new folder under ``root`` and a seed, from SIMDEDUP_FUZZ_SEED (1000) on, for
    SIMDEDUP_FUZZ_SECONDS (``make fuzz``)."""
    deadline = time.monotonic() + float(os.environ["SIMDEDUP_FUZZ_SECONDS"])
    seed = int(os.environ.get("SIMDEDUP_FUZZ_SEED", "1000"))
    while time.monotonic() < deadline:
        (root / str(seed)).mkdir()
        yield root / str(seed), seed
        seed += 1


def _substituted(words: list[str], positions: range, rng: random.Random, vocabulary: list[str]) -> list[str]:
    out = list(words)
    for i in positions:
        out[i] = rng.choice(vocabulary)
    return out


def options_corpus(folder: Path) -> Path:
    """Documents where every option shows: a chain of edits (resemblance 0.83 to each
    neighbour, 0.69 end to end), the same words in another order, two short near copies,
    unrelated texts, Chinese text and copy, an HTML page and its copy, a Latin-1 file, and a
    JSON-lines file of given features."""
    rng = random.Random(11)
    vocabulary = [f"w{i}" for i in range(4000)]
    base = [rng.choice(vocabulary) for _ in range(300)]
    # 8 words substituted 37 apart: 0.83 of the 3-grams shared to each neighbour, 0.69 end to end
    chain1 = _substituted(base, range(5, 300, 37), rng, vocabulary)
    chain2 = _substituted(chain1, range(23, 300, 37), rng, vocabulary)
    ordered = [rng.choice(vocabulary) for _ in range(300)]
    blocks = [ordered[i : i + 10] for i in range(0, 300, 10)]
    rng.shuffle(blocks)
    texts = {
        "chain0": base,
        "chain1": chain1,
        "chain2": chain2,
        "order0": ordered,
        "order1": [w for block in blocks for w in block],
        **{f"other{i}": [rng.choice(vocabulary) for _ in range(300)] for i in range(4)},
    }
    short = [rng.choice(vocabulary) for _ in range(24)]
    texts["short0"], texts["short1"] = short, short[:-1] + ["w9999"]
    for name, words in texts.items():
        (folder / f"{name}.txt").write_text(" ".join(words) + "\n")
    chinese = "".join(
        rng.choice(
            "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长"
        )
        for _ in range(400)
    )
    (folder / "zh0.txt").write_text(chinese + "\n")
    (folder / "zh1.txt").write_text(chinese[:390] + "很好。" + chinese[393:] + "\n")
    page = "<html><head><title>t</title><style>p {color: red}</style></head><body><p>" + " ".join(base[:120])
    (folder / "page0.html").write_text(page + "</p></body></html>\n")
    (folder / "page1.html").write_text(page + " w1 w2</p><script>var x = 1;</script></body></html>\n")
    (folder / "latin.txt").write_bytes(("café naïve " + " ".join(base[100:200]) + "\n").encode("latin-1"))
    return folder
