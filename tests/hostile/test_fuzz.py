"""Random bytes, well-formed files of every kind made and then damaged, random JSON and damaged
fingerprint and cluster records fed to every command: every input reader (plain, compressed,
CSV/TSV, JSON lines, HTML, HTTP, WARC, Parquet, in every encoding) and record reader
(fingerprint records, binary fingerprints, cluster lines, gold pairs, the index's --from).

Whatever the input, a command ends with one of its documented exit statuses (never 70, which
is kept for bugs), writes only whole lines, and says a file's problems in a bounded number of
lines. The generator is seeded, so a failure here is reproducible: the test id names the seed.

The test suite runs SEEDS; ``make fuzz`` (SIMDEDUP_FUZZ_SECONDS=N) runs further seeds for N
seconds, from SIMDEDUP_FUZZ_SEED, and names the seed of a failure.
"""

import base64
import bz2
import codecs
import gzip
import io
import json
import lzma
import os
import random
import string
import time

import pytest
from click.testing import CliRunner

from simdedup.cli import cli
from simdedup.errors import WARNINGS_PER_FILE

DOCUMENTED = {0, 1, 2, 3}
SEEDS = range(40)
SUFFIXES = [
    ".txt",
    ".jsonl",
    ".csv",
    ".tsv",
    ".gz",
    ".jsonl.gz",
    ".bz2",
    ".xz",
    ".zst",
    ".html",
    ".http",
    ".warc",
    ".warc.gz",
    ".parquet",
    ".ndjson.xz",
    ".csv.bz2",
]


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
        return (
            f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset={charset}\r\n{encoding}\r\n".encode()
            + rng.randbytes(rng.randrange(0, 500))
        )
    if kind == 4:
        return (
            "\n".join(
                ",".join(rng.choice(['"a"', "text", '"', "", "x" * rng.randrange(200)]) for _ in range(3))
                for _ in range(20)
            )
        ).encode()
    return random_json(rng).encode("utf-8", "surrogatepass") + b"\n"


def words(rng: random.Random, n: int) -> str:
    return " ".join(
        rng.choice(["alpha", "beta", "中文", "café", "naïve", "x" * rng.randrange(1, 30), "\u202e"]) for _ in range(n)
    )


def html_page(rng: random.Random) -> str:
    tags = [
        rng.choice(["div", "p", "b", "script", "style", "svg", "li", "td", "template"])
        for _ in range(rng.choice([3, 30, 3000, 30_000]))
    ]
    declaration = rng.choice(
        [
            "",
            '<meta charset="windows-1252">',
            '<meta charset="base64">',
            '<?xml version="1.0" encoding="utf-16"?>',
            '<meta charset="nonsense">',
        ]
    )
    closing = "".join(f"</{t}>" for t in reversed(tags)) if rng.random() < 0.5 else ""
    return declaration + "".join(f"<{t}>" for t in tags) + words(rng, 50) + closing


