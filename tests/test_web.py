"""HTML text, raw HTTP responses and WARC archives."""

import gzip
import io
import json

import pytest
from click.testing import CliRunner

from simdedup.cli import cli
from simdedup.read.web import html_text, looks_like_http, parse_http_response

PAGE = """<!doctype html><html><head><title>Ferry times</title>
<style>body { color: red }</style><script>var hidden = "do not index";</script></head>
<body><h1>Harbour ferry</h1><p>The ferry leaves at <b>nine</b> and returns&nbsp;at noon.</p>
<noscript>enable scripts</noscript><ul><li>Tickets</li><li>Bikes</li></ul></body></html>"""


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_html_visible_text():
    text = "".join(html_text([PAGE[:50], PAGE[50:120], PAGE[120:]]))  # fed in pieces
    words = text.split()
    assert "Harbour" in words and "nine" in words and "Tickets" in words and "Bikes" in words
    assert "hidden" not in text and "color" not in text and "scripts" not in text
    assert "returns\xa0at" in text  # entities decoded
    assert "TicketsBikes" not in text  # block elements separate words


def response(body: bytes, headers: str) -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + headers.encode() + b"\r\n\r\n" + body


def chunked(data: bytes, size: int = 7) -> bytes:
    parts = [b"%x\r\n%s\r\n" % (len(data[i : i + size]), data[i : i + size]) for i in range(0, len(data), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def test_parse_http_response_chunked_gzip_charset():
    body = "<p>Grüße aus der Stadt</p>".encode("iso-8859-1")
    raw = response(
        chunked(gzip.compress(body)),
        "Content-Type: text/html; charset=ISO-8859-1\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip",
    )
    assert looks_like_http(raw) and not looks_like_http(b"HTTPS is a protocol")
    parsed = parse_http_response(raw)
    assert parsed.body == body and parsed.charset == "ISO-8859-1" and parsed.is_html
    with pytest.raises(ValueError):
        parse_http_response(b"HTTP/1.1 200 OK\r\nno blank line")


def test_http_response_files_fingerprint_like_their_text(tmp_path):
    html = PAGE.encode("utf-8")
    (tmp_path / "a.http").write_bytes(
        response(
            chunked(gzip.compress(html)),
            "Content-Type: text/html; charset=utf-8\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip",
        )
    )
    (tmp_path / "page.html").write_bytes(html)
    (tmp_path / "broken.http").write_bytes(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\nnot gzip")
    result = invoke("fingerprint", "--silent", tmp_path / "a.http", tmp_path / "broken.http")
    assert result.exit_code == 3 and "broken.http: HTTP response" in result.stderr
    from_http = json.loads(result.stdout.splitlines()[0])
    from_html = json.loads(invoke("fingerprint", "--silent", "--html", tmp_path / "page.html").stdout)
    assert from_http["simhash"] == from_html["simhash"] and from_http["features"] == from_html["features"]
    plain = json.loads(invoke("fingerprint", "--silent", tmp_path / "page.html").stdout)
    assert plain["features"] > from_html["features"]  # markup and scripts counted without --html


def test_warc_records(tmp_path):
    pytest.importorskip("warcio")
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = tmp_path / "crawl.warc.gz"
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for n, uri in enumerate(("http://example.test/a", "http://example.test/b")):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            body = PAGE.replace("nine", "nine" if n == 0 else "ten").encode()
            writer.write_record(
                writer.create_warc_record(uri, "response", payload=io.BytesIO(body), http_headers=headers)
            )
        writer.write_record(
            writer.create_warc_record("http://example.test/x", "request", payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n"))
        )
    result = invoke("fingerprint", "--silent", path)
    assert result.exit_code == 0, result.stderr
    ids = [json.loads(line)["id"] for line in result.stdout.splitlines()]
    assert len(ids) == 2  # responses only
    assert ids[0].startswith("http://example.test/a <urn:uuid:") and ids[1].startswith("http://example.test/b")
