"""Kernel of KmeansPlusPlusInitialization (ops/clustering_ops.py): k-means++ seeding (Arthur
& Vassilvitskii, 2007) - the first center uniformly, each next one drawn with probability
proportional to the squared distance to the nearest center chosen so far, keeping, of
`num_retries_per_sample + 1` draws, the one that lowers the total potential most."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


@register_kernel("KmeansPlusPlusInitialization")
def kmeans_plus_plus_initialization(points, num_to_sample, seed, num_retries_per_sample):
    points = np.asarray(points)
    count, wanted = len(points), int(num_to_sample)
    if points.ndim != 2:
        raise errors.InvalidArgumentError(None, None, "KmeansPlusPlusInitialization: points "
                                          f"must be a matrix, got shape {list(points.shape)}")
    if wanted > count:
        raise errors.InvalidArgumentError(None, None, "KmeansPlusPlusInitialization: "
                                          f"{wanted} centers asked of {count} points")
    rng = np.random.default_rng(int(seed) & 0xFFFFFFFFFFFFFFFF)
    retries = int(num_retries_per_sample)
    retries = 2 + int(np.log(max(wanted, 1))) if retries < 0 else retries
    data = points.astype(np.float64)
    chosen = [int(rng.integers(count))] if wanted else []
    nearest = ((data - data[chosen[0]]) ** 2).sum(axis=1) if wanted else None
    while len(chosen) < wanted:
        total = nearest.sum()
        best, best_potential, best_nearest = None, np.inf, None
        for _ in range(retries + 1):
            index = int(rng.choice(count, p=nearest / total)) if total > 0 else \
                int(rng.integers(count))
            candidate = np.minimum(nearest, ((data - data[index]) ** 2).sum(axis=1))
            if candidate.sum() < best_potential:
                best, best_potential, best_nearest = index, candidate.sum(), candidate
        chosen.append(best)
        nearest = best_nearest
    return points[chosen]
