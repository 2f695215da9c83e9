"""`tf.contrib.factorization`: k-means clustering in the graph (KMeans and its constants), as
TF 1.x programs use it. Re-exports only."""
from tensorweave.contrib.factorization.kmeans import (KMeans, RANDOM_INIT,  # noqa: F401
                                                      KMEANS_PLUS_PLUS_INIT, KMC2_INIT,
                                                      SQUARED_EUCLIDEAN_DISTANCE,
                                                      COSINE_DISTANCE)
