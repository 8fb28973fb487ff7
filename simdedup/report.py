"""The review report: one self-contained HTML page of the clusters (``simdedup report``,
``dedup --report``), for a person to check before acting on ``select``'s drop list.

The page holds its data as one JSON block and renders it with its own script; nothing in it is
loaded from elsewhere, and its Content-Security-Policy forbids loading anything. Every text and
id from the corpus reaches the page only inside that JSON block, with ``<``, ``>`` and ``&``
escaped, and the script writes it with ``textContent`` (never as markup). Links are made here,
for members that are files, as relative paths with every byte but letters, digits and ``/._-~``
percent-encoded, so that no id can become a scheme such as ``javascript:``.

The keep/drop decisions are :func:`simdedup.select.select_files`'s; the page's drop list is
that list, in that order and encoding, until the person changes a decision. Ids are data: a
member's text is read only from the documents given, and no store or server is asked about a
URL outside them (such a member is neither kept nor dropped: :func:`simdedup.select.found_inside`).
"""

from __future__ import annotations

import base64
import bisect
import difflib
import hashlib
import io
import itertools
import json
import os
import re
import stat
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import quote

from .cluster_lines import member_score
from .errors import SimdedupError, SkipDocument
from .explain import feature_pulls
from .jsonline import text_lines
from .options import DEFAULTS
from .read import Inputs, Source, open_documents, read_sources
from .select import Selection, found_inside, read_clusters, select_files
from .similarity import DEFAULT_FOLDING
from .write import json_text_bytes

#: characters of each document shown (the rest is cut, with a mark); less when --max-bytes needs it
SHOWN_CHARS = 16_000
#: characters of a document read for its features (explain's pulls, the least similar pair)
READ_CHARS = 1 << 20
#: clusters up to this size have every pair compared for the least similar one; larger ones
#: compare each member with the representative only
ALL_PAIRS_UP_TO = 30
#: features listed on each side of the least similar pair, as ``explain --top``
PULLS_TOP = 8
#: the default bound of the page's size
DEFAULT_MAX_BYTES = 64 << 20
#: clusters of this many members or more are shown compactly: members grouped by identical text
COMPACT_FROM = 100

DECISION_KEEP, DECISION_DROP, DECISION_HELD = 0, 1, 2

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
#: diff tokens: a Chinese, Japanese or Korean character alone, a run of other word characters,
#: or one other visible character (whitespace only separates: re-wrapped text is not a change)
_DIFF_TOKEN = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+|[^\\w\\s]")
_ASSETS = resources.files("simdedup") / "report_assets"


@dataclass
class ReportOptions:
    """How the page decides and what it says about the run."""

    policy: str = "representative"  # select's --keep
    #: the threshold marked on the histogram, and "near" to it (None: that of the lines' measure)
    threshold: float | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    settings: list[tuple[str, str]] = field(default_factory=list)  # shown as they are: label, words
    folding: int = DEFAULT_FOLDING  # how the texts are folded for their resemblance (simdedup.similarity)
    documents: int | None = None  # documents read by the run, when known (dedup)


@dataclass
class Texts:
    """The documents' texts by id (at most :data:`READ_CHARS` each, ``cut`` holding the ids
    of longer ones), and the reason for each member whose text could not be read."""

    texts: dict[str, str] = field(default_factory=dict)
    cut: set[str] = field(default_factory=set)
    missing: dict[str, str] = field(default_factory=dict)


