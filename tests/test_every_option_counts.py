"""No option is silently ignored: the walk goes through Click's command tree, and every option of
every command either changes what the command writes (its output and the files it makes) or is
refused in one line with exit status 2, on a corpus where each option can show.

An option that cannot change a command's result by design (where the output goes, progress, the
engine the same work runs on) is listed in :data:`NOT_RESULTS` with the reason; anything else
needs a value in :data:`CHANGED`. A new option fails :func:`test_every_option_is_walked` until it
is one or the other, and a value that leaves the result as it was fails the walk.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers import options_corpus

from simdedup.cli import cli

#: options whose effect is not the result, and why
NOT_RESULTS: dict[str, str] = {
    "storage_option": "reaches an object store (tests/test_object_stores.py)",
    "engine": "where the same stages run; every engine gives the same bytes (tests/test_stages_engine.py)",
    "scheduler": "where the same stages run (tests/test_distributed.py)",
    "local_workers": "where the same stages run (tests/test_distributed.py)",
    "work_dir": "where resumable stages keep their state (tests/test_stages_engine.py)",
    "jobs": "how many processes; the output is the same at any -j (tests/test_parallel.py)",
    "silent": "progress on stderr only",
    "verbose": "messages on stderr only",
    "output": "where the result goes",
    "force": "whether an existing output may be replaced",
    "null": "how paths on stdin (or the ids written) are separated",
    "unique_out": "a second output beside the clusters (tests/test_unique.py)",
    "index_directory": "a second output: the same records added to an index (tests/test_store.py)",
    "report_path": "a second output: the report of the same clusters (tests/test_report.py)",
    "no_wait": "whether to wait for another writer of the index",
    "plot": "a second output: a picture of the same histograms",
    "bloom_capacity": "memory of the seen-set; a Bloom filter's false positives are measured in tests/test_exact.py",
    "error_rate": "the Bloom filter's false-positive rate, measured in tests/test_exact.py",
    "blocks": "the layout of Manku's tables: the same pairs at any count (tests/test_store.py)",
    "exact_first": "copies grouped by a content hash before the pair search: the same clusters, sooner",
    "verify": "index stats: checks the segments, reads nothing into the result",
    "help": "help",
}

#: option -> the changed value: a string, a flag's spelling, or True for a flag (its other side)
CHANGED: dict[str, object] = {
    "k": "0",
    "similarity": "bag",
    "min_similarity": "0.5",
    "min_resemblance": "0.6",
    "linkage": "single",
    "min_features": "40",
    "bands": "--no-bands",
    "min_score": "40",
    "singletons": True,
    "output_format": "members",
    "jsonl": True,
    "text_field": "words",
    "id_field": "id",
    "globs": "chain*",
    "excludes": "chain*",
    "min_bytes": "3000",
    "max_line_bytes": "1048576",
    "features_field": "words",
    "method": "nilsimsa",
    "sentences": "2",
    "hash_name": "md5",
    "tokenizer_name": "whitespace",
    "shingle": "2",
    "topk": "5",
    "tokenizer_options": "lowercase=false",
    "bits": "128",
    "weighting": "feature",
    "ties": "one",
    "compat": "yanyiwu",
    "sketch_bins": "0",
    "sketch_of": "features",
    "encoding": "latin-1",
    "html": True,
    "fold": "chinese",
    "cluster_files": "CLUSTERS",
    "record_format": "binary",
    "against": "AGAINST",
    "from_files": "RECORDS",
    "replace": True,
    "as_json": True,
    "top": "1",
    "max_k": "4",
    "policy": "longest",
    "kept": True,
    "threshold": "0.3",
    "max_bytes": "20000",
    "document_paths": "ELSEWHERE",
    "gold": "GOLD",
    "match": "stem",
    "unit": "sentence",
    "min_words": "400",
    "exact_only": True,
    "min_documents": "3",
    "keep": "none",
    "max_removed": "1",
    "spans_files": "SPANS_OTHER",
}


def walk(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[str, click.Command]]:
    context = click.Context(group)
    found = []
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            found += walk(command, (*path, name))
        else:
            found.append((" ".join((*path, name)), command))
    return found


def walked_options() -> list[tuple[str, str]]:
    return [
        (name, param.name)
        for name, command in walk()
        for param in command.params
        if isinstance(param, click.Option) and param.name not in NOT_RESULTS
    ]


def test_every_option_is_walked():
    """Every option of every command is either walked (a value in CHANGED) or not a result's."""
    assert len(walk()) >= 15  # the walk finds the commands at all
    unknown = {option for _, option in walked_options() if option not in CHANGED}
    assert not unknown, f"options with no changed value and no reason: {sorted(unknown)}"


