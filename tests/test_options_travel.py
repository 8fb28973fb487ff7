"""Options travel whole: each field of :class:`ClusterOptions` and :class:`FeatureOptions`,
changed alone, changes the output of every path that takes it, and every path gives the same
output: the command line in one process, the Python API, the staged engine on worker processes
(``--engine stages``), Dask (``--engine dask``) and the persistent index (``index create
--from`` then ``index cluster``; ``index create`` then ``index add``).

A field added to either class fails :func:`test_every_field_has_a_case` until it has a case
here, and a path that forgets it fails the walk. What a path cannot take yet is listed in
:data:`NOT_TAKEN` with its reason; the walk fails when such a path starts taking the field, so
that the list shrinks as the paths catch up.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import options_corpus

import simdedup
from simdedup.cli import cli
from simdedup.options import RESOLVED_FIELDS, ClusterOptions, FeatureOptions

distributed = pytest.importorskip("distributed")

#: each field's case: the options every run of the case shares (where the field shows on the
#: corpus; every run gives a k, which the staged engines and the index need) and the changed value
CLUSTER_CASES: dict[str, tuple[dict, object]] = {
    "k": ({"k": 8}, 3),
    "min_similarity": ({"k": 8, "similarity": "bag"}, 0.95),
    "linkage": ({"k": 8}, "single"),
    "min_features": ({"k": 8}, 40),
    "singletons": ({"k": 8}, True),
    "min_score": ({"k": None}, 40),  # of nilsimsa records, k = 128 - min_score
    "similarity": ({"k": 8}, "bag"),
    "min_resemblance": ({"k": 8}, 0.7),
    "bands": ({"k": 3}, True),
    "output_format": ({"k": 8}, "members"),
}
#: the options the records of a case are made with: nilsimsa for its score, sketches of features
#: for the options of the bag (sketches of shingles estimate the resemblance)
RECORD_ARGS = {
    "min_score": ["--method", "nilsimsa"],
    "min_similarity": ["--sketch-of", "features"],
    "min_features": ["--sketch-of", "features"],
    "similarity": ["--sketch-of", "features"],
}
#: the command-line option of each field (None: none; a flag when the value is True)
CLUSTER_FLAGS = {
    "k": "-k",
    "min_similarity": "--min-similarity",
    "linkage": "--linkage",
    "min_features": "--min-features",
    "singletons": "--singletons",
    "min_score": "--min-score",
    "similarity": "--similarity",
    "min_resemblance": "--min-resemblance",
    "bands": "--bands",
    "output_format": "--format",
}

FEATURE_CASES: dict[str, tuple[dict, object]] = {
    "method": ({}, "nilsimsa"),
    "tokenizer": ({}, "whitespace"),
    "tokenizer_options": ({}, (("shingle", 2),)),
    "bits": ({}, 128),
    "hash_name": ({}, "md5"),
    "weighting": ({}, "feature"),
    "ties": ({"tokenizer": "whitespace", "weighting": "feature"}, "one"),
    "sketch_bins": ({}, 64),
    "sketch_of": ({}, "features"),
    "encoding": ({}, "latin-1"),
    "html": ({}, True),
    "fold": ({}, "chinese"),
    "given_features": ({}, True),
    "method_options": ({"method": "sentences"}, (("sentences", 2),)),
}

#: (field, path): why that path does not take the field yet
NOT_TAKEN: dict[tuple[str, str], str] = {
    ("bands", "index"): "an index searches within k only",
    ("bands", "index add"): "an index searches within k only",
    ("output_format", "api"): "the Python API returns lists of ids",
    ("min_score", "stages"): "the staged engines cluster simhash fingerprints",
    ("min_score", "dask"): "the staged engines cluster simhash fingerprints",
    ("min_score", "index"): "index create takes -k, not --min-score",
    ("min_score", "index add"): "index create takes -k, not --min-score",
    ("given_features", "index"): "an index of given features takes its settings from the records (--from)",
}
#: (field, family): the field changes nothing there, on purpose
NO_EFFECT: dict[tuple[str, str], str] = {
    ("min_features", "dedup"): "texts measured exactly pair by the measure, however short",
    (
        "similarity",
        "cluster",
    ): "sketches of features estimate the bag, which decides whatever the measure (with a note)",
}


def test_every_field_has_a_case():
    """A new field of either options class needs a case here (and a path that forgets it
    fails the walk below)."""
    assert {f.name for f in fields(ClusterOptions)} - set(RESOLVED_FIELDS) == set(CLUSTER_CASES)
    assert {f.name for f in fields(FeatureOptions)} == set(FEATURE_CASES)


# --- the corpus ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return options_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def features_file(tmp_path_factory, corpus) -> Path:
    """The corpus as JSON lines with the text and its words as given features."""
    path = tmp_path_factory.mktemp("given") / "given.jsonl"
    with path.open("w") as out:
        for file in sorted(corpus.glob("*.txt")):
            text = file.read_bytes().decode("utf-8", "replace")
            out.write(json.dumps({"id": file.stem, "text": text, "words": text.split()}) + "\n")
    return path


# --- running a path -----------------------------------------------------------------------------


def run(*args: object, refusable: bool = False) -> bytes | str:
    """The command's output; with ``refusable``, a usage error's message instead."""
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    if refusable and result.exit_code == 2:
        return result.stderr
    assert result.exit_code in (0, 3), (args, result.output)
    return result.stdout_bytes


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as one:
        yield one.scheduler_address


def _engine(path: str, scheduler: str, work: Path) -> list[str]:
    if path == "stages":
        return ["--engine", "stages", "--work-dir", work]
    return ["--engine", "dask", "--scheduler", scheduler, "--work-dir", work]


def _members(output: bytes) -> list[list[str]]:
    """Cluster lines as the Python API gives them: ids, the representative first."""
    lines = [json.loads(line) for line in output.splitlines()]
    return [[c["representative"], *(m["id"] for m in c["members"] if m["id"] != c["representative"])] for c in lines]


def _without_new(output: bytes) -> bytes:
    """``index add``'s lines without the members' ``new`` (every member is new here)."""
    out = []
    for line in output.splitlines():
        record = json.loads(line)
        for member in record.get("members", []):
            member.pop("new", None)
        record.pop("new", None)
        out.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return "".join(f"{line}\n" for line in out).encode()


def cluster_args(options: ClusterOptions) -> list[str] | None:
    """The command-line options that give ``options`` (None: some field has no option)."""
    args: list[str] = []
    for name, flag in CLUSTER_FLAGS.items():
        value = getattr(options, name)
        if value == getattr(ClusterOptions(), name):
            continue
        if flag is None:
            return None
        args += [flag] if value is True else [flag, str(value)]
    return args


def cluster_outputs(
    corpus: Path, tmp: Path, scheduler: str, options: ClusterOptions, record_args: list[str]
) -> dict[str, object]:
    """The clusters of the corpus' records (made with ``record_args``) by every path."""
    from simdedup.options import LINKING_FIELDS

    records = tmp / "fp.jsonl"
    tmp.mkdir()
    records.write_bytes(run("fingerprint", "--silent", *record_args, corpus))
    outputs: dict[str, object] = {"api": simdedup.cluster([str(records)], options)}
    args = cluster_args(options)
    if args is None:
        return outputs
    outputs["cli"] = run("cluster", records, *args)
    for path in ("stages", "dask"):
        outputs[path] = run("cluster", *_engine(path, scheduler, tmp / f"work-{path}"), records, *args, refusable=True)
    linking = cluster_args(ClusterOptions(**{name: getattr(options, name) for name in LINKING_FIELDS}))
    fixed = cluster_args(options.linking_as(ClusterOptions()))
    assert linking is not None and fixed is not None
    created = run("index", "create", tmp / "idx", "--from", records, *fixed, refusable=True)
    outputs["index"] = created if isinstance(created, str) else run("index", "cluster", tmp / "idx", *linking)
    created = run("index", "create", tmp / "idx-add", *record_args, *fixed, refusable=True)
    outputs["index add"] = (
        created if isinstance(created, str) else _without_new(run("index", "add", tmp / "idx-add", records, *linking))
    )
    return outputs


