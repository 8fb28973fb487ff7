"""The persistent index (simdedup.store): equivalence with ``cluster``, queries against brute
force, refusals, damage, the writer lock, and kill -9 at many points of add and compact."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import index_settings as _settings
from helpers import make_records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdedup import store
from simdedup.cli import cli
from simdedup.fingerprints import FingerprintRecord, json_lines, load_fingerprints
from simdedup.methods import SimhashMethod
from simdedup.store.catalog import WriterLock
from simdedup.tokenizers import get_tokenizer


def write(path, records) -> str:
    path.write_bytes(json_lines(records))
    return str(path)


def run(*args, ok: bool = True):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def index_state(directory) -> tuple:
    """What the catalog holds, and the segment files."""
    with sqlite3.connect(os.path.join(directory, "catalog.sqlite")) as db:
        tables = tuple(
            tuple(db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall())
            for t in ("documents", "pairs", "segments", "removed", "settings")
        )
    return tables, tuple(sorted(os.listdir(os.path.join(directory, "segments"))))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 120),
    cuts=st.lists(st.floats(0, 1), max_size=4),
    bits=st.sampled_from([64, 64, 128]),
    sketch=st.sampled_from([32, 32, 0]),
    linkage=st.sampled_from(["complete", "star", "single"]),
    compact_after=st.integers(0, 5),
)
def test_index_cluster_equals_one_cluster_run(tmp_path_factory, seed, n, cuts, bits, sketch, linkage, compact_after):
    tmp = tmp_path_factory.mktemp("eq")
    k = 3 if bits == 64 else 6
    records = make_records(seed, n, bits, sketch)
    bounds = sorted({0, n, *(int(c * n) for c in cuts)})
    batches = [records[a:b] for a, b in zip(bounds, bounds[1:])]
    np.random.default_rng(seed).shuffle(batches)
    files = [write(tmp / f"b{i}.jsonl", batch) for i, batch in enumerate(batches)]
    run("index", "create", tmp / "idx", "-k", k, "--from", files[0])
    for number, name in enumerate(files[1:], 1):
        run("index", "add", tmp / "idx", name)
        if number == compact_after:
            run("index", "compact", tmp / "idx")
    together = tmp / "all.jsonl"
    together.write_bytes(b"".join(open(f, "rb").read() for f in files))
    for form in ("clusters", "members"):
        expected = run("cluster", "-k", k, "--linkage", linkage, "--format", form, together).stdout_bytes
        assert run("index", "cluster", tmp / "idx", "--linkage", linkage, "--format", form).stdout_bytes == expected
    assert (
        run("index", "cluster", tmp / "idx", "--singletons").stdout_bytes
        == run("cluster", "-k", k, "--singletons", together).stdout_bytes
    )


@pytest.mark.parametrize("sketch", [32, 0])
def test_add_prints_what_cluster_against_prints(tmp_path, sketch):
    old = make_records(7, 300, sketch=sketch)
    new = make_records(8, 200, sketch=sketch, prefix="n")
    # the new batch also holds near-duplicates and exact copies of old documents
    new += [
        FingerprintRecord(
            f"m{i:03d}",
            r.simhash ^ (1 << (i % 64)) if i % 3 else r.simhash,
            64,
            r.features,
            r.settings,
            r.bytes,
            r.sketch,
        )
        for i, r in enumerate(old[::5])
    ]
    old_file, new_file = write(tmp_path / "old.jsonl", old), write(tmp_path / "new.jsonl", new)
    run("index", "create", tmp_path / "idx", "-k", 3, "--from", old_file)
    printed = run("index", "add", tmp_path / "idx", new_file).stdout_bytes
    expected = run("cluster", "-k", 3, "--against", old_file, new_file).stdout_bytes
    assert printed == expected
    assert printed.count(b"\n") > 20 and b'"new":false' in printed


def test_replace_and_refusals_write_nothing(tmp_path):
    records = make_records(3, 200)
    first = write(tmp_path / "a.jsonl", records[:150])
    run("index", "create", tmp_path / "idx", "-k", 3, "--from", first)
    before = index_state(tmp_path / "idx")
    # an id already present
    again = write(tmp_path / "again.jsonl", records[140:200])
    result = run("index", "add", tmp_path / "idx", again, ok=False)
    assert result.exit_code == 1 and "10 ids are already in the index" in result.output
    assert len(result.output.strip().splitlines()) == 1
    # other settings
    other = [
        FingerprintRecord(r.id + "x", r.simhash, 64, r.features, _settings(sketch=64), None, (r.sketch or b"") * 2)
        for r in records[:5]
    ]
    result = run("index", "add", tmp_path / "idx", write(tmp_path / "other.jsonl", other), ok=False)
    assert result.exit_code == 1 and "64-byte sketch" in result.output and "32-byte sketch" in result.output
    assert len(result.output.strip().splitlines()) == 1
    # a newer format
    newer = tmp_path / "newer"
    shutil.copytree(tmp_path / "idx", newer)
    with sqlite3.connect(newer / "catalog.sqlite") as db:
        db.execute("UPDATE settings SET value = '2' WHERE name = 'format'")
    newer_state = index_state(newer)
    result = run("index", "add", newer, again, "--replace", ok=False)
    assert result.exit_code == 1 and "index format 2 is newer" in result.output
    assert index_state(newer) == newer_state
    assert index_state(tmp_path / "idx") == before
    # --replace: the index then equals one cluster run over the latest fingerprint of each id
    changed = [
        FingerprintRecord(r.id, r.simhash ^ 0b101, 64, r.features, r.settings, r.bytes, r.sketch)
        for r in records[140:200]
    ]
    run("index", "add", tmp_path / "idx", write(tmp_path / "changed.jsonl", changed), "--replace")
    latest = tmp_path / "latest.jsonl"
    write(latest, records[:140] + changed)
    expected = run("cluster", "-k", 3, latest).stdout_bytes
    assert run("index", "cluster", tmp_path / "idx").stdout_bytes == expected
    assert store.stats(str(tmp_path / "idx"))["removed"] == 10
    run("index", "compact", tmp_path / "idx")
    figures = store.stats(str(tmp_path / "idx"), verify=True)
    assert (figures["removed"], figures["documents"], figures["rows"], figures["segments"]) == (0, 200, 200, 1)
    assert run("index", "cluster", tmp_path / "idx").stdout_bytes == expected


def _brute_matches(records, record, k, min_resemblance=0.8):
    """Who a query matches, by comparing it with every record (exact copies always): within k,
    and the resemblance their sketches of shingles estimate passes (short texts too)."""
    from simdedup import shingle_sketch

    found = {}
    for other in records:
        distance = (other.simhash ^ record.simhash).bit_count()
        sketches = np.frombuffer(other.sketch + record.sketch, dtype=np.uint8).reshape(2, -1)
        estimate = float(shingle_sketch.resemblance(sketches, np.array([0]), np.array([1]))[0])
        copy = other.simhash == record.simhash and other.sketch == record.sketch
        if copy or (distance <= k and estimate >= min_resemblance):
            found[other.id] = (distance, round(estimate, 3))
    return found


def test_query_matches_brute_force_and_names_clusters(tmp_path):
    fingerprinter = SimhashMethod(get_tokenizer("words", shingle=1), sketch_bins=32)
    words = [f"w{i}" for i in range(400)]
    rng = np.random.default_rng(5)
    texts = {}
    for family in range(30):
        base = list(rng.choice(words, 60))
        for member in range(int(rng.integers(1, 6))):
            text = list(base)
            for _ in range(int(rng.integers(0, 4))):
                text[int(rng.integers(len(text)))] = str(rng.choice(words))
            texts[f"f{family:02d}-{member}"] = " ".join(text)
    records = [fingerprinter.fingerprint_text(doc_id, text) for doc_id, text in texts.items()]
    half = len(records) // 2
    run(
        "index",
        "create",
        tmp_path / "idx",
        "-k",
        3,
        "--sketch",
        32,
        "--from",
        write(tmp_path / "a.jsonl", records[:half]),
    )
    run("index", "add", tmp_path / "idx", write(tmp_path / "b.jsonl", records[half:]))
    labels = {
        line["id"]: line["cluster"]
        for line in map(
            json.loads,
            run("index", "cluster", tmp_path / "idx", "--singletons", "--format", "members").stdout.splitlines(),
        )
    }
    checked = 0
    for doc_id, text in list(texts.items())[::3]:
        query_text = text + " extra"
        path = tmp_path / "q.txt"
        path.write_text(query_text)
        printed = json.loads(run("index", "query", tmp_path / "idx", path, "--json").stdout)
        expected = _brute_matches(records, fingerprinter.fingerprint_text("q", query_text), 3)
        assert {m["id"]: (m["distance"], m["resemblance_estimate"]) for m in printed["matches"]} == expected
        assert all(m["cluster"] == labels[m["id"]] for m in printed["matches"])
        checked += bool(expected)
    assert checked > 10
    assert store.query(str(tmp_path / "idx"), texts["f00-0"])[0].id == "f00-0"


def test_damaged_and_truncated_segments_are_named(tmp_path):
    run("index", "create", tmp_path / "idx", "-k", 3, "--from", write(tmp_path / "a.jsonl", make_records(1, 3000)))
    run("index", "add", tmp_path / "idx", write(tmp_path / "b.jsonl", make_records(2, 50, prefix="b")))
    segments = tmp_path / "idx" / "segments"
    first = sorted(os.listdir(segments))[0]
    intact = (segments / first).read_bytes()
    for damage, words in (
        (lambda data: data[:-100], "truncated"),
        (lambda data: data[:70000] + bytes([data[70000] ^ 1]) + data[70001:], "damaged at byte 65536"),
    ):
        (segments / first).write_bytes(damage(intact))
        result = run("index", "cluster", tmp_path / "idx", ok=False)
        assert result.exit_code == 1 and first in result.output and words in result.output
        assert len(result.output.strip().splitlines()) == 1
        result = run("index", "stats", tmp_path / "idx", "--verify", ok=False)
        assert result.exit_code == 1 and first in result.output
    # a table block a query reads: damage every byte past the header, so any block read is caught
    data = bytearray(intact)
    for at in range(65536, len(data) - 4096, 4096):
        data[at] ^= 0xFF
    (segments / first).write_bytes(bytes(data))
    with pytest.raises(store.DamagedIndexError, match=first):
        store.query(str(tmp_path / "idx"), "some words to look up in the index here")


def test_one_writer_waits_or_names_the_holder_and_readers_go_on(tmp_path):
    records = make_records(4, 100)
    run("index", "create", tmp_path / "idx", "-k", 3, "--from", write(tmp_path / "a.jsonl", records[:50]))
    batch = write(tmp_path / "b.jsonl", records[50:])
    with WriterLock(str(tmp_path / "idx"), "a test"):
        result = run("index", "add", tmp_path / "idx", batch, "--no-wait", ok=False)
        assert result.exit_code == 1 and f"pid {os.getpid()} (a test, since" in result.output
        run("index", "cluster", tmp_path / "idx")  # readers need no lock
        run("index", "stats", tmp_path / "idx")
    # a second writer waits until the first is done
    waited = []
    holder = WriterLock(str(tmp_path / "idx"), "a test").__enter__()
    threading.Timer(0.3, holder.__exit__).start()
    with store.Index(str(tmp_path / "idx")) as opened:
        added = opened.add(load_fingerprints([("b", open(batch, "rb"))]), on_wait=waited.append)
    assert added.added == 50 and waited and "a test" in waited[0]


def _kill_at(point: int | None, work, report=None) -> int:
    """Run ``work`` in a forked child that SIGKILLs itself at the ``point``-th line run in
    simdedup.store (never with None); returns the number of lines run."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        count = [0]
        marker = os.sep + "store" + os.sep

        def trace(frame, event, arg):
            if marker not in frame.f_code.co_filename:
                return None
            if event == "line":
                count[0] += 1
                if count[0] == point:
                    os.kill(os.getpid(), signal.SIGKILL)
            return trace

        try:
            sys.settrace(trace)
            work()
            sys.settrace(None)
            os.write(write_end, str(count[0]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        lines = pipe.read()
    _, status = os.waitpid(pid, 0)
    if point is None:
        assert status == 0
        return int(lines)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return -1


def test_kill_9_at_any_point_of_add_or_compact_leaves_before_or_after(tmp_path):
    records = make_records(9, 400)
    start = tmp_path / "start"
    run("index", "create", start, "-k", 3, "--from", write(tmp_path / "a.jsonl", records[:200]))
    run("index", "add", start, write(tmp_path / "b.jsonl", records[200:300]))
    batch = write(
        tmp_path / "c.jsonl",
        records[300:]
        + [
            FingerprintRecord(
                records[0].id, records[0].simhash ^ 1, 64, 30, records[0].settings, None, records[0].sketch
            )
        ],
    )
    fingerprints = load_fingerprints([("c", open(batch, "rb"))])
    before = run("index", "cluster", start).stdout_bytes
    after_dir = tmp_path / "after"
    shutil.copytree(start, after_dir)
    store.Index(str(after_dir)).add(fingerprints, replace=True)
    after = run("index", "cluster", after_dir).stdout_bytes
    compacted = tmp_path / "compacted"
    shutil.copytree(after_dir, compacted)

    def add_to(directory):
        return lambda: store.Index(str(directory)).add(fingerprints, replace=True)

    def compact(directory):
        return lambda: store.Index(str(directory)).compact()

    for work, origin, states in ((add_to, start, (before, after)), (compact, compacted, (after,))):
        probe = tmp_path / "probe"
        shutil.rmtree(probe, ignore_errors=True)
        shutil.copytree(origin, probe)
        lines = _kill_at(None, work(probe))
        assert lines > 200
        seen = set()
        for point in sorted(set(np.linspace(1, lines, 40).astype(int).tolist())):
            victim = tmp_path / "victim"
            shutil.rmtree(victim, ignore_errors=True)
            shutil.copytree(origin, victim)
            _kill_at(point, work(victim))
            printed = run("index", "cluster", victim).stdout_bytes
            assert printed in states, point
            seen.add(printed)
            store.stats(str(victim), verify=True)
        assert len(seen) == len(states)  # killed before the commit, and after it
        # the next writer removes what a killed one left
        run("index", "compact", victim)
        assert all(not name.startswith(".") for name in os.listdir(victim / "segments"))
        assert run("index", "cluster", victim).stdout_bytes == states[-1]


def test_kill_9_at_any_point_of_create_leaves_nothing_a_reader_takes_for_an_index(tmp_path):
    """A create killed anywhere (no clean-up runs) leaves either the whole index or a directory
    that readers refuse in one line, and the same create then makes the whole index."""
    records = make_records(10, 300)
    source = write(tmp_path / "a.jsonl", records)
    whole = tmp_path / "whole"
    run("index", "create", whole, "-k", 3, "--from", source)
    expected = run("index", "cluster", whole).stdout_bytes

    def create(directory):
        return lambda: run("index", "create", directory, "-k", 3, "--from", source)

    lines = _kill_at(None, create(tmp_path / "probe"))
    assert lines > 100
    outcomes = set()
    for point in sorted(set(np.linspace(1, lines, 40).astype(int).tolist())):
        victim = tmp_path / f"victim-{point}"
        if point % 2:  # a directory the user made beforehand, or one create makes
            victim.mkdir()
        _kill_at(point, create(victim))
        read = run("index", "cluster", victim, ok=False)
        if read.exit_code == 0:
            assert read.stdout_bytes == expected, point
            outcomes.add("whole")
            continue
        assert read.exit_code == 1 and len(read.output.strip().splitlines()) == 1, (point, read.output)
        assert "Traceback" not in read.output
        outcomes.add("refused")
        run("index", "create", victim, "-k", 3, "--from", source)
        assert run("index", "cluster", victim).stdout_bytes == expected, point
        assert sorted(os.listdir(victim)) == sorted(os.listdir(whole))
    assert outcomes == {"whole", "refused"}


def test_creates_racing_for_one_directory_leave_one_whole_index(tmp_path):
    """Several ``index create`` of one directory at once: each either makes the index or is
    refused in one line, and what is left is the whole index, never one emptied by another."""
    source = write(tmp_path / "a.jsonl", make_records(11, 300))
    whole = tmp_path / "whole"
    run("index", "create", whole, "-k", 3, "--from", source)
    expected = run("index", "cluster", whole).stdout_bytes
    command = [sys.executable, "-m", "simdedup", "index", "create"]
    for attempt in range(3):
        target = tmp_path / f"raced-{attempt}"
        racers = [
            subprocess.Popen([*command, str(target), "-k", "3", "--from", source], stderr=subprocess.PIPE)
            for _ in range(4)
        ]
        outcomes = [(racer.wait(timeout=120), racer.stderr.read().decode()) for racer in racers]
        assert any(status == 0 for status, _ in outcomes), outcomes
        for status, stderr in outcomes:
            assert status == 0 or (status == 1 and len(stderr.strip().splitlines()) == 1), stderr
        assert run("index", "cluster", target).stdout_bytes == expected, outcomes


def test_a_create_in_progress_is_not_replaced_by_another(tmp_path):
    from simdedup.store.catalog import creating

    with creating(str(tmp_path / "idx")):
        second = run("index", "create", tmp_path / "idx", "-k", 3, ok=False)
        assert second.exit_code == 1 and "another process is creating" in second.output
        # another process (this one may open what it is creating)
        reader = subprocess.run(
            [sys.executable, "-m", "simdedup", "index", "stats", str(tmp_path / "idx")], capture_output=True, text=True
        )
        assert reader.returncode == 1 and "creation has not finished" in reader.stderr, reader.stderr


def test_a_reader_whose_snapshot_a_compaction_replaced_reads_the_new_one(tmp_path):
    records = make_records(6, 120)
    # a batch of a tenth of the index's rows gets a segment of its own (no merge)
    run("index", "create", tmp_path / "idx", "-k", 3, "--from", write(tmp_path / "a.jsonl", records[:110]))
    run("index", "add", tmp_path / "idx", write(tmp_path / "b.jsonl", records[110:]))
    expected = run("index", "cluster", tmp_path / "idx").stdout_bytes
    with store.Index(str(tmp_path / "idx")) as reader:
        with reader.catalog.snapshot():
            assert len(reader.catalog.segments()) == 2  # the snapshot starts: two segments
            assert store.compact(str(tmp_path / "idx")) == 2  # their files are gone now
            reader._open_segments()
            assert [s.name for s in reader._segments] == [f for f in os.listdir(tmp_path / "idx" / "segments")]
        clusters, fingerprints = reader.cluster()
    assert len(clusters) and run("index", "cluster", tmp_path / "idx").stdout_bytes == expected


EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def test_fingerprint_and_dedup_add_to_an_index(tmp_path):
    """--index: the records a run makes go into the index as `index add` would put them, and
    an index of other settings is refused before a document is read, with nothing written."""
    en, zh = os.path.join(EXAMPLES, "en"), os.path.join(EXAMPLES, "zh")
    idx = tmp_path / "idx"
    run("index", "create", idx, "-k", "3")
    first = run("fingerprint", "--silent", "--index", idx, en)
    again = run("fingerprint", "--silent", en)
    assert first.stdout == again.stdout  # the output is the same with --index
    run("dedup", "--silent", "--index", idx, zh)
    (tmp_path / "all.jsonl").write_text(run("fingerprint", "--silent", en, zh).stdout)
    assert run("index", "cluster", idx).stdout == run("cluster", "-k", "3", tmp_path / "all.jsonl").stdout
    before = index_state(idx)
    refused = run(
        "fingerprint", "--silent", "--tokenizer", "whitespace", "--index", idx, "-o", tmp_path / "w.jsonl", en, ok=False
    )
    assert refused.exit_code == 1 and "holds fingerprints made with" in refused.stderr
    assert not (tmp_path / "w.jsonl").exists() and index_state(idx) == before
    present = run("dedup", "--silent", "--index", idx, "-o", tmp_path / "c.jsonl", en, ok=False)
    assert present.exit_code == 1 and not (tmp_path / "c.jsonl").exists() and index_state(idx) == before


def test_no_output_goes_into_the_index(tmp_path):
    """-o naming a file of the index (with --force), or stdout appending to one, is refused
    before anything is written: the catalog and the segments are the index's, not outputs."""
    records = make_records(7, 40)
    fp = write(tmp_path / "fp.jsonl", records)
    idx = tmp_path / "idx"
    run("index", "create", idx, "-k", "3", "--from", fp)
    before = index_state(idx)
    catalog = idx / "catalog.sqlite"
    segment = next((idx / "segments").iterdir())
    catalog_bytes, segment_bytes = catalog.read_bytes(), segment.read_bytes()
    for args in (
        ["index", "cluster", idx, "--force", "-o", catalog],
        ["index", "add", idx, "--force", "-o", segment, fp],
        ["index", "cluster", idx, "-o", idx / "clusters.jsonl"],
        ["fingerprint", "--silent", "--index", idx, "--force", "-o", catalog, EXAMPLES],
    ):
        result = run(*args, ok=False)
        assert result.exit_code == 2 and "inside the index" in result.stderr, args
    with open(catalog, "ab") as appended:  # as `>> idx/catalog.sqlite` would give it
        result = subprocess.run(
            [sys.executable, "-m", "simdedup", "index", "cluster", str(idx)], stdout=appended, stderr=subprocess.PIPE
        )
    assert result.returncode == 2 and b"writes into a file of the index" in result.stderr
    assert catalog.read_bytes() == catalog_bytes and segment.read_bytes() == segment_bytes
    assert index_state(idx) == before and not (idx / "clusters.jsonl").exists()


def test_query_output_carries_hostile_ids_as_json(tmp_path):
    """An id holding a newline or an escape sequence is one JSON string of one line."""
    document = tmp_path / "doc.txt"
    document.write_text("the same words in the same order for the index and the query " * 5)
    (record,) = [json.loads(line) for line in run("fingerprint", "--silent", document).stdout.splitlines()]
    record["id"] = "fake\n1.000\t0\tcafe\tinjected\x1b[31m"
    (tmp_path / "fp.jsonl").write_text(json.dumps(record) + "\n")
    run("index", "create", tmp_path / "idx", "-k", "3", "--from", tmp_path / "fp.jsonl")
    lines = run("index", "query", tmp_path / "idx", document).stdout.splitlines()
    assert len(lines) == 1 and "\x1b" not in lines[0] and "\\u001b[31m" in lines[0]
    assert json.loads(lines[0])["id"] == record["id"] and set(json.loads(lines[0])) == {
        "id",
        "cluster",
        "distance",
        "resemblance_estimate",
    }


@pytest.mark.parametrize("planted", ["creating.unfinished", "writer.lock", "catalog.sqlite"])
def test_a_link_planted_in_an_index_is_never_written_through(tmp_path, planted):
    """A file of the index's own replaced by a symbolic link to another file (an input, say):
    every command leaves that file's bytes as they were, and works or refuses in one line."""
    records = make_records(12, 120)
    source = write(tmp_path / "a.jsonl", records[:100])
    batch = write(tmp_path / "b.jsonl", records[100:])
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"an input nobody may change\n" * 100)
    before = victim.read_bytes()
    index = tmp_path / "idx"
    if planted == "creating.unfinished":  # an unfinished creation, as a kill leaves it
        index.mkdir()
    else:
        run("index", "create", index, "-k", 3, "--from", source)
    target = index / planted
    if target.exists():
        target.unlink()
    target.symlink_to(victim)
    commands = [
        ("index", "create", index, "-k", 3, "--from", source),
        ("index", "add", index, batch),
        ("index", "compact", index),
        ("index", "cluster", index),
        ("index", "stats", index),
    ]
    for command in commands:
        result = run(*command, ok=False)
        assert "Traceback" not in result.output
        assert result.exit_code == 0 or len(result.output.strip().splitlines()) == 1, (command, result.output)
        assert victim.read_bytes() == before, command


@pytest.mark.parametrize("bits", [64, 128])
def test_every_k_gets_a_bounded_table_count(bits):
    """Any k an index takes has a default of at most MAX_TABLES tables (k = 30 once asked for
    C(44, 30) of them and ran out of memory), and an explicit --blocks beyond that is refused."""
    from math import comb

    from simdedup.pairs import MAX_TABLES
    from simdedup.store.segments import default_blocks

    for k in range(bits // 2):
        blocks = default_blocks(k, bits)
        assert (k == 0 and blocks == 1) or (k < blocks <= bits and comb(blocks, k) <= MAX_TABLES), (k, blocks)


def test_index_create_refuses_blocks_that_make_too_many_tables(tmp_path):
    result = CliRunner().invoke(cli, ["index", "create", str(tmp_path / "idx"), "-k", "9", "--blocks", "20"])
    assert result.exit_code == 2 and "167,960 tables" in result.stderr
    assert not (tmp_path / "idx").exists()