def read_texts(
    ids: Iterable[str],
    paths: tuple[str, ...] = (),
    inputs: Inputs | None = None,
    encoding: str = "utf-8",
    html: bool = False,
    overwritten: dict | None = None,
    read_ids: bool = False,
) -> Texts:
    """The texts of the documents ``ids``, found among the documents ``paths`` name (read as
    ``fingerprint`` reads them; meeting a file in ``overwritten`` is a usage error), or, with
    ``read_ids``, each id opened as a file when it lies inside ``paths``. Ids are data: no file
    outside ``paths`` is opened, whatever an id or a link in them names
    (:class:`simdedup.read.given.GivenDocuments`)."""
    from .read.document import Document
    from .read.given import GivenDocuments

    wanted = set(ids)
    found = Texts()
    given = GivenDocuments(paths)
    if paths and not read_ids:

        def wanted_sources(sources: Iterable[Source]) -> Iterator[Source]:
            for source in sources:
                # a plain file that no cluster names is not opened; rows are known once parsed
                if source.line is not None or source.span is not None:
                    yield source
                elif source.path in wanted:
                    refusal = None if source.reason is not None else given.refusal(source.path)
                    if refusal is None:
                        yield source
                    else:  # a link out of the directories given
                        found.missing[source.path] = refusal

        documents: Iterable[Document] = open_documents(
            wanted_sources(read_sources(paths, inputs or Inputs(), overwritten=overwritten).sources), encoding
        )
    else:
        documents = (_file_document(doc_id, encoding, given) for doc_id in sorted(wanted))
    for document in documents:
        if document.id in wanted and document.id not in found.texts and document.id not in found.missing:
            _take_text(document, html, found)
    for doc_id in wanted - found.texts.keys() - found.missing.keys():
        found.missing[doc_id] = "not among the documents read" if paths else "not found"
    return found


def _file_document(path: str, encoding: str, given: Any) -> Any:
    from .read import open_document
    from .read.document import Document
    from .read.remote import is_url

    refusal = given.refusal(path)
    if refusal is not None:
        return Document(path, refusal)
    if is_url(path):  # an object of a store: read as fingerprint reads it
        return open_document(path, encoding)
    try:  # a FIFO or a device named in a cluster line would block or never end
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Document(path, f"not readable as a file ({reason})")
    if not regular:
        return Document(path, "not a regular file")
    return open_document(path, encoding)


def _take_text(document: Any, html: bool, found: Texts) -> None:
    from .methods.simhash import visible_text

    if document.reason is not None:
        found.missing[document.id] = document.reason
        return
    if document.text is not None:
        chunks: Iterable[str] = [document.text]
    elif document.reader is not None:
        chunks = visible_text(document.reader, html)
    else:
        found.missing[document.id] = "the document gives its features, not a text"
        return
    parts, size = [], 0
    try:
        for chunk in chunks:
            parts.append(chunk)
            size += len(chunk)
            if size > READ_CHARS:
                found.cut.add(document.id)
                break
    except SkipDocument as exc:
        found.missing[document.id] = exc.reason
        return
    found.texts[document.id] = "".join(parts)[:READ_CHARS]


def file_link(doc_id: str, base: str) -> str | None:
    """A relative link from the directory ``base`` to the document ``doc_id`` when it is an
    existing regular file, percent-encoded (None otherwise)."""
    try:
        if not stat.S_ISREG(os.stat(doc_id).st_mode):
            return None
        relative = os.path.relpath(os.path.abspath(doc_id), base)
    except (OSError, ValueError):
        return None
    # quote leaves only letters, digits, "_.-~" and "/": never a scheme, a query or a fragment
    encoded = quote(os.fsencode(relative), safe="/")
    return encoded if encoded.startswith("../") else "./" + encoded