def encoded(rng: random.Random, text: str) -> bytes:
    """``text`` in an encoding people use, sometimes behind a byte-order mark that lies."""
    encoding = rng.choice(["utf-8", "utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "gb18030", "cp1252"])
    data = text.encode(encoding, "replace")
    marks = {
        "utf-8": codecs.BOM_UTF8,
        "utf-16-le": codecs.BOM_UTF16_LE,
        "utf-16-be": codecs.BOM_UTF16_BE,
        "utf-32-le": codecs.BOM_UTF32_LE,
    }
    if rng.random() < 0.5:
        data = rng.choice([marks.get(encoding, b""), *marks.values()]) + data
    return data


def compressed(rng: random.Random, suffix: str, data: bytes) -> bytes:
    for ending, compress in (
        (".gz", gzip.compress),
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
        (".zst", lambda d: __import__("zstandard").ZstdCompressor().compress(d)),
    ):
        if suffix.endswith(ending):
            return compress(data)
    return data


def warc(rng: random.Random, gzipped: bool) -> bytes:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gzipped)
    for i in range(rng.randrange(1, 5)):
        charset = rng.choice(["", "; charset=utf-8", "; charset=utf-16", "; charset=base64", "; charset=x"])
        headers = StatusAndHeaders(
            "200 OK", [("Content-Type", rng.choice(["text/html", "text/plain"]) + charset)], protocol="HTTP/1.1"
        )
        writer.write_record(
            writer.create_warc_record(
                f"http://example.test/{i}",
                rng.choice(["response", "request"]),
                payload=io.BytesIO(encoded(rng, html_page(rng))),
                http_headers=headers,
            )
        )
    return out.getvalue()


def parquet(rng: random.Random) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [rng.choice([words(rng, 20), None, "", "\ufeff" + words(rng, 5)]) for _ in range(rng.randrange(1, 30))]
    columns = {rng.choice(["text", "body"]): texts, "id": [rng.choice(["a", "b", str(i)]) for i in range(len(texts))]}
    out = io.BytesIO()
    pq.write_table(pa.table(columns), out, row_group_size=rng.choice([1, 7, 100]))
    return out.getvalue()


def well_formed(rng: random.Random, suffix: str) -> bytes:
    """A file of the kind ``suffix`` names, as a tool would write it."""
    plain = suffix.replace(".gz", "").replace(".bz2", "").replace(".xz", "").replace(".zst", "")
    if plain == ".warc":
        return warc(rng, suffix.endswith(".gz"))
    if plain == ".parquet":
        return parquet(rng)
    if plain in (".jsonl", ".ndjson"):
        text = "\n".join(
            json.dumps({"text": words(rng, 30), "id": str(rng.randrange(5))}, ensure_ascii=rng.random() < 0.5)
            if rng.random() < 0.8
            else random_json(rng)
            for _ in range(rng.randrange(1, 30))
        )
    elif plain in (".csv", ".tsv"):
        sep = "\t" if plain == ".tsv" else ","
        text = f"id{sep}text\r\n" + "".join(f'{i}{sep}"{words(rng, 10)}"\r\n' for i in range(rng.randrange(1, 30)))
    elif plain == ".html":
        text = html_page(rng)
    elif plain == ".http":
        coding = rng.choice(["", "Content-Encoding: gzip\r\n", "Transfer-Encoding: chunked\r\n"])
        body = encoded(rng, html_page(rng))
        if "gzip" in coding:
            body = gzip.compress(body)
        elif "chunked" in coding:
            body = (
                b"".join(
                    b"%x\r\n%s\r\n" % (len(body[i : i + 100]), body[i : i + 100]) for i in range(0, len(body), 100)
                )
                + b"0\r\n\r\n"
            )
        head = (
            f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset={rng.choice(['utf-8', 'utf-16', 'x'])}\r\n"
            f"{coding}\r\n"
        ).encode()
        return head + body
    else:
        text = words(rng, rng.randrange(1, 500))
    return compressed(rng, suffix, encoded(rng, text))


def damaged(rng: random.Random, data: bytes) -> bytes:
    """``data`` with a few bytes changed, a stretch repeated or removed, or cut short."""
    data = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        if not data:
            break
        at = rng.randrange(len(data))
        action = rng.randrange(4)
        if action == 0:
            data[at] = rng.randrange(256)
        elif action == 1:
            data[at:at] = data[at : at + rng.randrange(1, 200)]
        elif action == 2:
            del data[at : at + rng.randrange(1, 50)]
        else:
            del data[at:]
    return bytes(data)


def document_bytes(rng: random.Random, suffix: str) -> bytes:
    """Random bytes, or a well-formed file of the kind ``suffix`` names, often damaged."""
    if rng.random() < 0.3:
        return random_bytes(rng)
    data = well_formed(rng, suffix)
    return damaged(rng, data) if rng.random() < 0.6 else data


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
    return {
        rng.choice(["id", "text", "members", "representative", "simhash", "bits"]): random_value(rng, depth + 1)
        for _ in range(rng.randrange(4))
    }


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
        members = [
            {
                "id": random_value(rng) if rng.random() < 0.2 else f"doc{rng.randrange(5)}",
                "bytes": random_value(rng) if rng.random() < 0.2 else rng.randrange(100),
            }
            for _ in range(rng.randrange(0, 4))
        ]
        cluster = {"members": members, "representative": rng.choice([m["id"] for m in members] + ["ghost", None])}
        lines.append(json.dumps(cluster))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def good_records(tmp_path_factory):
    runner = CliRunner()
    result = runner.invoke(cli, ["fingerprint", "examples/en", "examples/zh"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def check(result, command, files: int = 0):
    """A documented exit status, whole lines, no traceback, and at most a few warning lines for
    each of the ``files`` read (each warning line about one of them, or the input as a whole)."""
    assert result.exit_code in DOCUMENTED, (command, result.exit_code, result.stderr[-2000:])
    for stream in (result.stdout_bytes, result.stderr_bytes):
        assert not stream or stream.endswith((b"\n", b"\0") if "-0" in command else b"\n"), (command, stream[-200:])
    assert "Traceback" not in result.stderr, (command, result.stderr[-2000:])
    if files:
        warnings = [line for line in result.stderr.splitlines() if line.startswith("simdedup: warning: ")]
        assert len(warnings) <= files * (WARNINGS_PER_FILE + 1), (command, warnings[:20])


def documents_of(tmp_path, seed: int) -> None:
    rng = random.Random(seed)
    names = []
    for i in range(6):
        suffix = rng.choice(SUFFIXES)
        path = tmp_path / f"doc{i}{suffix}"
        path.write_bytes(document_bytes(rng, suffix))
        names.append(str(path))
    encoding = rng.choice(["utf-8", "auto", "gb18030", "utf-16"])
    runner = CliRunner()
    for command in (
        ["fingerprint", "--encoding", encoding, "--id-field", "id", *names],
        ["fingerprint", "-j", "2", "--text-field", "body", *names],
        ["dedup", "--html", *names],
        ["fingerprint", "--jsonl", "--method", "nilsimsa", *names],
        ["exact", *names],
        ["dedup", "--method", "sentences", *names],
        ["explain", names[0], names[1]],
    ):
        check(runner.invoke(cli, command), command, len(names))


@pytest.mark.parametrize("seed", SEEDS)
def test_documents_of_random_bytes(tmp_path, seed):
    documents_of(tmp_path, seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_json_lines_as_documents(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b"\n".join(random_json(rng).encode("utf-8", "surrogatepass") for _ in range(30)) + b"\n")
    runner = CliRunner()
    for command in (
        ["fingerprint", str(path)],
        ["dedup", "--id-field", "id", str(path)],
        ["fingerprint", "--text-field", "text.a", str(path)],
    ):
        check(runner.invoke(cli, command), command)


@pytest.mark.parametrize("seed", SEEDS)
def test_damaged_fingerprint_records(tmp_path, seed, good_records):
    rng = random.Random(seed)
    path = tmp_path / "fp.jsonl"
    path.write_text(damaged_records(rng, rng.sample(good_records, 8)), encoding="utf-8", errors="surrogatepass")
    runner = CliRunner()
    for command in (
        ["cluster", str(path)],
        ["convert", "--to", "binary", "-o", str(tmp_path / "fp.sdfp"), str(path)],
        ["stats", str(path)],
        ["cluster", "--k", "3", "--against", str(path), str(path)],
        ["index", "create", str(tmp_path / "idx"), "-k", "3", "--from", str(path)],
    ):
        check(runner.invoke(cli, command), command, 2)


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
    if seed % 3 == 0:  # either file of any bytes, as a crawl or another tool may leave it
        (tmp_path / rng.choice(["gold.jsonl", "clusters.jsonl"])).write_bytes(random_bytes(rng))
    runner = CliRunner()
    for command in (
        ["select", str(path)],
        ["select", "-0", "--keep", "longest", str(path)],
        ["select", "--kept", "--keep", "newest", str(path)],
        ["eval", "--gold", str(tmp_path / "gold.jsonl"), str(path)],
    ):
        check(runner.invoke(cli, command), command)


@pytest.mark.skipif(not os.environ.get("SIMDEDUP_FUZZ_SECONDS"), reason="make fuzz: SIMDEDUP_FUZZ_SECONDS=N")
def test_fuzz_for_a_while(tmp_path_factory, good_records):
    """Every generator above, on further seeds, for SIMDEDUP_FUZZ_SECONDS seconds."""
    deadline = time.monotonic() + float(os.environ["SIMDEDUP_FUZZ_SECONDS"])
    seed = int(os.environ.get("SIMDEDUP_FUZZ_SEED", "1000"))
    while time.monotonic() < deadline:
        try:
            documents_of(tmp_path_factory.mktemp(f"documents{seed}"), seed)
            test_random_json_lines_as_documents(tmp_path_factory.mktemp(f"lines{seed}"), seed)
            test_damaged_fingerprint_records(tmp_path_factory.mktemp(f"records{seed}"), seed, good_records)
            test_damaged_binary_fingerprints(tmp_path_factory.mktemp(f"binary{seed}"), seed)
            test_random_cluster_lines(tmp_path_factory.mktemp(f"clusters{seed}"), seed)
        except AssertionError as exc:
            raise AssertionError(f"seed {seed} (SIMDEDUP_FUZZ_SEED={seed} reproduces it): {exc}") from None
        seed += 1
