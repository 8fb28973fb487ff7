"""Drawing :class:`simdedup.stats.Stats` with matplotlib (the optional ``plot`` extra)."""

from __future__ import annotations

from .stats import Stats


def plot_stats(stats: Stats, fd: int) -> None:
    """Write the nearest-neighbour and cluster-size histograms as a PNG image to the file
    descriptor ``fd``."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    labels = [str(d) for d in range(len(stats.nearest))] + [f">{stats.max_k}"]
    left.bar(labels, stats.nearest + [stats.beyond], color="#4878a8", label="nearest neighbour")
    if stats.verified_distances is not None:
        left.bar(labels[:-1], stats.verified_distances, color="#e08a3c", alpha=0.8, label="verified pairs")
    left.axvline(stats.suggested_k + 0.5, color="#444", linestyle="--", label=f"suggested k = {stats.suggested_k}")
    left.set_xlabel("Hamming distance (bits)")
    left.set_ylabel("documents / pairs")
    left.legend()
    right.bar([label for label, _ in stats.cluster_sizes], [c for _, c in stats.cluster_sizes], color="#5a9e6f")
    right.set_xlabel("cluster size")
    right.set_ylabel("clusters")
    fig.suptitle(f"{stats.documents} documents")
    fig.tight_layout()
    with open(fd, "wb", closefd=False) as handle:
        fig.savefig(handle, dpi=100, format="png")
    plt.close(fig)
