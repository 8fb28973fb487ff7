"""simdedup.run: batches on worker processes give what one process gives; a killed worker stops the run."""

from __future__ import annotations

import json
import os

import pytest
from helpers import TEXT, invoke

from simdedup.methods import SimhashMethod
from simdedup.read import Source
from simdedup.tokenizers import get_tokenizer


def test_jsonl_on_two_workers_equals_one(tmp_path, monkeypatch):
    import simdedup.read.tables as tables

    monkeypatch.setattr(tables, "SPAN_BYTES", 300)  # many stretches, so both workers take some
    lines = [json.dumps({"text": f"{TEXT} {i % 7} variant {i}", "id": f"d{i}"}) for i in range(200)]
    lines[50] = "not json"
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    one = invoke("fingerprint", "--silent", "-j", "1", "--id-field", "id", tmp_path / "d.jsonl")
    two = invoke("fingerprint", "--silent", "-j", "2", "--id-field", "id", tmp_path / "d.jsonl")
    assert one.exit_code == two.exit_code == 3  # the bad line is skipped, with a warning
    assert one.stdout == two.stdout and one.stdout.count("\n") == 199
    assert "d.jsonl:51: not a JSON object" in two.stderr


class _DiesOnSomeDocument(SimhashMethod):
    """Kills its own (worker) process when it meets the document named "die"."""

    def fingerprint_batch(self, documents):
        import signal

        documents = list(documents)
        if any(document.id.endswith("die") for document in documents):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().fingerprint_batch(documents)


def test_a_killed_worker_stops_the_run_with_a_message(tmp_path, alarm):
    """multiprocessing.Pool would wait forever for the lost batch."""
    from simdedup.errors import SimdedupError
    from simdedup.run import BATCH_SOURCES, fingerprint_batches

    sources = [Source(f"t{i}", text=f"document number {i}") for i in range(5 * BATCH_SOURCES)]
    sources[3 * BATCH_SOURCES] = Source("die", text="the end")
    fingerprinter = _DiesOnSomeDocument(get_tokenizer("words"))
    done = []
    with pytest.raises(SimdedupError, match="worker process died"):
        for batch in fingerprint_batches(sources, fingerprinter, jobs=2):
            done.append(batch)
    assert len(done) <= 3  # the batches before it, in order
    assert [r.id for batch in done for r in batch.records] == [f"t{i}" for i in range(len(done) * BATCH_SOURCES)]
