"""The locale changes nothing: the same files give byte-identical fingerprints, clusters and drop
lists under a UTF-8 locale, the C locale and locales of other encodings (ISO-8859-1, GBK,
EUC-JP), whatever bytes the file names hold, named in a folder, as arguments or on stdin, at
``-j 1`` and ``-j 2``; and every name in a drop list is a file's own bytes.

Python reads names and arguments in the locale's encoding unless in UTF-8 mode, so under
zh_CN.GBK ``副本.txt`` (UTF-8 bytes) became the id ``鍓湰.txt``. The locales are compiled for
the test with ``localedef`` into a folder of its own (``LOCPATH``); the names are generated
(further seeds in ``make fuzz``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FUZZ_ONLY, fuzz_folders, near_copy, words

#: (source, charmap): locales whose encoding is not UTF-8, each quick to compile
LOCALES = [("en_US", "ISO-8859-1"), ("zh_CN", "GBK"), ("ja_JP", "EUC-JP")]
#: pieces of file names: text, written as its UTF-8 bytes, and bytes that are not UTF-8
TEXT_PIECES = ["文档", "副本", "café", "naïve", "日本語", "Ωμέγα", "😀", "plain", "a b", "中文-新闻"]
BYTE_PIECES = ["été".encode("latin-1"), "中文".encode("gbk"), "日本".encode("euc-jp"), b"\xff\xfe", b"\x80"]


@pytest.fixture(scope="module")
def locales(tmp_path_factory) -> tuple[Path, list[str]]:
    """LOCPATH with the locales compiled, and their names."""
    if shutil.which("localedef") is None or not Path("/usr/share/i18n/locales/zh_CN").exists():
        pytest.skip("needs localedef and the locale sources (Debian's locales package)")
    folder = tmp_path_factory.mktemp("locales")
    names = []
    for source, charmap in LOCALES:
        name = f"{source}.{charmap}"
        subprocess.run(["localedef", "-i", source, "-f", charmap, str(folder / name)], check=True, capture_output=True)
        names.append(name)
    return folder, names


def _corpus(root: Path, seed: int) -> list[bytes]:
    """Files with generated names under root/c (bytes paths); near copies among them."""
    rng = random.Random(seed)
    folder = os.fsencode(root / "c")
    os.mkdir(folder)
    bases = [words(seed * 10 + i, 120) for i in range(3)]
    made: list[bytes] = []
    while len(made) < 16:
        pieces = [rng.choice([*map(str.encode, TEXT_PIECES), *BYTE_PIECES]) for _ in range(rng.randint(1, 3))]
        name = b"-".join(pieces) + rng.choice([b".txt", b""])
        if name in made:
            continue
        base = bases[len(made) % 3]
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write((base if rng.random() < 0.3 else near_copy(base)).encode())
        made.append(name)
    return [os.path.join(b"c", name) for name in made]


def _run(root: Path, env: dict[str, str], *args: str | bytes, stdin: bytes | None = None) -> bytes:
    result = subprocess.run(
        [sys.executable, "-m", "simdedup", *args], cwd=root, env=env, input=stdin, capture_output=True, timeout=120
    )
    assert result.returncode == 0, (env.get("LANG"), args, result.stderr.decode("utf-8", "replace"))
    return result.stdout


def _outputs(root: Path, env: dict[str, str], paths: list[bytes]) -> dict[str, bytes]:
    clusters = _run(root, env, "dedup", "-j", "1", "c")
    return {
        "fingerprint c": _run(root, env, "fingerprint", "-j", "1", "c"),
        "fingerprint NAMES": _run(root, env, "fingerprint", "-j", "1", *sorted(paths)),
        "dedup -j 1 c": clusters,
        "dedup -j 2 -0 -": _run(root, env, "dedup", "-j", "2", "-0", "-", stdin=b"\0".join(paths)),
        "select -0": _run(root, env, "select", "-0", stdin=clusters),
    }


@pytest.mark.parametrize("seed", [1])
def test_every_locale_gives_the_same_output(locales, tmp_path, seed):
    locpath, names = locales
    paths = _corpus(tmp_path, seed)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONUTF8"))}
    expected = _outputs(tmp_path, {**base, "LC_ALL": "C.UTF-8"}, paths)
    assert expected["dedup -j 1 c"], "the corpus plants near copies"
    dropped = [name for name in expected["select -0"].split(b"\0") if name]
    assert dropped and all(os.path.isfile(tmp_path / os.fsdecode(name)) for name in dropped)
    assert set(dropped) <= set(paths)  # a name's own bytes, not the locale's reading of them
    ids = [json.loads(line)["id"] for line in expected["fingerprint c"].splitlines()]
    assert sorted(i.encode("utf-8", "surrogateescape") for i in ids) == sorted(paths)
    for locale in ["C", *names]:
        env = {**base, "LOCPATH": str(locpath), "LANG": locale, "LC_ALL": locale}
        got = _outputs(tmp_path, env, paths)
        for command in expected:
            assert got[command] == expected[command], (locale, command)


@FUZZ_ONLY
def test_every_locale_gives_the_same_output_fuzzed(locales, tmp_path):
    for folder, seed in fuzz_folders(tmp_path):
        test_every_locale_gives_the_same_output(locales, folder, seed)
