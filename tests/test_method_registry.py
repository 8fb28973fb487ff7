"""A method added by one module and one registration (README, "Where to add things") works
everywhere the built-in ones do: the --method choice, the record format (its value field and
widths), reading records back, and the decision rules (how k is chosen for it)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import xxhash
from click.testing import CliRunner
from helpers import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdedup import method_registry
from simdedup.cli import cli
from simdedup.errors import SimdedupError
from simdedup.method_registry import MethodSpec, register_method
from simdedup.options import ClusterOptions

NAMES = st.from_regex(r"[a-z][a-z0-9]{2,10}", fullmatch=True).filter(lambda n: n not in method_registry.BUILTIN)


@st.composite
def specs(draw):
    name = draw(NAMES)
    field = draw(st.sampled_from([name, f"{name}_value", "digest"]))
    widths = draw(st.sampled_from([(64,), (128,), (64, 128)]))
    kind = draw(st.sampled_from(["distance", "exact", "score"]))
    return MethodSpec(
        name,
        "method_plugin:make",
        field,
        widths,
        f"{name} of the whole text",
        min_features=draw(st.booleans()),
        exact_only=f"{name} values" if kind == "exact" else None,
        min_score=draw(st.integers(0, 30)) if kind == "score" else None,
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=specs())
def test_a_registered_method_fingerprints_reads_back_and_clusters(spec, tmp_path_factory, monkeypatch):
    monkeypatch.setattr(method_registry, "_registry", None)
    monkeypatch.setenv("SIMDEDUP_LOAD_PLUGINS", "")  # installed plugins do not take part
    register_method(spec)
    bits = spec.widths[-1]
    runner = CliRunner()
    fingerprinted = runner.invoke(
        cli,
        [
            "fingerprint",
            "--silent",
            "-j",
            "1",
            "--method",
            spec.name,
            "--bits",
            str(bits),
            str(REPO / "examples" / "en"),
        ],
    )
    assert fingerprinted.exit_code == 0, fingerprinted.output
    lines = fingerprinted.stdout.splitlines()
    records = [json.loads(line) for line in lines]
    assert records and all(r["method"] == spec.name and len(r[spec.value_field]) == bits // 4 for r in records)
    work = tmp_path_factory.mktemp("records")
    (work / "fp.jsonl").write_text(fingerprinted.stdout, encoding="utf-8")
    # exact copies share the value whatever the method, so whatever k it resolves to, they cluster
    (work / "copy.jsonl").write_text(lines[0].replace(records[0]["id"], "copy-of-first", 1) + "\n", encoding="utf-8")
    clustered = runner.invoke(cli, ["cluster", "--singletons", str(work / "fp.jsonl"), str(work / "copy.jsonl")])
    assert clustered.exit_code == 0, clustered.output
    clusters = [json.loads(line) for line in clustered.stdout.splitlines()]
    assert sum(c["size"] for c in clusters) == len(records) + 1
    assert any({m["id"] for m in c["members"]} >= {records[0]["id"], "copy-of-first"} for c in clusters)
    resolved = ClusterOptions().resolve(bits, False, spec.name)
    if spec.exact_only:
        assert resolved.k == 0
        with pytest.raises(ValueError, match=spec.exact_only):
            ClusterOptions(k=1).resolve(bits, False, spec.name)
    elif spec.min_score is not None:
        assert resolved.k == bits // 2 - spec.min_score
    else:
        assert resolved.k == ClusterOptions.DEFAULT_K_PLAIN * bits // 64
    assert resolved.min_features == (ClusterOptions().min_features if spec.min_features else 0)


def test_a_record_of_an_unregistered_method_is_refused(tmp_path):
    bad = tmp_path / "fp.jsonl"
    bad.write_text('{"id":"a","method":"nosuch","nosuch":"00","bits":8}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["cluster", str(bad)])
    assert result.exit_code == 1 and "unknown method 'nosuch'" in result.output


#: a method plugin as a package installs it: one module, and a dist-info naming its spec in the
#: simdedup.methods entry points; its own option, --salt, seeds the hash of the whole text
SALTED = """
import xxhash
import click
from simdedup.fingerprints import FingerprintRecord
from simdedup.method_registry import MethodOption, MethodSpec
from simdedup.methods import Method
from simdedup.read import text_chunks