# --- the corpus and what each command starts from -----------------------------------------------


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> dict[str, Path]:
    """The corpus (tests/helpers.options_corpus, with an exact copy and an upper-case copy), its
    JSON lines with given features, records, other records, clusters and two gold files."""
    root = tmp_path_factory.mktemp("walk")
    (root / "corpus").mkdir()
    corpus = options_corpus(root / "corpus")
    shutil.copy(corpus / "chain0.txt", corpus / "copy0.txt")
    shutil.copy(corpus / "latin.txt", corpus / "latin2.txt")
    (corpus / "upper1.txt").write_text((corpus / "chain1.txt").read_text().upper())
    # zh0 in traditional characters, as --fold chinese reads it
    traditional = str.maketrans(
        "这个们来国时说为会过学对后发么动两长经头见", "這個們來國時說為會過學對後發麼動兩長經頭見"
    )
    (corpus / "zhtw.txt").write_text((corpus / "zh0.txt").read_text().translate(traditional))
    given = root / "given.jsonl"
    with given.open("w") as out:
        for file in sorted(corpus.glob("*.txt")):
            text = file.read_bytes().decode("utf-8", "replace")
            out.write(json.dumps({"id": file.stem, "text": text, "words": text.split()}) + "\n")
    given_txt = shutil.copy(given, root / "given.txt")
    big = root / "big.jsonl"  # two near copies on lines over 1 MiB
    long_text = " ".join(f"w{i % 5000}" for i in range(200_000))
    big.write_text("".join(json.dumps({"text": long_text + tail}) + "\n" for tail in (" a", " b")))
    records = root / "records.jsonl"
    records.write_bytes(run("fingerprint", "--silent", corpus).stdout_bytes)
    against = root / "against.jsonl"
    against.write_bytes(run("fingerprint", "--silent", corpus / "chain2.txt").stdout_bytes)
    others = root / "others.jsonl"
    others.write_bytes(b"".join(line + b"\n" for line in records.read_bytes().splitlines() if b"chain2" not in line))
    clusters = root / "clusters.jsonl"
    clusters.write_bytes(run("dedup", "--silent", "--min-resemblance", "0.6", corpus).stdout_bytes)
    clusters_of = {}
    for name, inputs in (("GIVEN", [given]), ("GIVEN_TXT", ["--jsonl", given_txt]), ("BIG", [big])):
        made = root / f"clusters-{name}.jsonl"
        made.write_bytes(run("dedup", "--silent", "--min-resemblance", "0.6", *inputs).stdout_bytes)
        clusters_of[f"CLUSTERS_{name}"] = made
    spans_of = {}  # what `spans strip` and `spans report` read: spans of each input, every one cut
    for name, inputs in (("", [corpus]), ("_GIVEN", [given]), ("_GIVEN_TXT", ["--jsonl", given_txt]), ("_BIG", [big])):
        made = root / f"spans{name}.jsonl"
        made.write_bytes(run("spans find", "--silent", "--max-removed", "1", *inputs).stdout_bytes)
        spans_of[f"SPANS{name}"] = made
    spans_of["SPANS_OTHER"] = root / "spans-other.jsonl"
    spans_of["SPANS_OTHER"].write_bytes(
        run("spans find", "--silent", "--unit", "line", "--keep", "none", corpus).stdout_bytes
    )
    elsewhere = shutil.copytree(corpus, root / "elsewhere")
    gold, gold2 = root / "gold.jsonl", root / "gold2.jsonl"
    gold.write_text(json.dumps({"a": str(corpus / "chain0.txt"), "b": str(corpus / "chain1.txt")}) + "\n")
    gold2.write_text(json.dumps({"a": "chain0", "b": "chain1"}) + "\n")
    return {
        "ROOT": root,
        "CORPUS": corpus,
        "GIVEN": given,
        "GIVEN_TXT": given_txt,
        "BIG": big,
        "ELSEWHERE": elsewhere,
        **clusters_of,
        **spans_of,
        "RECORDS": records,
        "OTHERS": others,
        "AGAINST": against,
        "CLUSTERS": clusters,
        "GOLD": gold,
        "GOLD2": gold2,
    }