@pytest.mark.parametrize("name", sorted(CLUSTER_CASES))
def test_each_cluster_option_reaches_every_path(name, corpus, tmp_path, scheduler):
    base, value = CLUSTER_CASES[name]
    records = RECORD_ARGS.get(name, [])
    got = cluster_outputs(corpus, tmp_path / "changed", scheduler, ClusterOptions(**{**base, name: value}), records)
    was = cluster_outputs(corpus, tmp_path / "default", scheduler, ClusterOptions(**base), records)
    compare(name, value, got, was, "cluster")


def dedup_outputs(
    corpus: Path, tmp: Path, scheduler: str, options: ClusterOptions, record_args: list[str]
) -> dict[str, object]:
    """The clusters of the corpus by every path of ``dedup`` (texts measured exactly), records
    made with ``record_args``."""
    tmp.mkdir()
    features = {"method": record_args[1]} if record_args[:1] == ["--method"] else {}
    features |= {"sketch_of": record_args[1]} if record_args[:1] == ["--sketch-of"] else {}
    outputs: dict[str, object] = {"api": simdedup.dedup([str(corpus)], options=options, **features)}
    args = cluster_args(options)
    if args is None:
        return outputs
    outputs["cli"] = run("dedup", "--silent", *record_args, corpus, *args)
    for path in ("stages", "dask"):
        engine = _engine(path, scheduler, tmp / f"work-{path}")
        outputs[path] = run("dedup", "--silent", *engine, *record_args, corpus, *args, refusable=True)
    return outputs


@pytest.mark.parametrize("name", sorted(CLUSTER_CASES))
def test_each_cluster_option_reaches_every_path_of_dedup(name, corpus, tmp_path, scheduler):
    base, value = CLUSTER_CASES[name]
    records = RECORD_ARGS.get(name, [])
    got = dedup_outputs(corpus, tmp_path / "changed", scheduler, ClusterOptions(**{**base, name: value}), records)
    was = dedup_outputs(corpus, tmp_path / "default", scheduler, ClusterOptions(**base), records)
    compare(name, value, got, was, "dedup")


