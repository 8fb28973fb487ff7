"""Random bytes, random JSON and damaged fingerprint records fed to every command.

Whatever the input, a command ends with one of its documented exit statuses (never 70, which
is kept for bugs), and writes only whole lines. The generator is seeded, so a failure here is
reproducible: the test id names the seed.
"""

import base64
import gzip
import json
import random
import string

import pytest
from click.testing import CliRunner

from simdedup.cli import cli

DOCUMENTED = {0, 1, 2, 3}
SEEDS = range(40)


def random_bytes(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randbytes(rng.randrange(0, 3000))
    if kind == 1:  # text with control characters and odd Unicode, sometimes invalid UTF-8
        alphabet = string.printable + "中文ünï\u202e\x1b\x00\ufeff\u2028"
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 2000)))
        data = text.encode("utf-8", "surrogatepass")
        return data + (rng.randbytes(3) if rng.random() < 0.3 else b"")
    if kind == 2:  # a compressed stream, sometimes cut short
        data = gzip.compress(" ".join(rng.choice(["alpha", "beta", "中文"]) for _ in range(500)).encode())
        return data[: rng.randrange(1, len(data) + 1)]
    if kind == 3:  # an HTTP response with a made-up header
        charset = rng.choice(["utf-8", "base64", "hex", "zlib", "nonsense", "utf-16", "rot13"])
        encoding = rng.choice(["", "Content-Encoding: gzip\r\n", "Transfer-Encoding: chunked\r\n"])
        return (f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset={charset}\r\n{encoding}\r\n".encode()
                + rng.randbytes(rng.randrange(0, 500)))
    if kind == 4:
        return ("\n".join(",".join(rng.choice(['"a"', "text", '"', "", "x" * rng.randrange(200)])
                                   for _ in range(3)) for _ in range(20))).encode()
    return random_json(rng).encode("utf-8", "surrogatepass") + b"\n"


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 2**64, 2**64 - 1, 10**40, 1.5, float("1e308")])
    if kind == 2:
        return "".join(rng.choice(string.ascii_letters + "\ud800\udcff\n\x1b中") for _ in range(rng.randrange(20)))
    if kind == 3:
        return "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice([0, 15, 16, 17, 32, 64])))
    if kind == 4:
        return base64.urlsafe_b64encode(rng.randbytes(rng.choice([0, 1, 7, 8, 12, 128]))).decode().rstrip("=")
    if kind in (5, 6):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["id", "text", "members", "representative", "simhash", "bits"]): random_value(rng, depth + 1)
            for _ in range(rng.randrange(4))}