def diff_spans(a: str, b: str) -> tuple[list[int], list[int]]:
    """The passages of ``a`` and of ``b`` that differ, as flat lists of [start, end) offsets in
    UTF-16 code units (as the page's script counts them): word by word for spaced text,
    character by character for Chinese and Japanese. Lines are matched first and tokens only
    inside the lines that differ (as ``git diff --word-diff`` does): a token diff of two whole
    documents costs time that grows with the square of their common words."""
    tokens_a, tokens_b = list(_DIFF_TOKEN.finditer(a)), list(_DIFF_TOKEN.finditer(b))
    lines_a, lines_b = _token_lines(a, tokens_a), _token_lines(b, tokens_b)
    spans_a: list[int] = []
    spans_b: list[int] = []
    # a blank line anchors nothing: re-wrapped paragraphs between blank lines are one block
    by_line = difflib.SequenceMatcher(
        lambda key: not key, [key for key, _ in lines_a], [key for key, _ in lines_b], autojunk=False
    )
    for tag, i1, i2, j1, j2 in by_line.get_opcodes():
        if tag == "equal":
            continue
        first_a, last_a = _token_range(lines_a, i1, i2)
        first_b, last_b = _token_range(lines_b, j1, j2)
        part_a, part_b = tokens_a[first_a:last_a], tokens_b[first_b:last_b]
        matcher = difflib.SequenceMatcher(
            None, [t.group() for t in part_a], [t.group() for t in part_b], autojunk=False
        )
        for op, k1, k2, m1, m2 in matcher.get_opcodes():
            if op == "equal":
                continue
            if k2 > k1:
                spans_a += [part_a[k1].start(), part_a[k2 - 1].end()]
            if m2 > m1:
                spans_b += [part_b[m1].start(), part_b[m2 - 1].end()]
    return _utf16_offsets(a, spans_a), _utf16_offsets(b, spans_b)


def _token_lines(text: str, tokens: list[re.Match]) -> list[tuple[tuple[str, ...], int]]:
    """Each line of ``text`` as (its tokens, the index of its first token), blank lines included."""
    lines: list[tuple[tuple[str, ...], int]] = []
    position = 0
    for line in text.split("\n"):
        end = position + len(line)
        first = bisect.bisect_left(tokens, position, key=re.Match.start)
        last = bisect.bisect_left(tokens, end + 1, key=re.Match.start)
        lines.append((tuple(t.group() for t in tokens[first:last]), first))
        position = end + 1
    return lines


def _token_range(lines: list[tuple[tuple[str, ...], int]], first_line: int, end_line: int) -> tuple[int, int]:
    """The tokens of lines ``first_line`` up to ``end_line`` (not included), as [first, end)."""
    if first_line == end_line:
        return (lines[first_line][1], lines[first_line][1]) if first_line < len(lines) else (0, 0)
    last_key, last_first = lines[end_line - 1]
    return lines[first_line][1], last_first + len(last_key)


def _utf16_offsets(text: str, offsets: list[int]) -> list[int]:
    if not offsets or text.isascii() or max(text) < "\U00010000":
        return offsets
    units = [0, *itertools.accumulate(2 if c >= "\U00010000" else 1 for c in text)]
    return [units[o] for o in offsets]


@dataclass
class _Cluster:
    members: list[dict]
    representative: str | None


def build_report(
    cluster_files: list[tuple[str, bytes]],
    chosen: Selection,
    texts: Texts,
    options: ReportOptions,
    features: Callable[[str], dict[str, float]] | None,
    base: str,
    given: Any = None,
) -> bytes:
    """The page for the cluster lines of ``cluster_files`` (name, content, read by
    :func:`simdedup.select.select_files` into ``chosen``), with links relative to the
    directory ``base``; ``features`` gives a text's features for the least similar pair and its
    pulls (None: the cluster lines' similarities only).

    Raises:
        SimdedupError: the page cannot fit in ``options.max_bytes``.
    """
    clusters = [
        _Cluster(members, representative)
        for name, data in cluster_files
        for members, representative in read_clusters(text_lines(io.BytesIO(data), name), name)
    ]
    feature_sets: dict[str, dict[str, float]] = {}
    if features is not None:
        feature_sets = {doc_id: features(text) for doc_id, text in texts.texts.items()}
    pairs = [_least_similar_pair(c, texts.texts, feature_sets, options.folding) for c in clusters]
    apart = _kept_apart(clusters, texts.texts, options)
    shown = SHOWN_CHARS
    while True:
        page = _page(_data(clusters, pairs, apart, chosen, texts, options, base, shown, given))
        if len(page) <= options.max_bytes:
            return page
        if shown == 0:
            raise SimdedupError(
                f"the report needs {len(page):,} bytes even without the documents' texts; "
                f"raise --max-bytes (now {options.max_bytes:,})"
            )
        shown = shown // 2 if shown > 256 else 0


