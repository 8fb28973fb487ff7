"""A method added by one module and one registration (README, "Where to add things") works
everywhere the built-in ones do: the --method choice, the record format (its value field and
widths), reading records back, and the decision rules (how k is chosen for it)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from helpers import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdedup import method_registry
from simdedup.cli import cli
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