def random_json(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return rng.choice(["[" * 50_000, '{"text": ' + "9" * 5000 + "}", '{"text": "unterminated'])
    return json.dumps(random_value(rng), ensure_ascii=rng.random() < 0.5)


def damaged_records(rng: random.Random, good: list[dict]) -> str:
    """Fingerprint records, some of them with a field replaced, removed or retyped."""
    lines = []
    for record in good:
        record = dict(record)
        for _ in range(rng.randrange(3)):
            field = rng.choice(list(record) + ["extra"])
            action = rng.randrange(3)
            if action == 0:
                record.pop(field, None)
            else:
                record[field] = random_value(rng)
        line = json.dumps(record, ensure_ascii=rng.random() < 0.5, separators=rng.choice([(",", ":"), (", ", ": ")]))
        lines.append(line if rng.random() < 0.9 else line[: rng.randrange(len(line))])
    return "\n".join(lines) + "\n"


def damaged_clusters(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randrange(1, 6)):
        members = [{"id": random_value(rng) if rng.random() < 0.2 else f"doc{rng.randrange(5)}",
                    "bytes": random_value(rng) if rng.random() < 0.2 else rng.randrange(100)}
                   for _ in range(rng.randrange(0, 4))]
        cluster = {"members": members, "representative": rng.choice([m["id"] for m in members] + ["ghost", None])}
        lines.append(json.dumps(cluster))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def good_records(tmp_path_factory):
    runner = CliRunner()
    result = runner.invoke(cli, ["fingerprint", "examples/en", "examples/zh"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def check(result, command):
    assert result.exit_code in DOCUMENTED, (command, result.exit_code, result.stderr[-2000:])
    for stream in (result.stdout_bytes, result.stderr_bytes):
        assert not stream or stream.endswith((b"\n", b"\0") if "-0" in command else b"\n"), (command, stream[-200:])
    assert "Traceback" not in result.stderr, (command, result.stderr[-2000:])


@pytest.mark.parametrize("seed", SEEDS)
def test_documents_of_random_bytes(tmp_path, seed):
    rng = random.Random(seed)
    names = []
    for i in range(6):
        suffix = rng.choice([".txt", ".jsonl", ".csv", ".tsv", ".gz", ".jsonl.gz", ".bz2", ".xz", ".zst", ".html",
                             ".warc", ".parquet"])
        path = tmp_path / f"doc{i}{suffix}"
        path.write_bytes(random_bytes(rng))
        names.append(str(path))
    encoding = rng.choice(["utf-8", "auto", "gb18030", "utf-16"])
    runner = CliRunner()
    for command in (["fingerprint", "--encoding", encoding, *names], ["dedup", "--html", *names],
                    ["fingerprint", "--jsonl", "--method", "nilsimsa", *names], ["exact", *names],
                    ["dedup", "--method", "sentences", *names], ["explain", names[0], names[1]]):
        check(runner.invoke(cli, command), command)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_json_lines_as_documents(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b"\n".join(random_json(rng).encode("utf-8", "surrogatepass") for _ in range(30)) + b"\n")
    runner = CliRunner()
    for command in (["fingerprint", str(path)], ["dedup", "--id-field", "id", str(path)],
                    ["fingerprint", "--text-field", "text.a", str(path)]):
        check(runner.invoke(cli, command), command)


@pytest.mark.parametrize("seed", SEEDS)
def test_damaged_fingerprint_records(tmp_path, seed, good_records):
    rng = random.Random(seed)
    path = tmp_path / "fp.jsonl"
    path.write_text(damaged_records(rng, rng.sample(good_records, 8)), encoding="utf-8", errors="surrogatepass")
    runner = CliRunner()
    for command in (["cluster", str(path)], ["convert", "--to", "binary", "-o", str(tmp_path / "fp.sdfp"), str(path)],
                    ["stats", str(path)], ["cluster", "--k", "3", "--against", str(path), str(path)]):
        check(runner.invoke(cli, command), command)


@pytest.mark.parametrize("seed", SEEDS)
def test_damaged_binary_fingerprints(tmp_path, seed):
    rng = random.Random(seed)
    runner = CliRunner()
    made = runner.invoke(cli, ["fingerprint", "--format", "binary", "-o", str(tmp_path / "fp.sdfp"), "examples/en"])
    assert made.exit_code == 0
    data = bytearray((tmp_path / "fp.sdfp").read_bytes())
    for _ in range(rng.randrange(1, 5)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    (tmp_path / "bad.sdfp").write_bytes(bytes(data[: rng.randrange(1, len(data) + 1)]))
    for command in (["cluster", str(tmp_path / "bad.sdfp")], ["convert", "--to", "jsonl", str(tmp_path / "bad.sdfp")]):
        check(runner.invoke(cli, command), command)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_cluster_lines(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "clusters.jsonl"
    text = damaged_clusters(rng) if seed % 2 else "\n".join(random_json(rng) for _ in range(5)) + "\n"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    (tmp_path / "gold.jsonl").write_text(damaged_clusters(rng), encoding="utf-8", errors="surrogatepass")
    runner = CliRunner()
    for command in (["select", str(path)], ["select", "-0", "--keep", "longest", str(path)],
                    ["select", "--kept", "--keep", "newest", str(path)],
                    ["eval", "--gold", str(tmp_path / "gold.jsonl"), str(path)]):
        check(runner.invoke(cli, command), command)