def _kept_apart(clusters: list[_Cluster], texts: dict[str, str], options: ReportOptions) -> list[Any]:
    """The near-duplicates in different clusters (:func:`simdedup.apart.kept_apart`), by the
    resemblance at the report's threshold; none for clusters decided by the bag."""
    from .apart import kept_apart
    from .cluster_lines import made_from_estimates
    from .options import ClusterOptions
    from .similarity import ExactUnavailable

    scores = [member_score(m) for c in clusters for m in c.members]
    if any(score is not None and score[1] == "bag" for score in scores):
        return []
    threshold = options.threshold if options.threshold is not None else DEFAULTS.min_resemblance
    try:
        return kept_apart(
            [[m["id"] for m in c.members] for c in clusters],
            texts,
            ClusterOptions(min_resemblance=threshold),
            options.folding,
            estimated=made_from_estimates(c.members for c in clusters),
        )
    except ExactUnavailable:  # texts beyond what the exact sets hold: no list rather than a guess
        return []


def _least_similar_pair(
    cluster: _Cluster, texts: dict[str, str], feature_sets: dict[str, dict[str, float]], folding: int
) -> dict | None:
    """The least resemblant pair of the cluster, measured on the texts (every pair of a small
    cluster, each member against the representative in a large one), with explain's pulls of
    their features; else the member whose cluster-line score to the representative is the lowest."""
    ids = [m["id"] for m in cluster.members]
    rep = cluster.representative if cluster.representative is not None else ids[0]
    if all(doc_id in texts for doc_id in ids) and len(ids) > 1:
        import numpy as np

        from .similarity import ExactIndex, ExactUnavailable, KeptText

        candidates = list(
            itertools.combinations(range(len(ids)), 2)
            if len(ids) <= ALL_PAIRS_UP_TO
            else ((ids.index(rep), i) for i, doc_id in enumerate(ids) if doc_id != rep)
        )
        try:
            index = ExactIndex(KeptText(texts[doc_id], folding) for doc_id in ids)
        except ExactUnavailable:
            index = None
        if index is not None and index.has.all():
            left, right = (np.array(side, dtype=np.int64) for side in zip(*candidates))
            resemblance = index.jaccard("grams", left, right)
            weakest = int(np.argmin(resemblance))
            a, b = ids[int(left[weakest])], ids[int(right[weakest])]
            pair = {"a": a, "b": b, "score": round(float(resemblance[weakest]), 3), "measured": "texts"}
            if a in feature_sets and b in feature_sets:
                pulls = feature_pulls(feature_sets[a], feature_sets[b], PULLS_TOP)
                pair.update(
                    bag=pulls.similarity,
                    together=[list(t) for t in pulls.together],
                    apart_a=[list(t) for t in pulls.apart_a],
                    apart_b=[list(t) for t in pulls.apart_b],
                )
            return pair
    scored = [(member_score(m), m["id"]) for m in cluster.members if m["id"] != rep]
    scored = [(score, doc_id) for score, doc_id in scored if score is not None]
    if not scored:
        return None
    (value, _, measured), weakest = min(scored)
    return {"a": rep, "b": weakest, "score": value, "measured": "cluster line" if measured else "cluster line estimate"}


