"""Issue 42, item 5: plain text that starts "HTTP/1.1 is ..." or "HTTP/2 ..." was read as an HTTP
response and skipped. One sniff (:func:`simdedup.read.web.looks_like_http`) decides for every
reader, and it takes only a whole response head: a status line (``HTTP/x.y``, a space, three
digits), header fields (``name: value``), a blank line. Generated heads, well formed or broken
in one place, are read by ``fingerprint`` (both its compiled path and the Python one) as their
body when well formed and as the whole text otherwise.
"""

from __future__ import annotations

import json
import os

from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simdedup.cli import cli

BODY = "the body of the page, words enough to fingerprint: " + " ".join(f"w{i}" for i in range(40)) + "\n"

VERSIONS = {"HTTP/1.1": True, "HTTP/1.0": True, "HTTP/2": True, "HTTP/1.1x": False, "HTTP/": False, "HTTP/11": False}
CODES = {"200": True, "404": True, "is": False, "20": False, "2000": False, "": False}
REASONS = {" OK": True, "": True, " Not Found": True, " is a protocol": True}
HEADERS = {
    "Content-Type: text/plain": True,
    "X-A:b": True,
    "is great": False,
    ": empty name": False,
    "Bad Name: x": False,
    "Server: x\n  folded on": True,
}


@st.composite
def heads(draw) -> tuple[str, bool]:
    """A response head and whether it is well formed (the body follows a blank line)."""
    version = draw(st.sampled_from(sorted(VERSIONS)))
    code = draw(st.sampled_from(sorted(CODES)))
    reason = draw(st.sampled_from(sorted(REASONS)))
    headers = draw(st.lists(st.sampled_from(sorted(HEADERS)), max_size=3))
    blank = draw(st.booleans())
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = [f"{version} {code}{reason}" if code else f"{version}{reason}", *headers]
    head = newline.join(line.replace("\n", newline) for line in lines) + newline + (newline if blank else "")
    well_formed = VERSIONS[version] and CODES[code] and bool(headers) and all(HEADERS[h] for h in headers) and blank
    return head, well_formed


def fingerprint(path, *options) -> dict:
    result = CliRunner().invoke(cli, ["fingerprint", "--silent", *options, str(path)])
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.splitlines()
    record = json.loads(line)
    del record["id"]
    return record


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(head=heads())
@example(head=("HTTP/1.1 is the protocol of the web.\n", False))  # issue 42: skipped as a response
@example(head=("HTTP/2 made it faster.\nHTTP/3 too.\n\n", False))
@example(head=("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n", True))
def test_only_a_whole_response_head_is_read_as_a_response(tmp_path_factory, head):
    text, well_formed = head
    tmp = tmp_path_factory.mktemp("http")
    (tmp / "doc.txt").write_bytes((text + BODY).encode())
    (tmp / "expected.txt").write_bytes((BODY if well_formed else text + BODY).encode())
    expected = fingerprint(tmp / "expected.txt")
    expected.pop("bytes")
    for fastpath in ("1", "0"):  # the compiled kernel's choice of path, and the Python reader's
        os.environ["SIMDEDUP_FASTPATH"] = fastpath
        try:
            got = fingerprint(tmp / "doc.txt")
        finally:
            os.environ.pop("SIMDEDUP_FASTPATH", None)
        got.pop("bytes")
        assert got == expected, (text, well_formed)