def run(command: str, *args: object):
    argv = [*command.split(), *(str(a) for a in args)]
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def _index(place: dict[str, Path], name: str, *create: str) -> Path:
    idx = place["ROOT"] / "indexes" / name
    shutil.rmtree(idx, ignore_errors=True)
    idx.parent.mkdir(exist_ok=True)
    done = run("index create", idx, "-k", "8", *create)
    assert done.exit_code == 0, done.output
    return idx


def result(command: str, option: str, extra: list[str], place: dict[str, Path], tmp: Path) -> tuple[int, bytes, str]:
    """``(exit status, what the command made, stderr)`` of the command's base run for this
    option plus ``extra``: its standard output and the files it wrote."""
    corpus, records = place["CORPUS"], place["RECORDS"]
    inputs: list[object] = [corpus]
    if option in ("text_field", "id_field", "features_field"):
        inputs = [place["GIVEN"]]
    elif option == "jsonl":  # JSON lines in a file not named so
        inputs = [place["GIVEN_TXT"]]
    elif option == "max_line_bytes":
        inputs = [place["BIG"]]
    if option in ("text_field", "id_field"):
        extra = ["--jsonl", *extra]
    made: list[Path] = []
    if command in ("fingerprint", "dedup", "exact"):
        done = run(command, "--silent", *extra, *inputs)
    elif command in ("cluster", "stats"):
        done = run(command, *extra, records)
    elif command == "explain":
        pair = {
            "encoding": ["latin.txt", "latin2.txt"],
            "html": ["page0.html", "page1.html"],
            "tokenizer_options": ["chain1.txt", "upper1.txt"],
            "ties": ["short0.txt", "short1.txt"],
            "fold": ["zh0.txt", "zhtw.txt"],
        }.get(option, ["chain0.txt", "chain1.txt"])
        if option in ("text_field", "id_field"):  # rows of JSON lines, by their FILE:LINE ids
            given = place["GIVEN"]
            done = run(command, *extra, f"{given}:1", f"{given}:2", "--documents", given)
        else:
            done = run(command, *extra, *(corpus / name for name in pair))
    elif command == "select":
        done = run(command, *extra, place["CLUSTERS"])
    elif command == "convert":
        made = [tmp / "converted"]
        done = run(command, "-o", made[0], "--to", "jsonl", *extra, records)
    elif command == "eval":
        done = run(command, "--gold", place["GOLD2"], *extra, place["CLUSTERS"])
    elif command == "report":
        made = [tmp / "report.html"]
        clusters = {
            "GIVEN": place["CLUSTERS_GIVEN"],
            "GIVEN_TXT": place["CLUSTERS_GIVEN_TXT"],
            "BIG": place["CLUSTERS_BIG"],
        }
        read = {
            name: clusters[key]
            for name, key in (
                ("text_field", "GIVEN"),
                ("id_field", "GIVEN"),
                ("features_field", "GIVEN"),
                ("jsonl", "GIVEN_TXT"),
                ("max_line_bytes", "BIG"),
            )
        }
        if option in read:
            done = run(command, read[option], "-o", made[0], "--documents", *inputs, *extra)
        else:
            documents = [] if option == "document_paths" else ["--documents", corpus]
            done = run(command, place["CLUSTERS"], "-o", made[0], *documents, *extra)
    elif command == "spans find":
        done = run(command, "--silent", *extra, *inputs)
    elif command in ("spans strip", "spans report"):
        made = [tmp / ("stripped.jsonl" if command == "spans strip" else "spans.html")]
        spans = {"text_field": "GIVEN", "id_field": "GIVEN", "jsonl": "GIVEN_TXT", "max_line_bytes": "BIG"}
        spans_file = place["SPANS" + (f"_{spans[option]}" if option in spans else "")]
        done = run(command, "--spans", spans_file, "-o", made[0], *extra, *inputs)
    elif command == "index create":
        idx = place["ROOT"] / "indexes" / tmp.name
        shutil.rmtree(idx, ignore_errors=True)
        idx.parent.mkdir(exist_ok=True)
        base = ["-k", "8"] + ([] if option == "from_files" else ["--from", records])
        done = run(command, idx, *base, *extra)
        if done.exit_code == 0:  # what the index holds and decides, and how it reads a query
            parts = [run("index stats", "--json", idx), run("index cluster", idx)]
            parts += [run("index query", idx, corpus / name) for name in ("latin.txt", "page0.html")]
            return 0, b"".join(b"%d\n%b" % (part.exit_code, part.stdout_bytes) for part in parts), ""
    elif command == "index add":
        idx = _index(place, "add")
        if option == "replace":
            assert run("index add", idx, place["OTHERS"]).exit_code == 0
        done = run(command, idx, *extra, records)
    elif command == "index cluster":
        done = run(command, _index(place, "cluster", "--from", records), *extra)
    elif command == "index query":
        idx = _index(place, "query", "--from", records)
        document = {"encoding": "latin.txt", "html": "page0.html"}.get(option, "chain0.txt")
        done = run(command, idx, *extra, corpus / document)
    elif command == "index stats":
        done = run(command, _index(place, "stats", "--from", records), *extra)
    else:
        raise AssertionError(f"the walk has no base run of {command}")
    written = b"".join(path.read_bytes() for path in made if path.exists())
    return done.exit_code, done.stdout_bytes + written, done.stderr