def _number(value: Any) -> float | int | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _data(
    clusters: list[_Cluster],
    pairs: list[dict | None],
    apart: list[Any],
    chosen: Any,
    texts: Texts,
    options: ReportOptions,
    base: str,
    shown: int,
    given: Any = None,
) -> dict:
    """What the page's script renders: ids once each (in the order select meets them), their
    decisions, texts and links, and the clusters as indices into them."""
    index: dict[str, int] = {}
    for cluster in clusters:
        for member in cluster.members:
            index.setdefault(member["id"], len(index))
    ids = list(index)
    dropped = set(chosen.dropped)
    kept = set(chosen.kept)
    held = {doc_id: why for doc_id, why in chosen.held + chosen.changed}  # neither can be ticked
    decisions = [DECISION_DROP if i in dropped else DECISION_KEEP if i in kept else DECISION_HELD for i in ids]
    sizes: dict[str, int] = {}
    for cluster in clusters:
        for member in cluster.members:
            size = _number(member.get("bytes"))
            if size is not None:
                sizes.setdefault(member["id"], int(size))
    shown_texts = [texts.texts[i][:shown] if i in texts.texts else None for i in ids]
    full_lengths = [len(texts.texts[i]) if i in texts.texts else 0 for i in ids]
    records = []
    quantities: set[str] = set()
    for cluster, pair in zip(clusters, pairs):
        rep = cluster.representative if cluster.representative is not None else cluster.members[0]["id"]
        members, diffs = [], []
        for member in cluster.members:
            doc_id = member["id"]
            score = member_score(member)
            if score is not None:
                quantities.add(score[1])
            members.append(
                [
                    index[doc_id],
                    _number(member.get("bytes")),
                    _number(member.get("distance")),
                    None if score is None else score[0],
                    None if score is None else score[2],
                ]
            )
            a, b = shown_texts[index[rep]], shown_texts[index[doc_id]]
            diffs.append(diff_spans(a, b) if doc_id != rep and a is not None and b is not None else None)
        similarities = [m[3] for m in members if m[0] != index[rep] and m[3] is not None]
        same = _same_text(cluster, texts.texts)
        record = {
            "rep": index[rep],
            "members": members,
            "diffs": diffs,
            "lowest": min(similarities) if similarities else None,
            "compare": _first_compared(members, diffs, same, index[rep]),
        }
        if len(members) >= COMPACT_FROM:
            record["same"] = same
        if pair is not None:
            record["pair"] = {**pair, "a": index[pair["a"]], "b": index[pair["b"]]}
        records.append(record)
    saved = sum(
        sizes[i] if i in sizes else len(texts.texts.get(i, "").encode("utf-8", "surrogatepass")) for i in chosen.dropped
    )
    quantity = "resemblance" if quantities <= {"resemblance"} else "bag" if quantities == {"bag"} else "score"
    threshold = options.threshold
    if threshold is None:
        threshold = DEFAULTS.min_similarity if quantity == "bag" else DEFAULTS.min_resemblance
    return {
        "quantity": quantity,
        "threshold": threshold,
        "threshold_option": "--min-similarity" if quantity == "bag" else "--min-resemblance",
        "policy": options.policy,
        "settings": [[label, words] for label, words in options.settings],
        "overview": {
            "documents": options.documents,
            "clusters": len(clusters),
            "members": len(ids),
            "dropped": len(chosen.dropped),
            "held": len(chosen.held),
            "bytes_saved": saved,
            "missing": len(texts.missing),
            "shown_chars": shown,
        },
        "ids": ids,
        "decisions": decisions,
        "held": {str(index[i]): why for i, why in held.items() if i in index},
        "links": [None if given is None or given.refusal(i) else file_link(i, base) for i in ids],
        "texts": shown_texts,
        "lengths": [n if (n > shown or i in texts.cut) else 0 for n, i in zip(full_lengths, ids)],
        "read_cut": [i in texts.cut for i in ids],
        "missing": {str(index[i]): why for i, why in texts.missing.items() if i in index},
        "clusters": records,
        "apart": [
            [
                index[p.a],
                index[p.b],
                p.cluster_a,
                p.cluster_b,
                p.score,
                None if p.failing_a is None else index[p.failing_a],
                None if p.failing_b is None else index[p.failing_b],
                p.failing_score,
            ]
            for p in apart
        ],
    }


def _same_text(cluster: _Cluster, texts: dict[str, str]) -> list[int]:
    """For each member, the position of the first member whose text is the same (itself when
    none is, or when its text was not read)."""
    first: dict[str, int] = {}
    return [first.setdefault(texts[m["id"]], k) if m["id"] in texts else k for k, m in enumerate(cluster.members)]


