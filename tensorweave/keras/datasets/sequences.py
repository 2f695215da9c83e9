"""What the IMDB and Reuters loaders share: Keras's word-index sequences, shuffled with a seed,
marked with a start character, shifted by `index_from`, cut to `maxlen` and to the `num_words`
most frequent words (others become `oov_char`, or are dropped when it is None)."""
import numpy as np


def prepare(sequences, labels, seed, start_char, oov_char, index_from, skip_top, num_words,
            maxlen):
    rng = np.random.RandomState(seed)
    order = np.arange(len(sequences))
    rng.shuffle(order)
    sequences = [list(sequences[i]) for i in order]
    labels = np.asarray(labels)[order]
    if start_char is not None:
        sequences = [[start_char] + [w + index_from for w in s] for s in sequences]
    elif index_from:
        sequences = [[w + index_from for w in s] for s in sequences]
    if maxlen:
        kept = [i for i, s in enumerate(sequences) if len(s) < maxlen]
        if not kept:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no "
                             "sequence was kept. Increase maxlen.")
        sequences, labels = [sequences[i] for i in kept], labels[kept]
    top = num_words or max(max(s) for s in sequences if s) + 1
    if oov_char is not None:
        sequences = [[w if skip_top <= w < top else oov_char for w in s] for s in sequences]
    else:
        sequences = [[w for w in s if skip_top <= w < top] for s in sequences]
    return sequences, labels


def as_object_array(sequences):
    result = np.empty(len(sequences), dtype=object)
    result[:] = sequences
    return result