class Salted(Method):
    def __init__(self, salt, encoding):
        self.salt, self.encoding, self.bits = salt, encoding, 64

    @property
    def settings(self):
        return {"method": "salted", "options": {"salt": self.salt}, "bits": 64}

    def record(self, document):
        chunks = text_chunks(document.text) if document.text is not None else document.reader
        data = "".join(chunks).encode("utf-8")
        value = xxhash.xxh3_64_intdigest(data, seed=self.salt)
        return FingerprintRecord(document.id, value, 64, 1, self.settings, len(data))


def make(*, salt, encoding, **_):
    return Salted(salt, encoding)


SPEC = MethodSpec(
    "salted",
    "salted_plugin:make",
    "salted",
    (64,),
    "hash of the whole text, salted",
    exact_only="salted hashes",
    options=(MethodOption("salt", 11, "seed of the hash.", click.IntRange(0, 1000)),),
)
"""


def _install_salted(root):
    (root / "salted_plugin.py").write_text(SALTED, encoding="utf-8")
    dist_info = root / "salted_plugin-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: salted-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[simdedup.methods]\nsalted = salted_plugin:SPEC\n")
    path = os.pathsep.join([str(root), str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**os.environ, "PYTHONPATH": path, "SIMDEDUP_LOAD_PLUGINS": "salted", "PYTHONDONTWRITEBYTECODE": "1"}


def test_a_method_plugins_own_option_is_on_the_command_line_and_reaches_it(tmp_path):
    env = _install_salted(tmp_path)
    document = REPO / "examples" / "en" / "lighthouses.txt"
    data = document.read_bytes()

    def simdedup(*args):
        return subprocess.run(
            [sys.executable, "-m", "simdedup", *map(str, args)], env=env, capture_output=True, text=True, timeout=120
        )

    for command in ("fingerprint", "dedup", "explain"):
        shown = simdedup(command, "--help")
        assert shown.returncode == 0, shown.stderr
        assert re.search(r"--salt N\s+--method salted: seed of the hash\.\s+\[default:\s+11\]", shown.stdout)
    for salting, salt in (((), 11), (("--salt", "5"), 5)):
        done = simdedup("fingerprint", "--method", "salted", *salting, document)
        assert done.returncode == 0, done.stderr
        record = json.loads(done.stdout)
        assert record["options"] == {"salt": salt}
        assert int(record["salted"], 16) == xxhash.xxh3_64_intdigest(data, seed=salt)
    wrong = simdedup("fingerprint", "--method", "salted", "--salt", "1001", document)
    assert wrong.returncode == 2 and "--salt" in wrong.stderr and "Traceback" not in wrong.stderr
    unexplained = simdedup("explain", "--method", "salted", document, document)
    assert unexplained.returncode == 2 and "use --method simhash or nilsimsa" in unexplained.stderr


def test_a_work_dir_does_not_depend_on_the_method_plugins_installed(tmp_path):
    """A staged run records the options of its method only: one made with a method plugin
    installed resumes without it, and gives the same output."""
    (tmp_path / "plugin").mkdir()
    env = _install_salted(tmp_path / "plugin")
    without = {**env, "SIMDEDUP_LOAD_PLUGINS": ""}
    command = [sys.executable, "-m", "simdedup", "dedup", "--engine", "stages", "-j", "1", "-k", "8"]
    command += ["--work-dir", str(tmp_path / "work"), str(REPO / "examples" / "en")]
    runs = [subprocess.run(command, env=e, capture_output=True, text=True, timeout=300) for e in (env, without)]
    assert [run.returncode for run in runs] == [0, 0], runs[1].stderr
    assert runs[0].stdout == runs[1].stdout != ""


def command_line_feature_defaults() -> dict:
    """The feature options at their defaults, by parameter name: what a command given none of
    them uses."""
    import click

    from simdedup.cli_options import feature_options

    command = click.Command("features", params=feature_options(lambda: None).__click_params__)
    return command.make_context("features", []).params


def test_method_options_and_feature_defaults_are_declared_once():
    from simdedup.cli_options import feature_options_of
    from simdedup.method_registry import FEATURE_DEFAULTS
    from simdedup.methods import make_method
    from simdedup.options import FeatureOptions

    shown = command_line_feature_defaults()
    assert feature_options_of(dict(shown)) == FeatureOptions() == FeatureOptions.of()
    for name, default in FEATURE_DEFAULTS.items():
        assert getattr(FeatureOptions(), name) == default
    sentences = method_registry.BUILTIN["sentences"].options
    assert [(o.name, o.default) for o in sentences] == [("sentences", shown["sentences"])]
    assert make_method("sentences").settings["options"] == {"n": sentences[0].default}
    with pytest.raises(SimdedupError, match="method simhash has no option 'sentences'"):
        make_method("simhash", sentences=2)