def _first_compared(members: list[list], diffs: list[Any], same: list[int], rep: int) -> int | None:
    """The member shown first beside the representative: the one that most needs a person's eye.
    Not a copy of the representative's text while another member differs; then the least similar
    to it by the score that decided (the cluster line's); then the most text marked as differing."""
    rep_at = next(k for k, m in enumerate(members) if m[0] == rep)

    def need(k: int) -> tuple:
        score = members[k][3]
        marked = sum(end - start for side in diffs[k] or () for start, end in zip(side[::2], side[1::2]))
        return (same[k] == same[rep_at], 2.0 if score is None else score, -marked, k)

    others = [k for k, m in enumerate(members) if m[0] != rep]
    return min(others, key=need) if others else None


_LINKAGES = {
    "complete": "complete: every pair in a cluster passes",
    "star": "star: every member passes with the representative",
    "single": "single: passing pairs chain into clusters",
}
_MEASURES = {"resemblance": "resemblance (Jaccard of shingles)", "bag": "bag (weighted Jaccard of word counts)"}


def decision_in_words(options: Any, verify: str, k_given: bool) -> list[tuple[str, str]]:
    """The settings of a run's decision (resolved :class:`ClusterOptions`), as a person reads
    them: what is not used says so, and why."""
    if options.min_score is not None:
        candidates = f"nilsimsa score at least {options.min_score}"
    else:
        within = f"fingerprints within k = {options.k} bits ({'-k' if k_given else 'the default'})"
        bands = "and pairs whose sketches share a band" if options.bands else "no sketch bands"
        candidates = f"{within}, {bands}"
    if options.similarity == "combined":
        rule = (
            f"{_MEASURES['resemblance']} at least {options.min_resemblance}, or "
            f"{_MEASURES['bag']} at least {options.min_similarity}"
        )
    elif options.sketch_of is None and not options.texts:
        rule = "none: every pair of candidates is a duplicate (the records carry no sketch)"
    else:
        threshold = options.min_similarity if options.similarity == "bag" else options.min_resemblance
        rule = f"{_MEASURES[options.similarity]} at least {threshold}"
    how = "measured exactly on the texts" if verify == "exact" else "estimated from the records' sketches"
    if options.sketch_of == "shingles":
        features = "not used (sketches of shingles measure short texts too)"
    else:
        features = f"documents with fewer than {options.min_features} features group with exact copies only"
    return [
        ("candidates", candidates),
        ("duplicates", f"{rule}; {how} (--verify {verify})"),
        ("linkage", _LINKAGES.get(options.linkage, options.linkage)),
        ("--min-features", features),
        ("documents without a duplicate", "listed (--singletons)" if options.singletons else "not listed"),
    ]


def fingerprints_in_words(settings: dict[str, Any]) -> str:
    """A method's settings (``FingerprintMethod.settings``) in one line of words."""
    method = settings.get("method", "simhash")
    parts = [f"{method}, {settings.get('bits', 64)} bits"]
    if "tokenizer" in settings:
        options = ", ".join(f"{k} {v}" for k, v in sorted((settings.get("options") or {}).items()))
        parts.append(f"tokenizer {settings['tokenizer']}" + (f" ({options})" if options else ""))
    elif settings.get("options"):
        parts.append(", ".join(f"{k} {v}" for k, v in sorted(settings["options"].items())))
    if "hash" in settings:
        parts.append(f"{settings['hash']} hash")
    if "weighting" in settings:
        parts.append("a vote a feature" if settings["weighting"] == "binary" else "votes by weight")
    if settings.get("ties") == "one":
        parts.append("tied bits set")
    if settings.get("fold"):
        parts.append(f"folded: {settings['fold']}")
    if settings.get("sketch"):
        parts.append(f"a {settings['sketch']}-byte sketch of the {settings.get('sketch_of') or 'features'}")
    elif method == "simhash":
        parts.append("no sketch")
    return "; ".join(parts)


