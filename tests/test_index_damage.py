"""A damaged or foreign index catalog is one line and exit 1 for every index command, never a
traceback nor exit 70, and ``index stats --verify`` calls it damaged. The damage is generated:
truncation at seeded offsets, seeded byte flips, settings edited to seeded bad values, seeded
rows deleted, random bytes."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3

import pytest
from click.testing import CliRunner
from helpers import EXAMPLES

from simdedup.cli import cli
from simdedup.store.catalog import CATALOG


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """An index of three adds (one replacing documents, so that it has replaced rows), the
    fingerprints of a batch to add and a document to query."""
    root = tmp_path_factory.mktemp("damage")
    for name, folder in (("en", EXAMPLES / "en"), ("zh", EXAMPLES / "zh")):
        result = invoke("fingerprint", "--silent", folder, "-o", root / f"{name}.jsonl")
        assert result.exit_code == 0, result.output
    lines = (root / "zh.jsonl").read_text().splitlines()
    (root / "zh1.jsonl").write_text("\n".join(lines[:2]) + "\n")
    (root / "zh2.jsonl").write_text("\n".join(lines[2:]) + "\n")
    (root / "again.jsonl").write_text((root / "en.jsonl").read_text().splitlines()[0] + "\n")
    index = root / "idx"
    for args in (
        ("index", "create", index, "-k", 3, "--from", root / "en.jsonl"),
        ("index", "add", index, root / "zh1.jsonl", "-o", root / "out1.jsonl"),
        ("index", "add", "--replace", index, root / "again.jsonl", "-o", root / "out2.jsonl"),
    ):
        result = invoke(*args)
        assert result.exit_code == 0, result.output
    return root


def commands(root, index):
    query = next((EXAMPLES / "en").iterdir())
    return [
        ("index", "stats", index),
        ("index", "stats", "--json", index),
        ("index", "cluster", index, "--singletons"),
        ("index", "query", index, query),
        ("index", "add", index, root / "zh2.jsonl"),
        ("index", "compact", index),
        ("index", "create", index, "-k", 3, "--from", root / "zh2.jsonl"),
        ("fingerprint", "--silent", "--index", index, EXAMPLES / "zh"),
    ]


def damaged_copy(root, name):
    copy = root / name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root / "idx", copy)
    return copy


def verify(index):
    """``(exit status, output)`` of ``index stats --verify``."""
    result = invoke("index", "stats", "--verify", index)
    return result.exit_code, result.output


def assert_one_line_or_works(root, index):
    """Every index command, each on a fresh copy of the damaged index: it works, or says one
    line with exit 1; never a traceback, never exit 70."""
    for command in commands(root, index):
        scratch = root / "scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(index, scratch)
        args = [scratch if part == index else part for part in command]
        result = invoke(*args)
        where = (command[:2], result.output[-300:])
        assert result.exit_code in (0, 1), where
        assert "Traceback" not in result.output and "unexpected" not in result.output, where
        assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), where
        if result.exit_code == 1:
            assert len(result.stderr.strip().splitlines()) == 1, where


def sqlite_finds_damage(index) -> bool:
    """Whether SQLite itself calls the catalog damaged (opened read-only, on its own)."""
    try:
        connection = sqlite3.connect(f"file:{index / CATALOG}?mode=ro", uri=True)
        try:
            return connection.execute("PRAGMA integrity_check").fetchall() != [("ok",)]
        finally:
            connection.close()
    except sqlite3.DatabaseError:
        return True


def edit(index, statement, *values):
    connection = sqlite3.connect(index / CATALOG)
    try:
        connection.execute(statement, values)
        connection.commit()
    finally:
        connection.close()


@pytest.mark.parametrize("seed", range(4))
def test_truncated_catalogs_are_damaged_for_every_command(made, seed):
    rng = random.Random(seed)
    index = damaged_copy(made, "cut")
    catalog = index / CATALOG
    data = catalog.read_bytes()
    catalog.write_bytes(data[: rng.randrange(0, len(data))])
    status, output = verify(index)
    assert status == 1 and "damaged" in output, output
    assert_one_line_or_works(made, index)


@pytest.mark.parametrize("seed", range(6))
def test_flipped_bytes_that_sqlite_finds_are_damage_for_verify(made, seed):
    """Bytes flipped at seeded places: whatever SQLite's own check finds, verify reports, and no
    command fails otherwise than in one line. (A flip inside a number SQLite does not index is
    beyond any check of a catalog without checksums.)"""
    rng = random.Random(seed)
    index = damaged_copy(made, "flip")
    catalog = index / CATALOG
    data = bytearray(catalog.read_bytes())
    for _ in range(rng.choice([1, 3, 30])):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    catalog.write_bytes(bytes(data))
    status, output = verify(index)
    if sqlite_finds_damage(index):
        assert status == 1 and "damaged" in output, output
    assert_one_line_or_works(made, index)


#: bad values of each setting: a JSON text, or None for text that is not JSON
BAD_SETTINGS = {
    "format": ["0", "-1", '"1"', "null", "1.5", "[]", "true"],
    "blocks": ["0", "-5", "3", "65", "99", "20", "5.0", '"5"', "null", "{}", "true", str(1 << 70)],
    "next_seq": ["-1", '"0"', "null", "0.5", "[1]"],
    "next_unit": ["-3", "null", '"x"'],
    "next_segment": ["0", "-1", "null", "2.5"],
}


def bad_fingerprints(rng, good):
    changed = dict(good)
    key, value = rng.choice(
        [
            ("bits", 32),
            ("bits", "64"),
            ("bits", None),
            ("bits", 100),
            ("bits", 1 << 20),
            ("sketch", -1),
            ("sketch", 10**9),
        ]
        + [("sketch", 1.5), ("method", 3), ("method", None), ("options", None)]
    )
    if key == "options":
        del changed["bits"]
    else:
        changed[key] = value
    return json.dumps(changed)


def bad_verification(rng, good):
    changed = dict(good)
    key, value = rng.choice(
        [("k", -1), ("k", 64), ("k", 3.0), ("k", "3"), ("k", None), ("min_resemblance", 2), ("min_resemblance", "x")]
        + [("min_similarity", -0.5), ("similarity", "cosine"), ("min_features", -1), ("bands", True), ("nope", 1)]
    )
    changed[key] = value
    return json.dumps(changed)


@pytest.mark.parametrize("seed", range(8))
def test_settings_edited_to_bad_values_are_damaged_for_every_command(made, seed):
    rng = random.Random(seed)
    index = damaged_copy(made, "settings")
    connection = sqlite3.connect(index / CATALOG)
    good = {name: json.loads(value) for name, value in connection.execute("SELECT name, value FROM settings")}
    connection.close()
    name = rng.choice([*BAD_SETTINGS, "fingerprints", "verification", "not json"])
    if name == "fingerprints":
        value = bad_fingerprints(rng, good["fingerprints"])
    elif name == "verification":
        value = bad_verification(rng, good["verification"])
    elif name == "not json":
        name, value = rng.choice(list(good)), rng.choice(["{", "nan nan", "\x00", ""])
    else:
        value = rng.choice(BAD_SETTINGS[name])
    edit(index, "UPDATE settings SET value = ? WHERE name = ?", value, name)
    status, output = verify(index)
    assert status == 1 and "damaged" in output, (name, value, output)
    assert_one_line_or_works(made, index)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("table", ["documents", "segments", "removed"])
def test_deleted_rows_are_damage_for_verify_and_every_command(made, seed, table):
    rng = random.Random(seed)
    index = damaged_copy(made, "rows")
    connection = sqlite3.connect(index / CATALOG)
    rowids = [rowid for (rowid,) in connection.execute(f"SELECT rowid FROM {table}")]
    connection.close()
    assert rowids
    for rowid in rng.sample(rowids, rng.randint(1, len(rowids))):
        edit(index, f"DELETE FROM {table} WHERE rowid = ?", rowid)
    status, output = verify(index)
    assert status == 1 and "damaged" in output, output
    assert_one_line_or_works(made, index)
    if table == "segments":  # a writer does not remove the file its damaged catalog forgot
        assert sorted(p.name for p in (index / "segments").iterdir()) == sorted(
            p.name for p in (made / "idx" / "segments").iterdir()
        )


@pytest.mark.parametrize("seed, kind", list(enumerate(["bytes", "bytes", "empty", "other"])))
def test_foreign_catalogs_are_one_line(made, seed, kind):
    """Random bytes (seeded), an empty file, another program's database."""
    rng = random.Random(seed)
    index = damaged_copy(made, "foreign")
    catalog = index / CATALOG
    if kind == "bytes":
        catalog.write_bytes(rng.randbytes(rng.choice([100, 4096, 20000])))
    elif kind == "empty":
        catalog.write_bytes(b"")
    else:
        catalog.unlink()
        connection = sqlite3.connect(catalog)
        connection.execute("CREATE TABLE settings (name TEXT, other TEXT)")
        connection.commit()
        connection.close()
    status, output = verify(index)
    assert status == 1, output
    assert_one_line_or_works(made, index)


def test_a_segment_row_naming_a_path_is_damage_and_nothing_is_removed(made, tmp_path):
    index = damaged_copy(made, "path")
    victim = tmp_path / "victim.txt"
    victim.write_text("not the index's\n")
    edit(index, "UPDATE segments SET file = ? WHERE rowid = (SELECT min(rowid) FROM segments)", str(victim))
    status, output = verify(index)
    assert status == 1 and "damaged" in output
    assert_one_line_or_works(made, index)
    assert victim.read_text() == "not the index's\n"


def test_the_named_examples(made):
    """Random bytes and a cut catalog once ended in exit 70; a deleted document row was verified."""
    index = damaged_copy(made, "named")
    edit(index, "DELETE FROM documents WHERE seq = (SELECT min(seq) FROM documents)")
    status, output = verify(index)
    assert status == 1 and "documents" in output and "verified: True" not in output
    intact = damaged_copy(made, "intact")
    status, output = verify(intact)
    assert status == 0 and "verified: True" in output
