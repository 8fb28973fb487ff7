"""Class: structures of any depth. Nothing recursive on input structure: directory trees are
walked with a stack of their own, JSON values nested deeper than MAX_JSON_DEPTH are refused the
same way by every reader of JSON (documents, --text-field and --features-field paths,
fingerprint records, cluster lines, gold pairs) whatever the depth of the reader's own stack,
and HTML of any depth is reduced to its text. Shapes and depths are generated (seeded).
"""

import json
import os
import random

import pytest
from helpers import invoke, record_line

from simdedup.jsonline import MAX_JSON_DEPTH

SEEDS = range(3)


def assert_clean(result, codes=(0, 1, 2, 3)):
    assert result.exit_code in codes, (result.exit_code, result.stderr[-1000:])
    assert "Traceback" not in result.stderr and "unexpected" not in result.stderr, result.stderr[-1000:]
    assert not result.stderr or result.stderr.endswith("\n")


def deep_tree(root, rng, depth):
    """A chain of ``depth`` directories under ``root`` with files at random levels (made with
    relative names: the whole path may be longer than one call may name); returns their count."""
    cwd = os.getcwd()
    os.mkdir(root)
    os.chdir(root)
    files = 0
    try:
        for level in range(depth):
            if level == depth - 1 or rng.random() < 0.01:
                with open(f"f{level}.txt", "w") as handle:
                    handle.write(f"level {level} of a deep tree, words {rng.random()} {rng.random()}\n")
                files += 1
            if rng.random() < 0.05:
                os.mkdir("side")  # a branch that ends at once: the walk climbs back out of it
                with open("side/s.txt", "w") as handle:
                    handle.write(f"a side branch at level {level}\n")
                files += 1
            os.mkdir("d")
            os.chdir("d")
    finally:
        os.chdir(cwd)
    return files