def changed_args(command: click.Command, option: str, place: dict[str, Path]) -> list[str]:
    param = next(p for p in command.params if p.name == option)
    value = CHANGED[option]
    if isinstance(value, str) and value.startswith("--"):
        return [value]
    if value is True:
        assert isinstance(param, click.Option) and param.is_flag
        if param.default and param.secondary_opts:
            return [param.secondary_opts[0]]
        return [param.opts[0]]
    return [param.opts[0], str(place.get(str(value), value))]


@pytest.mark.parametrize("command_name, option", walked_options())
def test_every_option_changes_the_result_or_is_refused_in_one_line(command_name, option, place, tmp_path):
    command = dict(walk())[command_name]
    if option not in CHANGED:
        pytest.fail(f"{command_name}: {option} has no changed value (test_every_option_is_walked)")
    (tmp_path / "base").mkdir()
    (tmp_path / "changed").mkdir()
    # the base run may fail where the option is what makes it work (a Latin-1 file, say)
    was_status, was, why = result(command_name, option, [], place, tmp_path / "base")
    assert was_status in (0, 1, 3), f"{command_name}'s base run for {option}: exit {was_status}\n{why}"
    args = changed_args(command, option, place)
    status, got, why = result(command_name, option, args, place, tmp_path / "changed")
    if status == 2:
        lines = why.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), f"{command_name} {args}: refused as\n{why}"
        return
    assert status in (0, 1, 3), f"{command_name} {args}: exit {status}\n{why}"
    assert (status, got) != (was_status, was), f"{command_name} {' '.join(args)}: the same result without it"