def _script_json(data: dict) -> str:
    """JSON that can stand inside a ``<script type="application/json">`` element: no ``<``
    (so no ``</script>`` or ``<!--``), ``>`` or ``&``, and the line separators escaped too."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def _page(data: dict, template: str = "report.html", script_name: str = "report.js") -> bytes:
    """The HTML page: the template with its style, script and data filled in, and a policy
    that lets run only that style and that script (by their hashes) and load nothing (another
    view, such as the spans', names its own template and script)."""
    style, script = _asset("report.css"), _asset(script_name)
    policy = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    page = _asset(template)
    for key, value in (("{{POLICY}}", policy), ("{{STYLE}}", style), ("{{SCRIPT}}", script)):
        page = page.replace(key, value)
    head, tail = page.split("{{DATA}}")  # the data last: nothing in it is ever replaced
    return json_text_bytes(head + _script_json(data) + tail)


def report_to(
    out: Any,
    cluster_streams: Iterable[tuple[str, Any]],
    method: Any,
    options: ReportOptions,
    paths: tuple[str, ...] = (),
    inputs: Inputs | None = None,
    read_ids: bool = False,
) -> dict[str, str]:
    """Write the page for the cluster lines of ``cluster_streams`` (named binary streams) to
    the :class:`simdedup.write.OutputFile` ``out``, the texts read from the documents
    ``paths`` name (with ``read_ids``, each member id opened as a file when it lies inside
    ``paths``; without ``paths``, no text) as ``method`` reads them. Returns the members whose
    text could not be read, with the reason.

    Raises:
        UsageError: the output is one of the documents or of the cluster files.
        RecordError, SimdedupError: as :func:`build_report`.
    """
    from .read.given import GivenDocuments
    from .write import overwritten_files, write_all

    cluster_files = [(name, b"".join(stream)) for name, stream in cluster_streams]  # by bounded lines
    given = GivenDocuments(paths)  # no store or server is asked about a URL it was not given
    chosen = select_files(
        [(name, io.BytesIO(data)) for name, data in cluster_files], options.policy, found_inside(given)
    )
    ids = [*chosen.kept, *chosen.dropped, *(doc_id for doc_id, _ in chosen.held + chosen.changed)]
    out.refuse_inputs(ids)
    texts = read_texts(
        ids, paths, inputs, method.encoding, getattr(method, "html", False), overwritten_files([out]), read_ids
    )
    tokenizer = getattr(method, "tokenizer", None)
    features = None if tokenizer is None else (lambda text: tokenizer.features([text]))
    base = os.path.dirname(os.path.abspath(out.path)) if out.path else os.getcwd()
    page = build_report(cluster_files, chosen, texts, options, features, base, given)
    with out.open() as fd:
        write_all(fd, page)
    return texts.missing


def dedup_report(
    out: Any,
    clustered: Any,
    run: Any,
    method: Any,
    cluster_options: Any,
    verify: str,
    paths: tuple[str, ...],
    inputs: Inputs,
) -> dict[str, str]:
    """``dedup --report``: the page for the clusters of a dedup run, the texts read again
    from ``paths`` when they held tables, else each file opened by its id inside ``paths`` (a
    path list on stdin cannot be read twice: inside the files the run read). Returns the
    members without a text, as :func:`report_to`."""
    from dataclasses import replace

    from .cluster_lines import write_clusters

    lines = io.BytesIO()
    write_clusters(
        lines, clustered.clusters, clustered.fingerprints, replace(clustered.options, output_format="clusters")
    )
    lines.seek(0)
    settings = [
        *decision_in_words(clustered.options, verify, cluster_options.k is not None),
        ("fingerprints", fingerprints_in_words(method.settings)),
    ]
    from .verify import decided_by

    bag = decided_by(clustered.options, clustered.fingerprints.exact is not None) == "bag"
    options = ReportOptions(
        settings=settings,
        threshold=cluster_options.min_similarity if bag else cluster_options.min_resemblance,
        documents=len(clustered.fingerprints.ids),
        folding=getattr(method, "folding", True),
    )
    tables = bool(run.tables) and "-" not in paths
    given = paths if "-" not in paths else (*paths, *clustered.fingerprints.ids)
    return report_to(out, [("clusters", lines)], method, options, given, inputs, read_ids=not tables)
