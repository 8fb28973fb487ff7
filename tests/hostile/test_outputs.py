"""Writing outputs as a hostile user tries them: inputs named as outputs, planted links, look-alike
names, pipes read once, devices, full disks, closed and shared stdouts.

Everything runs the installed ``simdedup`` in real processes, on real files, pipes and devices.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shlex
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdedup.errors import SimdedupError
from simdedup.unique import target_name, target_names

SIMDEDUP = Path(sys.executable).parent / "simdedup"
SIM = shlex.quote(str(SIMDEDUP))
BASH = shutil.which("bash")
ROOT = os.geteuid() == 0

pytestmark = [
    pytest.mark.skipif(not SIMDEDUP.exists(), reason=f"console script {SIMDEDUP} not installed"),
    pytest.mark.skipif(BASH is None, reason="bash not found"),
]

ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "SIMDEDUP_LOAD_PLUGINS": ""}


def run(
    *args, cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, preexec_fn=None, timeout=60
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SIMDEDUP), *map(str, args)],
        cwd=cwd,
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=preexec_fn,
        timeout=timeout,
        env=ENV,
    )


def sh(command: str, cwd, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run(command, shell=True, executable=BASH, cwd=cwd, capture_output=True, timeout=timeout, env=ENV)


def assert_refused(result: subprocess.CompletedProcess, status: int, *words: str) -> None:
    """Exit ``status`` with one error line on stderr (besides warnings) that contains ``words``."""
    err = result.stderr.decode()
    assert result.returncode == status, err
    errors = [line for line in err.splitlines() if line and not line.startswith("simdedup: warning:")]
    assert len(errors) == 1, err
    assert "Traceback" not in err and "a bug" not in err
    for word in words:
        assert word in errors[0], err


def words(seed: int, n: int = 200) -> str:
    r = random.Random(seed)
    return " ".join(f"w{r.randrange(5000)}" for _ in range(n))


def tree(root: Path) -> dict[str, object]:
    """Every entry under ``root``: file contents, link targets, directories."""
    entries: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            entries[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            entries[rel] = "dir"
        else:
            entries[rel] = path.read_bytes()
    return entries


def leftovers(root: Path) -> list[str]:
    return [str(p) for p in root.rglob(".simdedup-*")]


@pytest.fixture
def corpus(tmp_path):
    """corpus/ with a near-duplicate pair and three other documents."""
    d = tmp_path / "corpus"
    d.mkdir()
    base = words(1)
    (d / "a.txt").write_text(base)
    (d / "a-copy.txt").write_text(base.replace(base.split()[50], "changed", 1))
    for seed in (2, 3, 4):
        (d / f"other-{seed}.txt").write_text(words(seed))
    return d


# --- 1. an output never replaces an input ---------------------------------------------------


def _output_target(victim: Path, how: str, where: Path) -> Path:
    """``victim`` itself, or a new symbolic or hard link to it in ``where`` (named like it)."""
    if how == "same":
        return victim
    target = where / f"{how}-{victim.name}"
    if how == "symlink":
        target.symlink_to(victim)
    else:
        os.link(victim, target)
    return target


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize("command", ["fingerprint", "exact", "dedup", "cluster", "convert"])
def test_force_never_lets_o_replace_a_named_input(tmp_path, corpus, command, how):
    if command in ("cluster", "convert"):
        victim = tmp_path / "fp.jsonl"
        victim.write_bytes(run("fingerprint", "--silent", corpus, cwd=tmp_path).stdout)
    else:
        victim = corpus / "a.txt"
    before = victim.read_bytes()
    target = _output_target(victim, how, tmp_path)
    extra = ["--to", "jsonl"] if command == "convert" else []
    result = run(command, *extra, "--force", "-o", target, victim, cwd=tmp_path)
    assert_refused(result, 2, "input")
    assert victim.read_bytes() == before
    assert target.is_symlink() == (how == "symlink")
    assert not leftovers(tmp_path)


def test_force_never_lets_o_replace_the_input_on_stdin(tmp_path, corpus):
    fp = tmp_path / "fp.jsonl"
    fp.write_bytes(run("fingerprint", "--silent", corpus, cwd=tmp_path).stdout)
    before = fp.read_bytes()
    with open(fp, "rb") as stdin:
        result = run("cluster", "--force", "-o", fp, stdin=stdin, cwd=tmp_path)
    assert_refused(result, 2, "input")
    assert fp.read_bytes() == before


@pytest.mark.parametrize("how", ["inside", "hardlink", "linked-directory", "path-list"])
@pytest.mark.parametrize("command", ["fingerprint", "exact", "dedup"])
def test_force_never_lets_o_replace_an_input_found_in_a_walk(tmp_path, corpus, command, how):
    victim = corpus / "other-2.txt"
    before = victim.read_bytes()
    args = [command, "--silent", "--force", "-o"]
    if how == "inside":
        result = run(*args, victim, "corpus", cwd=tmp_path)
    elif how == "hardlink":
        os.link(victim, tmp_path / "out.txt")
        result = run(*args, "out.txt", "corpus", cwd=tmp_path)
    elif how == "linked-directory":  # the walk reaches the victim through a link the output does not name
        (tmp_path / "walked").mkdir()
        (tmp_path / "walked" / "link").symlink_to(corpus)
        result = run(*args, victim, "walked", cwd=tmp_path)
    else:
        with open(tmp_path / "list.txt", "w") as handle:
            handle.write("corpus/a.txt\ncorpus/other-2.txt\n")
        with open(tmp_path / "list.txt") as stdin:
            result = run(*args, victim, "-", stdin=stdin, cwd=tmp_path)
    assert_refused(result, 2, "input")
    assert victim.read_bytes() == before
    assert not leftovers(tmp_path)


@pytest.mark.parametrize("victim_text", ["other words " * 40, ""])
def test_force_never_lets_unique_out_directory_replace_an_input(tmp_path, victim_text):
    """The issue's case: dedup --force --unique-out d d maps d/a.txt onto the input d/d/a.txt
    (also when that input was skipped, here as an empty file)."""
    d = tmp_path / "d"
    (d / "d").mkdir(parents=True)
    (d / "a.txt").write_text(words(1))
    (d / "d" / "a.txt").write_text(victim_text)
    before = tree(d)
    result = run("dedup", "--silent", "--force", "--unique-out", "d", "d", cwd=tmp_path)
    assert_refused(result, 1, "d/d/a.txt")
    assert tree(d) == before  # nothing written at all


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_force_never_lets_unique_out_file_replace_an_input(tmp_path, how):
    victim = tmp_path / "docs.jsonl"
    victim.write_text("".join(json.dumps({"text": words(i)}) + "\n" for i in range(3)))
    before = victim.read_bytes()
    (tmp_path / "in").mkdir()
    victim = victim.rename(tmp_path / "in" / victim.name)
    target = _output_target(victim, how, tmp_path)
    result = run("dedup", "--silent", "--force", "--unique-out", target, victim, cwd=tmp_path)
    assert_refused(result, 2, "input")
    assert victim.read_bytes() == before


def test_o_and_unique_out_must_differ(tmp_path):
    (tmp_path / "docs.jsonl").write_text(json.dumps({"text": words(1)}) + "\n")
    result = run("dedup", "--silent", "-o", "same.jsonl", "--unique-out", "same.jsonl", "docs.jsonl", cwd=tmp_path)
    assert_refused(result, 2)
    assert not (tmp_path / "same.jsonl").exists()


# --- 2. links planted in an existing --unique-out directory ------------------------------------


def test_unique_out_replaces_a_planted_link_not_its_target(tmp_path, corpus):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    (out / "corpus").mkdir(parents=True)
    (out / "corpus" / "other-2.txt").symlink_to(victim)
    result = run("dedup", "--silent", "--force", "--unique-out", "out", "corpus", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious"
    written = out / "corpus" / "other-2.txt"
    assert not written.is_symlink() and written.read_bytes() == (corpus / "other-2.txt").read_bytes()
    assert not leftovers(out)


@pytest.mark.parametrize("linked", ["corpus", "corpus/sub"])
def test_unique_out_never_writes_through_a_linked_directory(tmp_path, corpus, linked):
    (corpus / "sub").mkdir()
    (corpus / "sub" / "deep.txt").write_text(words(9))
    victim = tmp_path / "victim"
    victim.mkdir()
    out = tmp_path / "out"
    (out / linked).parent.mkdir(parents=True, exist_ok=True)
    (out / linked).symlink_to(victim, target_is_directory=True)
    result = run("dedup", "--silent", "--force", "--unique-out", "out", "corpus", cwd=tmp_path)
    assert_refused(result, 1, "link")
    assert list(victim.iterdir()) == []
    assert not leftovers(out)


# --- 3. the --unique-out DIR names are one per document ------------------------------------------


def test_unique_out_keeps_documents_whose_names_look_alike(tmp_path):
    work = tmp_path / "work"
    texts = {}

    def place(path: Path, seed: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(words(seed))
        texts[seed] = path.read_bytes()

    place(tmp_path / "d" / "a.txt", 1)  # ../d/a.txt
    place(work / "_up_" / "d" / "a.txt", 2)  # _up_/d/a.txt
    place(work / "%2E%2E" / "d" / "a.txt", 3)  # a literal escape
    absolute = tmp_path / "abs" / "a.txt"
    place(absolute, 4)
    relative = Path(*absolute.parts[1:])  # the absolute path without its leading /
    place(work / relative, 5)
    ids = ["../d/a.txt", "_up_/d/a.txt", "%2E%2E/d/a.txt", str(absolute), str(relative)]
    result = run("dedup", "--silent", "--unique-out", "out", *ids, cwd=work)
    assert result.returncode == 0, result.stderr
    written = [p for p in (work / "out").rglob("*") if p.is_file()]
    assert len(written) == len(ids)
    assert sorted(p.read_bytes() for p in written) == sorted(texts.values())


COMPONENTS = st.sampled_from(["a", "b", ".", "..", "", "%", "%2E", "%2E%2E", "%2F", "%25", "_up_", "a%b"])


def _same_file(doc_id: str) -> tuple:
    """What a path names without resolving links: absolute or not, and its components other
    than "." and empty ones."""
    return doc_id.startswith("/"), tuple(p for p in doc_id.split("/") if p not in ("", "."))


@given(st.lists(st.tuples(st.booleans(), st.lists(COMPONENTS, min_size=1, max_size=4)), min_size=1, max_size=12))
def test_target_names_are_injective(paths):
    ids = [("/" if absolute else "") + "/".join(parts) for absolute, parts in paths]
    ids = [i for i in ids if _same_file(i)[1]]  # "", ".", "/" name no file
    for doc_id in ids:
        name = target_name(doc_id)
        assert not name.startswith("/")
        assert all(part not in ("", ".", "..") for part in name.split("/"))
    for a in ids:
        for b in ids:
            assert (target_name(a) == target_name(b)) == (_same_file(a) == _same_file(b)), (a, b)


def test_target_names_refuse_two_ids_for_one_name():
    assert target_names(["x/a.txt", "../x/a.txt"]) == {"x/a.txt": "x/a.txt", "%2E%2E/x/a.txt": "../x/a.txt"}
    with pytest.raises(SimdedupError, match="a/b.txt"):
        target_names(["a/./b.txt", "a/b.txt"])


# --- 4. JSON lines read once -------------------------------------------------------------------


def _jsonl_corpus(tmp_path: Path) -> tuple[Path, list[str]]:
    base = words(1)
    texts = [base, base.replace(base.split()[50], "changed", 1), words(2), words(3)]
    lines = [json.dumps({"text": text, "n": i}) for i, text in enumerate(texts)]
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(lines) + "\n")
    return docs, lines


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_unique_out_file_from_a_pipe(tmp_path, jobs):
    docs, lines = _jsonl_corpus(tmp_path)
    plain = run("dedup", "--silent", "-j", jobs, "--unique-out", "plain.jsonl", docs, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    expected = (tmp_path / "plain.jsonl").read_text().splitlines()
    assert len(expected) == 3 and set(expected) <= set(lines)
    piped = sh(f"{SIM} dedup --silent -j {jobs} --jsonl --unique-out kept.jsonl <(cat docs.jsonl)", tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert (tmp_path / "kept.jsonl").read_text().splitlines() == expected
    ids = [m["id"] for m in json.loads(piped.stdout)["members"]]
    assert all(i.startswith("/dev/fd/") for i in ids)  # named after the path given


def test_unique_out_file_from_a_fifo(tmp_path, alarm):
    docs, lines = _jsonl_corpus(tmp_path)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    feeder = threading.Thread(target=lambda: fifo.write_bytes(docs.read_bytes()))
    feeder.start()
    result = run("dedup", "--silent", "--unique-out", "kept.jsonl", fifo, cwd=tmp_path)
    feeder.join()
    assert result.returncode == 0, result.stderr
    kept = (tmp_path / "kept.jsonl").read_text().splitlines()
    assert len(kept) == 3 and set(kept) <= set(lines)


def test_kept_documents_that_cannot_be_written_are_an_error(tmp_path):
    """A plain file cannot go into --unique-out FILE.jsonl: never an incomplete file with exit 0."""
    docs, _ = _jsonl_corpus(tmp_path)
    (tmp_path / "plain.txt").write_text(words(7))
    result = run("dedup", "--silent", "--unique-out", "kept.jsonl", docs, "plain.txt", cwd=tmp_path)
    assert_refused(result, 1, "plain.txt")
    assert not (tmp_path / "kept.jsonl").exists()
    assert not leftovers(tmp_path)


def test_unique_out_directory_refuses_a_pipe(tmp_path):
    """A kept document read from a pipe cannot be copied: an error, never an empty copy."""
    (tmp_path / "a.txt").write_text(words(1))
    (tmp_path / "b.txt").write_text(words(2))
    result = sh(f"{SIM} dedup --silent --unique-out out a.txt <(cat b.txt)", tmp_path)
    assert_refused(result, 1, "/dev/fd/")
    assert not [p for p in tmp_path.glob("out/**/*") if p.is_file()]


# --- 5. non-regular targets, atomic files ------------------------------------------------------


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_o_writes_through_a_fifo(tmp_path, corpus, force, alarm):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = run("fingerprint", "--silent", *force, "-o", fifo, corpus, cwd=tmp_path)
    if reader.is_alive():  # simdedup never opened the FIFO: let the reader finish
        open(fifo, "wb").close()
    reader.join()
    assert result.returncode == 0, result.stderr
    assert len(received[0].decode().splitlines()) == 5
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(not ROOT, reason="making a device node needs root")
def test_o_force_keeps_a_device(tmp_path, corpus):
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the null device
        with open(device, "wb") as handle:
            handle.write(b"x")
    except OSError as exc:
        pytest.skip(f"no usable device node here: {exc}")
    result = run("fingerprint", "--silent", "--force", "-o", device, corpus, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert not leftovers(tmp_path)


def _file_size_limit(limit: int):
    """preexec_fn: writing past ``limit`` bytes fails with EFBIG (Python ignores SIGXFSZ)."""
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_o_on_a_full_disk_leaves_the_old_file(tmp_path, corpus):
    for i in range(40):
        (corpus / f"more-{i}.txt").write_text(words(100 + i))
    old = tmp_path / "fp.jsonl"
    old.write_text("old\n")
    result = run(
        "fingerprint", "--silent", "--force", "-o", old, corpus, cwd=tmp_path, preexec_fn=_file_size_limit(4096)
    )
    assert_refused(result, 1, "fp.jsonl")
    assert old.read_text() == "old\n"
    assert not leftovers(tmp_path)


def test_unique_out_file_on_a_full_disk_leaves_nothing(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"text": words(i, 400)}) + "\n" for i in range(40)))
    result = run(
        "dedup", "--silent", "--unique-out", "kept.jsonl", docs, cwd=tmp_path, preexec_fn=_file_size_limit(16384)
    )
    assert_refused(result, 1, "kept.jsonl")
    assert not (tmp_path / "kept.jsonl").exists()
    assert not leftovers(tmp_path)


def test_unique_out_directory_on_a_full_disk_has_no_truncated_file(tmp_path, corpus):
    (corpus / "zz-large.txt").write_text(words(77, 20000))  # over the limit, copied last
    result = run("dedup", "--silent", "--unique-out", "out", "corpus", cwd=tmp_path, preexec_fn=_file_size_limit(65536))
    assert_refused(result, 1, "zz-large.txt")
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (tmp_path / path.relative_to(tmp_path / "out")).read_bytes()
    assert not (tmp_path / "out" / "corpus" / "zz-large.txt").exists()
    assert not leftovers(tmp_path)


@pytest.mark.skipif(not ROOT or shutil.which("unshare") is None, reason="mounting a small tmpfs needs root")
def test_unique_out_on_a_full_filesystem(tmp_path, corpus):
    (corpus / "zz-large.txt").write_text(words(77, 40000))
    (tmp_path / "small").mkdir()
    (tmp_path / "files.py").write_text(
        "import json, os, sys\n"
        "print(json.dumps({os.path.relpath(os.path.join(d, f), 'small'): open(os.path.join(d, f)).read()\n"
        "                  for d, _, names in os.walk('small') for f in names}))\n"
    )
    (tmp_path / "inner.sh").write_text(
        "mount -t tmpfs -o size=64k tmpfs small || exit 99\n"
        f"{SIM} dedup --silent --unique-out small/out corpus\n"
        "echo status=$?\n"
        f"{shlex.quote(sys.executable)} files.py\n"
    )
    result = sh("unshare -m bash inner.sh", tmp_path)
    if result.returncode == 99:
        pytest.skip(f"cannot mount a tmpfs: {result.stderr.decode().strip()}")
    out = result.stdout.decode().splitlines()
    assert out[-2] == "status=1", result.stderr
    assert "No space left" in result.stderr.decode()
    files = json.loads(out[-1])
    assert not [name for name in files if ".simdedup-" in name]
    for name, text in files.items():
        assert text == (tmp_path / os.path.relpath(name, "out")).read_text()


# --- 6. unwritable outputs: one line, exit 1, found before the run ------------------------------


def _stdout_commands(tmp_path: Path, corpus: Path) -> dict[str, list]:
    fp = tmp_path / "fp.jsonl"
    fp.write_bytes(run("fingerprint", "--silent", corpus, cwd=tmp_path).stdout)
    clusters = tmp_path / "clusters.jsonl"
    clusters.write_bytes(run("cluster", fp, cwd=tmp_path).stdout)
    same = tmp_path / "same"
    same.mkdir()
    for name in ("x.txt", "y.txt"):
        (same / name).write_text(words(5))
    gold = tmp_path / "gold.tsv"
    gold.write_text(f"{corpus}/a.txt\t{corpus}/a-copy.txt\n")
    return {
        "fingerprint": ["fingerprint", "--silent", corpus],
        "dedup": ["dedup", "--silent", corpus],
        "exact": ["exact", "--silent", same],
        "cluster": ["cluster", fp],
        "convert": ["convert", "--to", "jsonl", fp],
        "stats": ["stats", fp],
        "explain": ["explain", corpus / "a.txt", corpus / "a-copy.txt"],
        "eval": ["eval", "--gold", gold, clusters],
        "tokenizers": ["tokenizers"],
    }


COMMANDS = ["fingerprint", "dedup", "exact", "cluster", "convert", "stats", "explain", "eval", "tokenizers"]


@pytest.mark.parametrize("command", COMMANDS)
def test_full_stdout_is_one_line_and_exit_1(tmp_path, corpus, command):
    args = _stdout_commands(tmp_path, corpus)[command]
    with open("/dev/full", "wb") as full:
        result = run(*args, stdout=full, cwd=tmp_path)
    assert_refused(result, 1, "No space left")


@pytest.mark.parametrize("command", COMMANDS)
def test_closed_stdout_is_one_line_and_exit_1(tmp_path, corpus, command):
    args = " ".join(shlex.quote(str(a)) for a in _stdout_commands(tmp_path, corpus)[command])
    result = sh(f"{SIM} {args} >&-", tmp_path)
    assert_refused(result, 1, "stdout")


def test_closed_stdout_with_o_still_works(tmp_path, corpus):
    result = sh(f"{SIM} fingerprint --silent -o fp.jsonl corpus >&-", tmp_path)
    assert result.returncode == 0, result.stderr
    assert len((tmp_path / "fp.jsonl").read_text().splitlines()) == 5


def test_closed_stderr_does_not_break_the_run(tmp_path, corpus):
    (corpus / "empty.txt").write_text("")  # a warning nobody can read
    result = sh(f"{SIM} fingerprint -o fp.jsonl corpus 2>&-", tmp_path)
    assert result.returncode == 3
    records = (tmp_path / "fp.jsonl").read_text().splitlines()
    assert len(records) == 5 and all(json.loads(line)["id"] for line in records)


def _never_written_fifo(tmp_path: Path) -> Path:
    """An input that makes any run hang: refusing before the run is the only way to finish."""
    fifo = tmp_path / "input.jsonl"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize("target", ["missing/out", "missing/kept.jsonl", "file.txt/out"])
def test_unique_out_in_a_missing_directory_fails_before_the_run(tmp_path, target):
    (tmp_path / "file.txt").write_text("not a directory")
    fifo = _never_written_fifo(tmp_path)
    result = run("dedup", "--silent", "--unique-out", target, fifo, cwd=tmp_path, timeout=30)
    assert_refused(result, 1, target)
    assert result.stdout == b""
    assert not (tmp_path / "missing").exists()


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory nobody may create files in, root included (immutable, or mode 555 for others)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    if not ROOT:
        ro.chmod(0o555)
        yield ro
        ro.chmod(0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(ro)], capture_output=True).returncode:
        pytest.skip("root ignores permissions, and chattr +i is not available here")
    yield ro
    subprocess.run(["chattr", "-i", str(ro)], check=True)


@pytest.mark.parametrize("target", ["ro/out", "ro/kept.jsonl", "ro"])
def test_unique_out_in_a_read_only_directory_fails_before_the_run(tmp_path, read_only_dir, target):
    fifo = _never_written_fifo(tmp_path)
    result = run("dedup", "--silent", "--unique-out", target, fifo, cwd=tmp_path, timeout=30)
    assert_refused(result, 1, target)
    assert result.stdout == b""


def test_o_in_a_read_only_directory_fails_before_the_run(tmp_path, read_only_dir):
    fifo = _never_written_fifo(tmp_path)
    result = run("dedup", "--silent", "-o", "ro/clusters.jsonl", fifo, cwd=tmp_path, timeout=30)
    assert_refused(result, 1, "ro/clusters.jsonl")


# --- 7. parallel writers on one pipe ------------------------------------------------------------


SLOW_READER = """
import fcntl, os, sys, time
fcntl.fcntl(0, fcntl.F_SETPIPE_SZ, 4096)  # one page: every longer write waits for the reader midway
with open(sys.argv[1], "wb") as out:
    while data := os.read(0, 1000):
        out.write(data)
        time.sleep(0.0002)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
