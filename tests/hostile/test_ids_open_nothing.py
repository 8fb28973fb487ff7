"""Issue 42, item 3: ids are data. A cluster line's ids come from the input (crawled URLs, file
names), so a command that reads documents by their ids (``report``, ``explain --clusters``) opens
only what the user gave it (``--documents``; A and B for explain), whatever an id spells:
absolute paths, ``..`` steps, a symbolic link out of the directory given, ``file://``, a local
web server's URL (``s3://`` in tests/test_store_members.py). Generated hostile ids in generated
clusters: nothing of the secret reaches the output, and the web server is never asked.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import near_copy, words, write
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simdedup.cli import cli
from simdedup.read.given import GivenDocuments

SECRET = "aws_secret_access_key = SECRETVALUE0123456789"


class _Counting(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []

    def send_head(self):
        _Counting.requests.append(self.path)
        return super().send_head()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """A corpus of near copies, a secret outside it (with a link to it from inside the corpus
    and a directory link out of it), and a web server on 127.0.0.1 serving the secret."""
    root = tmp_path_factory.mktemp("ids")
    secrets = root / "home" / ".aws"
    write(secrets / "credentials", SECRET + "\n" + words(3))
    corpus = root / "corpus"
    write(corpus / "a.txt", words(1))
    write(corpus / "b.txt", near_copy(words(1)))
    os.symlink(secrets / "credentials", corpus / "evil.txt")
    os.symlink(secrets, corpus / "dir-out")
    handler = lambda *a, **k: _Counting(*a, directory=str(secrets), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, corpus, secrets, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def hostile_ids(root: Path, corpus: Path, secrets: Path, web: str) -> list[str]:
    secret = secrets / "credentials"
    return [
        str(secret),
        f"{corpus}/../home/.aws/credentials",
        "corpus/../home/.aws/credentials",
        str(corpus / "evil.txt"),
        "corpus/evil.txt",
        str(corpus / "dir-out" / "credentials"),
        f"file://{secret}",
        f"file://{corpus}/../home/.aws/credentials",
        f"FILE://{secret}",
        f"{web}/credentials",
        f"{web}/%2E%2E/credentials",
        f"http://127.0.0.1:{web.rsplit(':', 1)[1]}/credentials?x=1",
        "~/.aws/credentials",
    ]


def run(*args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, [str(a) for a in args])
    finally:
        os.chdir(old)


def clusters_file(path: Path, clusters: list[list[str]]) -> Path:
    lines = []
    for members in clusters:
        lines.append(
            json.dumps(
                {
                    "cluster": "c",
                    "size": len(members),
                    "representative": members[0],
                    "members": [{"id": m, "distance": i, "resemblance_estimate": 0.9} for i, m in enumerate(members)],
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def assert_clean(result, *pages: Path) -> None:
    assert result.exit_code in (0, 1, 2, 3), result.output
    assert "Traceback" not in result.output and "a bug" not in result.output
    for text in [result.output, *(p.read_text() for p in pages if p.exists())]:
        assert "SECRETVALUE" not in text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
@example(data=None)  # issue 42: the credentials file named by a cluster line, copied into the page
def test_no_command_opens_what_a_hostile_id_names(place, tmp_path_factory, data):
    root, corpus, secrets, web = place
    hostile = hostile_ids(root, corpus, secrets, web)
    if data is None:
        clusters = [[str(corpus / "a.txt"), str(secrets / "credentials")]]
    else:
        picked = data.draw(st.lists(st.sampled_from(hostile), min_size=1, max_size=5, unique=True))
        real = data.draw(st.sampled_from([str(corpus / "a.txt"), "corpus/a.txt", "corpus/b.txt"]))
        clusters = [data.draw(st.permutations([real, *picked[:2]])), picked[2:] or [real]]
        clusters = [c for c in clusters if len(set(c)) == len(c)]
    tmp = tmp_path_factory.mktemp("run")
    lines = clusters_file(tmp / "clusters.jsonl", clusters)
    _Counting.requests.clear()
    for documents in (
        [],
        ["--documents", "corpus"],
        ["--documents", str(corpus)],
        ["--documents", str(corpus / "a.txt")],
    ):
        page = tmp / "page.html"
        result = run("report", lines, "-o", page, "--force", *documents, cwd=root)
        assert_clean(result, page)
    explained = run("explain", "corpus/a.txt", "corpus/b.txt", "--clusters", lines, "--json", cwd=root)
    assert_clean(explained)
    explained = run("explain", "corpus/a.txt", "corpus/b.txt", "--clusters", lines, "--documents", "corpus", cwd=root)
    assert_clean(explained)
    assert _Counting.requests == []  # not even asked whether it is there


def test_the_documents_given_are_read_and_shown(place, tmp_path):
    root, corpus, _, _ = place
    lines = clusters_file(tmp_path / "clusters.jsonl", [["corpus/a.txt", "corpus/b.txt", "corpus/evil.txt"]])
    page = tmp_path / "page.html"
    result = run("report", lines, "-o", page, "--documents", "corpus", cwd=root)
    assert result.exit_code == 3  # the link out of the corpus: a warning, no text
    assert result.stderr.startswith("simdedup: warning: corpus/evil.txt: no text in the report: ")
    data = json.loads(page.read_text().split('id="report-data">', 1)[1].split("</script>", 1)[0])
    texts = dict(zip(data["ids"], data["texts"]))
    assert texts["corpus/a.txt"] == words(1) and texts["corpus/evil.txt"] is None
    assert data["links"][data["ids"].index("corpus/evil.txt")] is None
    # without --documents: no text at all, one line saying how to get them
    result = run("report", lines, "-o", page, "--force", cwd=root)
    assert result.exit_code == 0 and result.stderr.count("\n") == 1 and "--documents" in result.stderr
    data = json.loads(page.read_text().split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert data["texts"] == [None, None, None]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.sampled_from(["..", ".", "corpus", "a.txt", "evil.txt", "dir-out", "home", "", "%2E%2E"]), max_size=6
    )
)
def test_the_gate_admits_only_paths_that_really_lead_inside_a_root(place, steps):
    root, corpus, _, web = place
    given_docs = GivenDocuments([str(corpus), f"{web}/corpus"])
    for doc_id in (str(root) + "/" + "/".join(steps), f"{web}/corpus/" + "/".join(steps)):
        admitted = given_docs.refusal(doc_id) is None
        if doc_id.startswith("http"):
            rest = doc_id[len(web) + len("/corpus") :].replace("%2E", ".").split("/")
            assert admitted == ("." not in rest and ".." not in rest)
        else:
            real = os.path.realpath(doc_id)
            assert admitted == (real == str(corpus.resolve()) or real.startswith(str(corpus.resolve()) + os.sep))
