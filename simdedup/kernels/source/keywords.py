"""numba source of the keyword kernel (:mod:`simdedup.kernels.keywords`): jieba's TF-IDF
keywords of a batch of segmented documents."""

import numba
import numpy as np
from numba import carray

from .common import prefetch, xxh3

#: how many words ahead the table of IDFs is asked for a word's slot (a power of two)
AHEAD = 16


@numba.njit(inline="always")
def _hash_ahead(data, address, token_chars, t, position, ahead, vocab_keys):  # pragma: no cover - compiled
    """Hash word ``t`` (from byte ``position``) into ``ahead`` and prefetch its slot of the
    IDF table; returns where the next word starts."""
    start = position
    for _ in range(token_chars[t]):
        c = data[position]
        position += 1 if c < 0x80 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
    h = xxh3(address + start, position - start)
    ahead[t & (AHEAD - 1)] = h
    prefetch(vocab_keys, np.int64(h & np.uint64(len(vocab_keys) - 1)))
    return position


def keyword_batch(
    data_p,
    nbytes,
    address,
    token_chars_p,
    doc_tokens_p,
    ndocs,
    vocab_keys_p,
    vocab_idf_p,
    vocab_slots,
    median,
    spaces_p,
    nspaces,
    stop_p,
    stop_ends_p,
    nstop,
    topk,
    keys_p,
    counts_p,
    first_p,
    idfs_p,
    used_p,
    capacity,
    best_p,
    best_scores_p,
    nbest_p,
    kept_counts_p,
    ahead_p,
):  # pragma: no cover - compiled
    """jieba's TF-IDF keywords of each document of a batch, from its segmented words.

    ``data`` (``nbytes``) is the UTF-8 of every word of every document back to back; word ``t`` is
    ``token_chars[t]`` characters long and document ``d`` has words ``doc_tokens[d]`` to
    ``doc_tokens[d + 1]``. A word is known by its XXH3-64 hash. ``vocab_keys``/``vocab_idf``
    is an open-addressing table (``vocab_slots`` slots, key 0 empty) of jieba's IDF per word,
    NaN for words jieba drops. A word not in it gets ``median``, or NaN when jieba drops it:
    fewer than two characters once the code points in ``spaces`` are stripped from its ends,
    or an ASCII word that lower-cases to one of the ``stop`` words (stored back to back, the
    ``i``-th ending at ``stop_ends[i]``). The score is ``count * (idf / total)`` with ``total``
    the count of kept words, as in ``extract_tags``; the ``topk`` best go to ``best`` (index of
    the word's first occurrence) and ``best_scores``, ties in first-seen order, and their
    number to ``nbest[d]``. ``keys`` .. ``used`` are a per-document table of ``capacity``
    slots (a power of two, at least twice the most words of a document); ``counts`` is all
    zero on entry and is left so. ``ahead`` (``AHEAD``) holds the hashes of the words ahead,
    whose IDF slots are fetched while the words before them are counted.

    With ``topk`` below 0 the words are counted, not scored: each document's kept words (at most
    ``-topk``), first seen first, go to ``best`` (first occurrence), ``best_scores`` (IDF) and
    ``kept_counts`` (count), their number to ``nbest[d]``.
    """
    doc_tokens = carray(doc_tokens_p, (ndocs + 1,))
    ntokens = doc_tokens[ndocs]
    token_chars = carray(token_chars_p, (max(ntokens, 1),))
    vocab_keys = carray(vocab_keys_p, (vocab_slots,))
    vocab_idf = carray(vocab_idf_p, (vocab_slots,))
    spaces = carray(spaces_p, (max(nspaces, 1),))
    stop_ends = carray(stop_ends_p, (max(nstop, 1),))
    keys = carray(keys_p, (capacity,))
    counts = carray(counts_p, (capacity,))
    first = carray(first_p, (capacity,))
    idfs = carray(idfs_p, (capacity,))
    used = carray(used_p, (capacity,))
    room = topk if topk > 0 else -topk
    best = carray(best_p, (max(ndocs * room, 1),))
    best_scores = carray(best_scores_p, (max(ndocs * room, 1),))
    kept_counts = carray(kept_counts_p, (max(ndocs * room, 1),))
    nbest = carray(nbest_p, (ndocs,))
    stop_bytes = stop_ends[nstop - 1] if nstop > 0 else 0
    stop = carray(stop_p, (max(stop_bytes, 1),))
    data = carray(data_p, (max(nbytes, 1),))
    vocab_mask = np.uint64(vocab_slots - 1)
    ahead = carray(ahead_p, (AHEAD,))
    ahead_token, ahead_position = 0, 0
    while ahead_token < min(AHEAD, ntokens):
        ahead_position = _hash_ahead(data, address, token_chars, ahead_token, ahead_position, ahead, vocab_keys)
        ahead_token += 1
    position = 0
    for d in range(ndocs):
        start_token, end_token = doc_tokens[d], doc_tokens[d + 1]
        slots = 64
        while slots < 2 * (end_token - start_token):
            slots *= 2
        mask = np.uint64(slots - 1)
        size = 0
        for t in range(start_token, end_token):
            start = position
            ascii_only = True
            for _ in range(token_chars[t]):
                c = data[position]
                if c < 0x80:
                    position += 1
                else:
                    ascii_only = False
                    position += 2 if c < 0xE0 else 3 if c < 0xF0 else 4
            h = ahead[t & (AHEAD - 1)]
            if ahead_token < ntokens:
                ahead_position = _hash_ahead(data, address, token_chars, ahead_token, ahead_position, ahead, vocab_keys)
                ahead_token += 1
            slot = np.int64(h & mask)
            while counts[slot] != 0 and keys[slot] != h:
                slot = np.int64(np.uint64(slot + 1) & mask)
            if counts[slot] != 0:
                counts[slot] += 1
                continue
            keys[slot] = h
            counts[slot] = 1
            first[slot] = t
            used[size] = slot
            size += 1
            v = np.int64(h & vocab_mask)
            while vocab_keys[v] != 0 and vocab_keys[v] != h:
                v = np.int64(np.uint64(v + 1) & vocab_mask)
            if vocab_keys[v] == h:
                idfs[slot] = vocab_idf[v]
                continue
            # Not in jieba's table: its filters. Characters kept once the ends are stripped:
            # from the first to the last character that is not a space.
            kept_first, kept_last, index = -1, -1, 0
            i = start
            while i < position:
                c = np.int64(data[i])
                if c < 0x80:
                    i += 1
                elif c < 0xE0:
                    c = ((c & 0x1F) << 6) | (np.int64(data[i + 1]) & 0x3F)
                    i += 2
                elif c < 0xF0:
                    c = ((c & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (np.int64(data[i + 2]) & 0x3F)
                    i += 3
                else:
                    c = (
                        ((c & 0x07) << 18)
                        | ((np.int64(data[i + 1]) & 0x3F) << 12)
                        | ((np.int64(data[i + 2]) & 0x3F) << 6)
                        | (np.int64(data[i + 3]) & 0x3F)
                    )
                    i += 4
                space = False
                for s in range(nspaces):
                    if spaces[s] == c:
                        space = True
                        break
                if not space:
                    if kept_first < 0:
                        kept_first = index
                    kept_last = index
                index += 1
            if kept_first < 0 or kept_last - kept_first + 1 < 2:
                idfs[slot] = np.nan
                continue
            idfs[slot] = median
            if ascii_only:
                for w in range(nstop):
                    w_start = stop_ends[w - 1] if w > 0 else 0
                    if stop_ends[w] - w_start != position - start:
                        continue
                    same = True
                    for j in range(position - start):
                        c = data[start + j]
                        if 65 <= c <= 90:
                            c += 32
                        if c != stop[w_start + j]:
                            same = False
                            break
                    if same:
                        idfs[slot] = np.nan
                        break
        found = 0
        base = d * room
        total = 0
        for j in range(size):
            if not np.isnan(idfs[used[j]]):
                total += counts[used[j]]
                if topk < 0:  # the counts alone: each kept word, first seen first
                    best[base + found] = first[used[j]]
                    best_scores[base + found] = idfs[used[j]]
                    kept_counts[base + found] = counts[used[j]]
                    found += 1
        if total > 0 and topk > 0:
            denominator = np.float64(total)
            for j in range(size):  # first-seen order; a later equal score ranks after
                slot = used[j]
                if np.isnan(idfs[slot]):
                    continue
                score = np.float64(counts[slot]) * (idfs[slot] / denominator)
                if found == topk and not score > best_scores[base + topk - 1]:
                    continue
                k = found if found < topk else topk - 1
                while k > 0 and best_scores[base + k - 1] < score:
                    best_scores[base + k] = best_scores[base + k - 1]
                    best[base + k] = best[base + k - 1]
                    k -= 1
                best_scores[base + k] = score
                best[base + k] = first[slot]
                if found < topk:
                    found += 1
        nbest[d] = found
        for j in range(size):
            counts[used[j]] = 0
    return 0