def remove_deep_tree(root):
    """Remove a tree made by :func:`deep_tree`, from the bottom up without recursion: pytest's
    own clean-up of old temporary directories (shutil.rmtree) recurses, and would fail on it in
    every later session."""
    cwd = os.getcwd()
    os.chdir(root)
    depth = 0
    try:
        while True:
            for entry in os.scandir("."):
                if entry.is_file():
                    os.unlink(entry.name)
            if os.path.isdir("side"):
                os.unlink("side/s.txt")
                os.rmdir("side")
            if not os.path.isdir("d"):
                break
            os.chdir("d")
            depth += 1
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(cwd)
    os.rmdir(root)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_directory_tree_of_any_depth_is_walked(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    monkeypatch.chdir(tmp_path)
    depth = rng.randrange(1100, 1900)  # deeper than the interpreter's recursion limit
    try:
        files = deep_tree("deep", rng, depth)
        result = invoke("fingerprint", "--silent", "-j", rng.choice([1, 2]), "deep")
        assert_clean(result, (0,))
        assert len(result.stdout.splitlines()) == files
        assert_clean(invoke("exact", "--silent", "deep"), (0,))
    finally:
        remove_deep_tree(tmp_path / "deep")


def nested(rng, depth):
    """A JSON value ``depth`` levels deep, arrays and objects mixed, some levels holding more."""
    value = rng.choice([1, "x", None, []])
    for _ in range(depth - 1):
        if rng.random() < 0.5:
            value = [value] + ([rng.randrange(9)] if rng.random() < 0.1 else [])
        else:
            value = {rng.choice("abc"): value}
    return [value] if rng.random() < 0.5 else {"z": value}


def deep_text(rng, depth):
    """The JSON text of a value ``depth`` deep; beyond what json.dumps can write, made by hand
    (and sometimes left unclosed)."""
    if depth < 800:
        return json.dumps(nested(rng, depth))
    opening = "".join(rng.choice(["[", '{"a":']) for _ in range(depth))
    if rng.random() < 0.3:
        return opening
    closing = "".join("]" if c == "[" else "}" for c in reversed(opening.replace('{"a":', "{")))
    return opening + "1" + closing


def depths(rng):
    return [
        MAX_JSON_DEPTH + 1,
        rng.randrange(MAX_JSON_DEPTH + 2, 990),
        rng.randrange(990, 1100),
        rng.randrange(1100, 200_000),
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_json_lines_of_any_depth_are_refused_alone(tmp_path, seed):
    """A document line with a value too deep in any field is skipped alone with its line, the
    same at every depth beyond the limit; one at the limit is read."""
    rng = random.Random(seed)
    good = json.dumps({"id": "good", "meta": {"text": "the good document is read"}, "text": "a good one"})
    lines = [good]
    for depth in depths(rng):
        field = rng.choice(["text", "id", "other", "meta"])
        line = {"id": f"d{depth}", "text": "deep", "meta": {"text": "x"}, field: "DEEP"}
        lines.append(json.dumps(line).replace('"DEEP"', deep_text(rng, depth)))
    fine = nested(rng, MAX_JSON_DEPTH - 1)
    lines.append(json.dumps({"id": "at-the-limit", "text": "read whole", "meta": {"text": "y"}, "other": fine}))
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    for options in (
        ["--id-field", "id"],
        ["--id-field", "id", "--text-field", "meta.text"],
        ["--id-field", "id", "-j", "2"],
    ):
        result = invoke("fingerprint", "--silent", *options, path)
        assert_clean(result, (3,))
        assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["good", "at-the-limit"]
        warned = [line for line in result.stderr.splitlines() if line.startswith("simdedup: warning: ")]
        assert warned[0].startswith(f"simdedup: warning: {path}:2: ") and "nested deeper" in warned[0]
        assert "skipped 4 " in result.stderr
    features = tmp_path / "features.jsonl"
    features.write_text(
        "\n".join(
            [json.dumps({"id": "f", "f": ["a", "b"]})]
            + [f'{{"id": "g{d}", "f": {deep_text(rng, d)}}}' for d in depths(rng)]
        )
        + "\n"
    )
    result = invoke("fingerprint", "--silent", "--id-field", "id", "--features-field", "f", features)
    assert_clean(result, (3,))
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["f"]


@pytest.mark.parametrize("seed", SEEDS)
def test_records_of_any_depth_are_refused_with_file_and_line(tmp_path, seed):
    """Fingerprint records (cluster, stats, index), cluster lines (select, eval) and gold pairs:
    a value too deep anywhere in a line is a one-line FILE:LINE error naming the nesting."""
    rng = random.Random(seed)
    for depth in depths(rng):
        deep = deep_text(rng, depth)
        records = tmp_path / f"fp{depth}.jsonl"
        lines = [record_line("a"), record_line("b")]
        lines.insert(1, record_line("c", **{rng.choice(["options", "extra", "id"]): "DEEP"}).replace('"DEEP"', deep))
        records.write_text("\n".join(lines) + "\n")
        clusters = tmp_path / f"cl{depth}.jsonl"
        member = '{"id": "a", "bytes": 3, "x": ' + deep + "}"
        clusters.write_text(
            '{"members": [{"id": "b"}, {"id": "c"}], "representative": "b"}\n'
            f'{{"members": [{member}, {{"id": "d"}}], "representative": "a"}}\n'
        )
        gold = tmp_path / f"gold{depth}.jsonl"
        gold.write_text('{"a": "b", "b": "c"}\n' + f'{{"a": "a", "b": "d", "why": {deep}}}\n')
        plain_gold, plain_clusters = tmp_path / "gold.jsonl", tmp_path / "clusters.jsonl"
        plain_gold.write_text('{"a": "b", "b": "c"}\n')
        plain_clusters.write_text('{"members": [{"id": "b"}, {"id": "c"}], "representative": "b"}\n')
        for command, wrong in (
            (["cluster", records], records),
            (["stats", records], records),
            (["index", "create", tmp_path / f"idx{depth}", "-k", "3", "--from", records], records),
            (["select", clusters], clusters),
            (["eval", "--gold", plain_gold, clusters], clusters),
            (["eval", "--gold", gold, plain_clusters], gold),
        ):
            result = invoke(*command)
            assert_clean(result, (1,))
            assert f"{wrong}:2: " in result.stderr and f"nested deeper than {MAX_JSON_DEPTH}" in result.stderr, (
                command,
                result.stderr[-500:],
            )


@pytest.mark.parametrize("seed", SEEDS)
def test_html_of_any_depth_gives_its_text(tmp_path, seed):
    rng = random.Random(seed)
    depth = rng.randrange(50_000, 150_000)
    tags = [rng.choice(["div", "b", "span", "p", "li", "td"]) for _ in range(depth)]
    closed = rng.random() < 0.5
    body = (
        "".join(f"<{t}>" for t in tags)
        + " visible words here "
        + ("".join(f"</{t}>" for t in reversed(tags)) if closed else "")
    )
    (tmp_path / "deep.html").write_text(body)
    (tmp_path / "deep.http").write_text("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body)
    for args in (["--html", tmp_path / "deep.html"], [tmp_path / "deep.http"]):
        result = invoke("fingerprint", "--silent", *args)
        assert_clean(result, (0,))
        assert json.loads(result.stdout)["features"] == 3
