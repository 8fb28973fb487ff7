"""Shared by the test files: running the CLI, small corpora, fingerprint and cluster lines."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from simdedup.cli import cli
from simdedup.fingerprints import FingerprintRecord

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
    assert set(rec) | {"min_similarity"} == CLUSTER_FIELDS  # min_similarity only with sketches
    assert re.fullmatch("[0-9a-f]{16}", rec["cluster"])
    ids = [m["id"] for m in rec["members"]]
    assert rec["size"] == len(ids)
    assert ids == sorted(ids)
    assert rec["representative"] in ids
    distances = [m["distance"] for m in rec["members"]]
    assert rec["max_distance"] == max(distances)
    assert dict(zip(ids, distances))[rec["representative"]] == 0
    assert all(set(m) - {"similarity", "bytes"} == {"id", "distance"} for m in rec["members"])
    if "min_similarity" in rec:
        assert rec["min_similarity"] == min(m["similarity"] for m in rec["members"])


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