def compare(name: str, value: object, got: dict[str, object], was: dict[str, object], family: str) -> None:
    """Every path gives what the reference path (the command line, else the Python API) gives,
    and the field changes that, unless listed (:data:`NOT_TAKEN`, :data:`NO_EFFECT`)."""
    reference = "cli" if "cli" in got else "api"
    for path, output in got.items():
        if (name, path) in NOT_TAKEN:
            taken = not isinstance(output, str) and output != was[path]
            assert not taken, f"{family}: {path} takes {name} now: remove it from NOT_TAKEN"
            continue
        clusters = family != "fingerprint" and path == "api" and reference == "cli"
        expected = _members(got[reference]) if clusters else got[reference]  # type: ignore[arg-type]
        assert not isinstance(output, str), f"{family}: {path} refuses {name}={value!r}: {output}"
        assert output == expected, f"{family}: {path} differs from {reference} with {name}={value!r}"
    if (name, family) in NO_EFFECT:
        assert got[reference] == was[reference], f"{name} changes {family} now: remove it from NO_EFFECT"
    else:
        assert got[reference] != was[reference], f"{family}: {name}={value!r} changes nothing on the corpus"


# --- feature options ----------------------------------------------------------------------------

#: the command-line options that give each feature field's changed value
FEATURE_ARGS = {
    "method": ["--method", "nilsimsa"],
    "tokenizer": ["--tokenizer", "whitespace"],
    "tokenizer_options": ["--shingle", "2"],
    "bits": ["--bits", "128"],
    "hash_name": ["--hash", "md5"],
    "weighting": ["--weighting", "feature"],
    "ties": ["--ties", "one"],
    "sketch_bins": ["--sketch", "64"],
    "sketch_of": ["--sketch-of", "features"],
    "encoding": ["--encoding", "latin-1"],
    "html": ["--html"],
    "fold": ["--fold", "chinese"],
    "given_features": ["--features-field", "words"],
    "method_options": ["--sentences", "2"],
}
#: the command-line options of a case's shared options
FEATURE_BASE_ARGS = {"tokenizer": "--tokenizer", "weighting": "--weighting", "method": "--method"}


def fingerprint_outputs(
    corpus: Path, given: Path, tmp: Path, scheduler: str, features: FeatureOptions, args: list[str]
) -> dict[str, object]:
    """The records of the corpus (of ``given``'s JSON lines with given features) by every
    path, and the clusters an index made with these options gives of them."""
    from simdedup.read import FeaturesField, Inputs

    tmp.mkdir()
    source = given if features.given_features else corpus
    inputs = Inputs(id_field="id", text_field=FeaturesField("words")) if features.given_features else Inputs()
    if source == given:
        inputs.id_field = "id"
        args = [*args, "--id-field", "id"]
    records = simdedup.fingerprint([str(source)], features=features, inputs=inputs)
    outputs: dict[str, object] = {"api": "".join(r.to_json() + "\n" for r in records).encode()}
    outputs["cli"] = run("fingerprint", "--silent", *args, source)
    for path in ("stages", "dask"):
        engine = _engine(path, scheduler, tmp / f"work-{path}")
        outputs[path] = run("fingerprint", "--silent", *engine, *args, source, refusable=True)
    k = ["-k", "0" if features.method == "sentences" else "3"]  # sentence signatures match exactly
    # how documents are read is fingerprint --index's to say, not the index's
    reading = {"--id-field": 2, "--encoding": 2, "--html": 1}  # how many arguments each takes
    creating, at = [], 0
    while at < len(args):
        if args[at] in reading:
            at += reading[args[at]]
            continue
        creating.append(args[at])
        at += 1
    made = run("index", "create", tmp / "idx", *k, *creating, refusable=True)
    if isinstance(made, str):
        outputs["index"] = made
    else:
        run("fingerprint", "--silent", *args, "--index", tmp / "idx", source)
        records_file = tmp / "fp.jsonl"
        records_file.write_bytes(outputs["cli"])  # type: ignore[arg-type]
        expected = run("cluster", *k, "--singletons", records_file)
        clustered = run("index", "cluster", "--singletons", tmp / "idx")
        outputs["index"] = outputs["cli"] if clustered == expected else clustered
    return outputs


@pytest.mark.parametrize("name", sorted(FEATURE_CASES))
def test_each_feature_option_reaches_every_path(name, corpus, features_file, tmp_path, scheduler):
    base, value = FEATURE_CASES[name]
    base_args = [arg for key, v in base.items() for arg in (FEATURE_BASE_ARGS[key], str(v))]
    got = fingerprint_outputs(
        corpus,
        features_file,
        tmp_path / "changed",
        scheduler,
        FeatureOptions(**{**base, name: value}),
        base_args + FEATURE_ARGS[name],
    )
    was = fingerprint_outputs(corpus, features_file, tmp_path / "default", scheduler, FeatureOptions(**base), base_args)
    compare(name, value, got, was, "fingerprint")
