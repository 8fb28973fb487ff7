"""`dedup` decides by one measure whatever the feature options say: the tokenizer, its options,
the --compat presets, the hash and the bits choose candidates; the texts' shingle resemblance
(tests/helpers.py, from its definition) decides every pair and is the number each member shows.

Each option set runs on seeded families (light edits, a sentence added, case changed, words
reordered, Chinese edited) of which some pairs pass and some fail; the option sets come from
the tokenizer registry and the presets, so a new tokenizer or preset is walked too.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import resemblance

from simdedup.cli import cli
from simdedup.compat import PRESETS
from simdedup.tokenizers import available_tokenizers


def option_sets() -> list[list[str]]:
    sets = [["--tokenizer", entry["name"]] for entry in available_tokenizers()]
    sets += [["--compat", name] for name in PRESETS]
    sets += [
        ["-O", "lowercase=false"],
        ["--shingle", "2"],
        ["--bits", "128"],
        ["--weighting", "feature"],
        ["--sketch-of", "features"],
        ["--tokenizer", "jieba", "--topk", "5"],
    ]
    return sets


def _families(folder: Path, seed: int) -> dict[str, tuple[str, str]]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3000)] + ["Alpha", "Beta", "Gamma"]
    han = list(  # common characters, of which jieba's keywords are made
        "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里"
        "后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长"
    )
    families = {}
    for n in range(24):
        kind = n % 6
        words = [rng.choice(vocabulary) for _ in range(rng.randint(60, 200))]
        if kind == 0:  # light edits, as many as may tip the pair either way
            edited = list(words)
            for _ in range(rng.randint(0, len(words) // 12)):
                edited[rng.randrange(len(edited))] = rng.choice(vocabulary)
            a, b = " ".join(words), " ".join(edited)
        elif kind == 1:  # a sentence added
            a = " ".join(words)
            cut = rng.randrange(len(words))
            b = " ".join(words[:cut] + [rng.choice(vocabulary) for _ in range(rng.randint(3, 30))] + words[cut:])
        elif kind == 2:  # the same text in capitals
            a = " ".join(words)
            b = a.upper()
        elif kind == 3:  # blocks of words reordered
            blocks = [words[i : i + rng.randint(5, 30)] for i in range(0, len(words), 20)]
            shuffled = list(blocks)
            rng.shuffle(shuffled)
            a, b = " ".join(w for x in blocks for w in x), " ".join(w for x in shuffled for w in x)
        else:  # Chinese, characters replaced
            chars = [rng.choice(han) for _ in range(rng.randint(80, 300))]
            edited = list(chars)
            for _ in range(rng.randint(0, len(chars) // 25)):
                edited[rng.randrange(len(edited))] = rng.choice(han)
            a, b = "".join(chars), "".join(edited)
        families[f"{n:02d}"] = (a, b)
        (folder / f"{n:02d}a.txt").write_text(a + "\n", encoding="utf-8")
        (folder / f"{n:02d}b.txt").write_text(b + "\n", encoding="utf-8")
    return families


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict[str, tuple[str, str]]]:
    folder = tmp_path_factory.mktemp("families")
    return folder, _families(folder, 41)


@pytest.mark.parametrize("options", option_sets(), ids=" ".join)
def test_dedup_measures_every_pair_exactly_whatever_the_feature_options(corpus, options):
    folder, families = corpus
    done = CliRunner().invoke(cli, ["dedup", "--silent", *options, str(folder)])
    assert done.exit_code == 0, done.stderr
    expected = {name: resemblance(a + "\n", b + "\n") for name, (a, b) in families.items()}
    together = set()
    for line in done.stdout.splitlines():
        cluster = json.loads(line)
        names = {Path(m["id"]).stem[:2] for m in cluster["members"]}
        assert len(names) == 1, f"families met: {sorted(names)}"
        name = names.pop()
        together.add(name)
        for member in cluster["members"]:
            assert "resemblance_estimate" not in member, f"{options}: {member} was estimated"
            assert member["resemblance"] == pytest.approx(
                1.0 if member["id"] == cluster["representative"] else expected[name], abs=0.0015
            )
        assert expected[name] >= 0.8, f"{options}: {name} put together at {expected[name]:.3f}"
    missed = {name for name, value in expected.items() if value >= 0.9 and name not in together}
    assert not missed, f"{options}: pairs far above the threshold missed: {missed}"
    assert together and len(together) < len(families)  # both verdicts occur


def test_dedup_without_a_sketch_is_refused_in_one_line(corpus):
    """No sketch, no measure: the distance alone would decide, so dedup says so and stops."""
    folder, _ = corpus
    done = CliRunner().invoke(cli, ["dedup", "--silent", "--sketch", "0", str(folder)])
    assert done.exit_code == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "--sketch 0" in lines[0]


def _html_pair(folder: Path, name: str, a: str, b: str) -> tuple[Path, Path]:
    """The pair as HTML pages whose markup differs much more than their text."""
    rng = random.Random(name)
    pa, pb = folder / f"{name}a.html", folder / f"{name}b.html"
    noise = " ".join(f'<span class="c{rng.randrange(10**6)}">x{i}</span>' for i in range(60))
    pa.write_text(f"<html><head><style>{noise}</style></head><body><p>{a}</p></body></html>\n")
    pb.write_text(f"<html><head><script>var s = {rng.random()};</script></head><body><div>{b}</div></body></html>\n")
    return pa, pb


@pytest.mark.parametrize(
    "options",
    [[], ["--html"], ["--similarity", "bag"], ["--sketch-of", "features"], ["--similarity", "combined"]],
    ids=lambda o: " ".join(o) or "defaults",
)
def test_explain_says_what_dedup_and_cluster_decide(corpus, tmp_path, options):
    """explain's two verdicts are what dedup and fingerprint | cluster do with the same two
    documents and options (or cluster's refusal), and the number it shows for dedup is the one
    on dedup's cluster line."""
    folder, families = corpus
    runner = CliRunner()
    for name in sorted(families)[::4]:
        a, b = folder / f"{name}a.txt", folder / f"{name}b.txt"
        if "--html" in options:
            a, b = _html_pair(tmp_path, name, *families[name])
        told = runner.invoke(cli, ["explain", "--json", *options, str(a), str(b)])
        assert told.exit_code == 0, told.stderr
        said = json.loads(told.stdout)
        dedup = runner.invoke(cli, ["dedup", "--silent", *options, str(a), str(b)])
        assert dedup.exit_code == 0, dedup.stderr
        assert said["near_duplicates"] == bool(dedup.stdout.strip()), (name, options, said)
        if dedup.stdout.strip():
            member = next(m for m in json.loads(dedup.stdout)["members"] if m["distance"] > 0 or m["id"] == str(b))
            measure = said["measure"]
            if member["id"] != json.loads(dedup.stdout)["representative"]:
                assert member[measure] == said[measure], (name, options)
        feature_options = [o for o in options if o not in ("--similarity", "bag", "combined")]
        records = runner.invoke(cli, ["fingerprint", "--silent", *feature_options, str(a), str(b)]).stdout
        decision = [o for o in options if o in ("--similarity", "bag", "combined")]
        clustered = runner.invoke(cli, ["cluster", *decision], input=records)
        if clustered.exit_code == 2:
            assert said["cluster_refuses"] and said["near_duplicates_estimated"] is None, (name, options)
        else:
            assert clustered.exit_code == 0, clustered.stderr
            assert said["near_duplicates_estimated"] == bool(clustered.stdout.strip()), (name, options, said)
