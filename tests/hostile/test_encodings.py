"""Class: encodings as people have them. Every reader (plain files, CSV, JSON lines, HTML, HTTP
responses, WARC records) settles a document's encoding by one rule: a byte-order mark, then the
charset its headers declare, then markup's own declaration, then --encoding. Generated texts,
written in every encoding variant each reader can meet, must give the documents, ids and
fingerprints that plain UTF-8 gives.
"""

import codecs
import io
import json
import random

import pytest
from helpers import invoke

SEEDS = range(2)
WORDS = ["café", "über", "naïve", "straße", "crème", "brûlée", "plain", "words", "déjà", "vu", "ÆØÅ", "señor"]

#: (name, byte-order mark, encoding): how a stream of text is stored
MARKED = [
    ("utf-8", b"", "utf-8"),
    ("utf-8 BOM", codecs.BOM_UTF8, "utf-8"),
    ("utf-16-le BOM", codecs.BOM_UTF16_LE, "utf-16-le"),
    ("utf-16-be BOM", codecs.BOM_UTF16_BE, "utf-16-be"),
    ("utf-32-le BOM", codecs.BOM_UTF32_LE, "utf-32-le"),
    ("utf-32-be BOM", codecs.BOM_UTF32_BE, "utf-32-be"),
]
#: (name, byte-order mark, encoding, header charset, markup's declaration): declared and conflicting
DECLARED = [
    ("meta cp1252", b"", "cp1252", None, '<meta charset="windows-1252">'),
    (
        "http-equiv latin-1",
        b"",
        "latin-1",
        None,
        '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">',
    ),
    ("xml latin-1", b"", "latin-1", None, '<?xml version="1.0" encoding="iso-8859-1"?>'),
    ("header cp1252", b"", "cp1252", "windows-1252", ""),
    ("BOM beats header", codecs.BOM_UTF8, "utf-8", "iso-8859-1", ""),
    ("BOM beats meta", codecs.BOM_UTF16_LE, "utf-16-le", None, '<meta charset="windows-1252">'),
    ("header beats meta", b"", "utf-8", "utf-8", '<meta charset="windows-1252">'),
    ("unknown header charset", b"", "utf-8", "no-such-charset", ""),
    ("no text encoding in meta", b"", "utf-8", None, '<meta charset="base64">'),
]


def texts(seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(20, 60))) for _ in range(4)]


def html(text, declaration=""):
    head = declaration if declaration.startswith("<?xml") else ""
    meta = "" if head else declaration
    return f"{head}<html><head>{meta}<title>t</title></head><body><p>{text}</p></body></html>\n"


def stored(text, bom, encoding):
    return bom + text.encode(encoding)


def write_plain(tmp_path, docs, bom, encoding, charset=None, declaration=""):
    for i, text in enumerate(docs):
        (tmp_path / f"doc{i}.txt").write_bytes(stored(text, bom, encoding))
    return ["fingerprint", "--silent", *[tmp_path / f"doc{i}.txt" for i in range(len(docs))]]


def write_csv(tmp_path, docs, bom, encoding, charset=None, declaration=""):
    table = "id,text\r\n" + "".join(f'{i},"{text}"\r\n' for i, text in enumerate(docs))
    (tmp_path / "docs.csv").write_bytes(stored(table, bom, encoding))
    return ["fingerprint", "--silent", "--id-field", "id", tmp_path / "docs.csv"]


def write_jsonl(tmp_path, docs, bom, encoding, charset=None, declaration=""):
    lines = "".join(json.dumps({"id": str(i), "text": text}, ensure_ascii=False) + "\n" for i, text in enumerate(docs))
    (tmp_path / "docs.jsonl").write_bytes(stored(lines, bom, encoding))
    return ["fingerprint", "--silent", "--id-field", "id", tmp_path / "docs.jsonl"]


def write_html(tmp_path, docs, bom, encoding, charset=None, declaration=""):
    for i, text in enumerate(docs):
        (tmp_path / f"doc{i}.html").write_bytes(stored(html(text, declaration), bom, encoding))
    return ["fingerprint", "--silent", "--html", *[tmp_path / f"doc{i}.html" for i in range(len(docs))]]


def write_http(tmp_path, docs, bom, encoding, charset=None, declaration=""):
    content_type = "text/html" + (f"; charset={charset}" if charset else "")
    for i, text in enumerate(docs):
        head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n\r\n".encode("ascii")
        (tmp_path / f"doc{i}.http").write_bytes(head + stored(html(text, declaration), bom, encoding))
    return ["fingerprint", "--silent", *[tmp_path / f"doc{i}.http" for i in range(len(docs))]]


