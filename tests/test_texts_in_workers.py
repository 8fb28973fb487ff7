"""``dedup -j N`` keeps each text in the worker process that read it and has the workers make
the exact sets of the documents of candidate pairs (simdedup.run.TextsInWorkers): the clusters
are those of one process, at any number of workers and any memory budget for the texts, for
documents read as files and from tables, in every script."""

from __future__ import annotations

import json
import random
import warnings

import pytest

import simdedup
from simdedup import workers
from simdedup.fingerprints.sets import TextBudget

ENGLISH = "the a shell prompt reads each line and runs it with care while the kernel waits".split()
CHINESE = list("我们在这里发现了一个新的问题需要大家共同解决明天会更好")


def _text(r: random.Random, words: int) -> str:
    if r.random() < 0.3:
        return "".join(r.choice(CHINESE) for _ in range(words))
    return " ".join(r.choice(ENGLISH) + str(r.randrange(50)) for _ in range(words))


def _edited(r: random.Random, text: str) -> str:
    cut = r.randrange(len(text) + 1)
    return text[:cut] + r.choice(["", " x", "了", " the"]) + text[cut + r.randrange(3) :]


def write_corpus(path, seed: int) -> list[str]:
    """Families of edited copies in files and in a JSON-lines table, of any length, with an
    empty file, one that is not UTF-8 and exact copies among them."""
    r = random.Random(seed)
    originals = [_text(r, r.choice([3, 30, 300, 3000])) for _ in range(150)]
    texts = [t if r.random() < 0.2 else _edited(r, t) for t in originals for _ in range(r.randrange(1, 4))]
    r.shuffle(texts)
    files = path / "files"
    files.mkdir()
    for i, text in enumerate(texts[: len(texts) // 2]):
        (files / f"{i:03d}.txt").write_text(text, encoding="utf-8")
    (files / "empty.txt").write_bytes(b"")
    (files / "latin.txt").write_bytes(b"caf\xe9 " * 40)
    table = path / "table.jsonl"
    table.write_text(
        "".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts[len(texts) // 2 :])),
        encoding="utf-8",
    )
    return [str(files), str(table)]


def _dedup(paths: list[str], jobs: int) -> tuple[list[list[str]], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clusters = simdedup.dedup(paths, jobs=jobs, k=12)
    return clusters, sorted(str(w.message) for w in caught)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("shared", [True, False])
def test_clusters_are_those_of_one_process_at_any_budget(tmp_path, monkeypatch, seed, shared):
    """The workers place their sets in memory shared with the parent, or (where there is none)
    send them for the parent to place."""
    if not shared:
        monkeypatch.setattr(workers.SharedMemory, "create", classmethod(lambda cls, nbytes: None))
    else:
        memory = workers.SharedMemory.create(1)
        if memory is None:
            pytest.skip("no shared memory here")
        memory.close()
    paths = write_corpus(tmp_path, seed)
    sizes = sorted(len(open(p, "rb").read()) for p in (tmp_path / "files").iterdir())
    for limit in (TextBudget.limit, sum(sizes) // 3, sizes[len(sizes) // 2], 0):
        monkeypatch.setattr(TextBudget, "limit", limit)
        one = _dedup(paths, 1)
        assert len(one[0]) > 20, "the corpus has near-duplicates"
        assert any("beyond the memory budget" in w for w in one[1]) == (limit < sum(sizes)), one[1]
        for jobs in (2, 3):
            assert _dedup(paths, jobs) == one, (limit, jobs)


def test_the_workers_keep_the_texts(tmp_path, monkeypatch):
    """The parent receives handles, not texts: every kept text of a -j 2 run is a HeldText."""
    from simdedup import run
    from simdedup.similarity import HeldText

    seen = []
    made = run.TextsInWorkers.index

    def index(self, kept):
        seen.extend(kept)
        return made(self, kept)

    monkeypatch.setattr(run.TextsInWorkers, "index", index)
    paths = write_corpus(tmp_path, 0)
    assert _dedup(paths, 2) == _dedup(paths, 1)
    held = [k for k in seen if k is not None]
    assert len(held) > 50 and all(isinstance(k, HeldText) and k.key >= 0 for k in held)
    assert len({k.holder for k in held}) == 2


def test_an_interrupt_while_the_workers_make_the_sets_ends_them(tmp_path, monkeypatch):
    """Ctrl-C (or a signal the CLI turns into an exception) after the workers made their sets
    and before they placed them: the exception reaches the caller and no worker is left."""
    import os

    from simdedup import similarity

    pids = []
    each = workers.Pool.each

    def each_noting(self, tasks, into=None):
        pids.extend(self.pids)
        return each(self, tasks)

    def interrupted(self, blocks, rows):
        raise KeyboardInterrupt

    monkeypatch.setattr(workers.Pool, "each", each_noting)
    monkeypatch.setattr(similarity.IndexLayout, "__init__", interrupted)
    paths = write_corpus(tmp_path, 1)
    with pytest.raises(KeyboardInterrupt), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the corpus's empty and Latin-1 files
        simdedup.dedup(paths, jobs=2, k=12)
    assert len(set(pids)) == 2
    for pid in set(pids):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