@pytest.mark.parametrize("case", ["sketch", "long ids"])
def test_parallel_writers_keep_long_lines_whole_on_a_pipe(tmp_path, case):
    """Lines longer than PIPE_BUF from four processes into one small pipe with a slow reader."""
    d = tmp_path / "d"
    d.mkdir()
    if case == "sketch":
        for i in range(80):
            (d / f"{i:03d}.txt").write_text(words(i, 300))
        command = f"ls d/* | xargs -n 10 -P 4 {SIM} fingerprint --silent -j 1 --sketch 4096"
    else:
        for i in range(16):
            (d / f"{i:03d}.jsonl").write_text(
                "".join(
                    json.dumps({"id": f"{i}-{j}-" + "x" * 6000, "text": words(i * 100 + j, 50)}) + "\n"
                    for j in range(5)
                )
            )
        command = f"ls d/* | xargs -n 2 -P 4 {SIM} fingerprint --silent -j 1 --id-field id"
    (tmp_path / "reader.py").write_text(SLOW_READER)
    result = sh(f"{command} | {shlex.quote(sys.executable)} reader.py out.jsonl", tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert len({json.loads(line)["id"] for line in lines}) == len(lines) == 80


def test_plot_never_replaces_an_input_nor_an_existing_file_without_force(tmp_path, corpus):
    pytest.importorskip("matplotlib")
    fp = tmp_path / "fp.jsonl"
    fp.write_bytes(run("fingerprint", "--silent", corpus, cwd=tmp_path).stdout)
    before = fp.read_bytes()
    assert_refused(run("stats", "--force", "--plot", fp, fp, cwd=tmp_path), 2, "input")
    assert fp.read_bytes() == before
    (tmp_path / "old.png").write_text("old")
    assert_refused(run("stats", "--plot", "old.png", fp, cwd=tmp_path), 2, "--force")
    assert run("stats", "--force", "--plot", "old.png", fp, cwd=tmp_path).returncode == 0
    assert (tmp_path / "old.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("command", ["fingerprint", "cluster"])
def test_stdout_never_writes_into_an_input(tmp_path, corpus, command):
    """As cat: "input file is output" (with >>, which leaves the input for simdedup to ruin)."""
    if command == "cluster":
        victim = tmp_path / "fp.jsonl"
        victim.write_bytes(run("fingerprint", "--silent", corpus, cwd=tmp_path).stdout)
        named = victim
    else:
        victim = named = corpus / "a.txt"
    before = victim.read_bytes()
    result = sh(f"{SIM} {command} {shlex.quote(str(named))} >> {shlex.quote(str(victim))}", tmp_path)
    assert_refused(result, 2, "stdout is an input")
    assert victim.read_bytes() == before


def test_unique_out_names_too_long_fail_before_anything_is_written(tmp_path):
    """Escaping makes a name longer: a kept file whose name no longer fits is an error up front."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.txt").write_text(words(1))
    (d / ("%" * 100 + ".txt")).write_text(words(2))  # 304 bytes once escaped
    (d / "z.txt").write_text(words(3))
    result = run("dedup", "--silent", "--unique-out", "out", "d", cwd=tmp_path)
    assert_refused(result, 1, "longer than")
    assert not [p for p in tmp_path.glob("out/**/*") if p.is_file()]


def test_unique_out_keeps_names_that_are_not_utf8(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    names = [b"caf\xe9.txt", b"new\nline.txt", b"%41.txt"]
    for i, name in enumerate(names):
        with open(os.path.join(bytes(d), name), "w") as handle:
            handle.write(words(i))
    result = run("dedup", "--silent", "--unique-out", "out", "d", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = sorted(os.listdir(bytes(tmp_path / "out" / "d")))
    assert written == sorted([b"caf\xe9.txt", b"new\nline.txt", b"%2541.txt"])


@pytest.mark.parametrize(
    "args", [["--unique-out", ""], ["-o", ""], ["--unique-out", "kept.jsonl.gz"], ["--unique-out", "file.txt"]]
)
def test_unusable_output_names_are_usage_errors(tmp_path, args):
    (tmp_path / "file.txt").write_text("a file, not a directory")
    (tmp_path / "docs.jsonl").write_text(json.dumps({"text": words(1)}) + "\n")
    result = run("dedup", "--silent", "--force", *args, "docs.jsonl", cwd=tmp_path)
    assert_refused(result, 2)
    assert result.stdout == b""
    assert (tmp_path / "file.txt").read_text() == "a file, not a directory"