def write_warc(tmp_path, docs, bom, encoding, charset=None, declaration=""):
    pytest.importorskip("warcio")
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    content_type = "text/html" + (f"; charset={charset}" if charset else "")
    with open(tmp_path / "crawl.warc", "wb") as handle:
        writer = WARCWriter(handle, gzip=False)
        for i, text in enumerate(docs):
            headers = StatusAndHeaders("200 OK", [("Content-Type", content_type)], protocol="HTTP/1.1")
            body = stored(html(text, declaration), bom, encoding)
            writer.write_record(
                writer.create_warc_record(
                    f"http://example.test/{i}", "response", payload=io.BytesIO(body), http_headers=headers
                )
            )
    return ["fingerprint", "--silent", tmp_path / "crawl.warc"]


READERS = {
    "plain": write_plain,
    "csv": write_csv,
    "jsonl": write_jsonl,
    "html": write_html,
    "http": write_http,
    "warc": write_warc,
}
MARKUP_READERS = ("html", "http", "warc")


def documents(tmp_path, reader, docs, *variant):
    """The (id as the reader names it, simhash, features) of each document, read from files
    written with ``variant``; ids lose the directory and a WARC record's random UUID."""
    tmp_path.mkdir()
    result = invoke(*READERS[reader](tmp_path, docs, *variant))
    assert result.exit_code == 0, (reader, variant, result.stderr[-1000:])
    assert "Traceback" not in result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    return [(r["id"].replace(str(tmp_path), "").split(" <urn:")[0], r["simhash"], r["features"]) for r in records]


CASES = [(reader, name, bom, encoding, None, "") for reader in READERS for name, bom, encoding in MARKED]
CASES += [
    (reader, *variant) for reader in MARKUP_READERS for variant in DECLARED if reader != "html" or variant[3] is None
]  # a file of HTML has no headers


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "reader, name, bom, encoding, charset, declaration", CASES, ids=[f"{case[0]}-{case[1]}" for case in CASES]
)
def test_every_reader_reads_every_encoding_as_utf8(tmp_path, seed, reader, name, bom, encoding, charset, declaration):
    docs = texts(seed)
    reference = documents(tmp_path / "utf8", reader, docs, b"", "utf-8", None, "")
    assert len(reference) == len(docs)
    assert documents(tmp_path / "variant", reader, docs, bom, encoding, charset, declaration) == reference


@pytest.mark.parametrize("reader", ["plain", "csv", "jsonl", "http"])
def test_text_not_in_its_declared_encoding_is_skipped_with_the_reason(tmp_path, reader):
    """A byte-order mark that lies (UTF-16 named, odd bytes follow) costs the document, or the
    rest of a table, with a warning naming the encoding and who chose it; never a crash."""
    docs = texts(0)
    write = READERS[reader]
    command = write(tmp_path, docs, codecs.BOM_UTF16_LE, "utf-16-le")
    for path in tmp_path.iterdir():
        path.write_bytes(path.read_bytes() + b"\x00\xd8")  # an unpaired surrogate at the end
    result = invoke(*command)
    assert result.exit_code == 3, result.stderr
    assert "Traceback" not in result.stderr
    assert "utf-16-le (as its byte-order mark says)" in result.stderr


#: code pages people's files are in, each with words it can store (Excel writes CSV in them)
CODE_PAGES = {
    "gbk": "城市 公园 历史 发展 树木 花草 湖泊 游客 周末 散步",
    "gb18030": "茶叶 冲泡 水温 时间 器具 香气 口感 颜色 产地 季节",
    "big5": "城市 公園 歷史 發展 樹木 花草 湖泊 遊客 週末 散步",
    "shift_jis": "東京 公園 歴史 発展 樹木 花 湖 観光客 週末 散歩",
    "euc-kr": "도시 공원 역사 발전 나무 꽃 호수 관광객 주말 산책",
    "cp1252": "café über naïve crème brûlée déjà señor garçon façade œuvre",
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("reader", ["plain", "csv"])
@pytest.mark.parametrize("encoding", sorted(CODE_PAGES))
def test_files_in_a_code_page_read_with_encoding_as_their_utf8_copies(tmp_path, seed, reader, encoding):
    """``--encoding`` reaches every reader whose files do not say their encoding (plain text and
    CSV), in one process, in workers and in the staged engine: the documents are those of the
    same files in UTF-8."""
    rng = random.Random(seed)
    words = CODE_PAGES[encoding].split()
    docs = [" ".join(rng.choice(words) for _ in range(rng.randrange(20, 60))) for _ in range(5)]
    reference = documents(tmp_path / "utf8", reader, docs, b"", "utf-8")
    (tmp_path / "variant").mkdir()
    command = READERS[reader](tmp_path / "variant", docs, b"", encoding)
    for extra in (["-j", "1"], ["-j", "2"], ["--engine", "stages", "-j", "2"]):
        result = invoke(*command[:2], "--encoding", encoding, *extra, *command[2:])
        assert result.exit_code == 0, (encoding, extra, result.stderr[-1000:])
        records = [json.loads(line) for line in result.stdout.splitlines()]
        found = [(r["id"].replace(str(tmp_path / "variant"), ""), r["simhash"], r["features"]) for r in records]
        assert found == [(i.replace(str(tmp_path / "utf8"), ""), s, f) for i, s, f in reference], extra
