"""tf.keras.preprocessing.text: Tokenizer's word index (by descending count, oov first), its
sequences and bag-of-words matrices, against values worked out by hand (and matching TF's
Keras on the same texts)."""
import numpy as np
import pytest

import tensorweave as tf

text = tf.keras.preprocessing.text
TEXTS = ["The cat sat.", "The dog sat on the mat!"]


def test_word_index_and_sequences_with_oov_and_num_words():
    tokenizer = text.Tokenizer(num_words=4, oov_token="<unk>")
    tokenizer.fit_on_texts(TEXTS)
    # counts: the 3, sat 2, then cat, dog, on, mat once each in first-seen order
    assert tokenizer.word_index == {"<unk>": 1, "the": 2, "sat": 3, "cat": 4, "dog": 5,
                                    "on": 6, "mat": 7}
    assert tokenizer.texts_to_sequences(["the cat and the mat"]) == [[2, 1, 1, 2, 1]]
    assert tokenizer.sequences_to_texts([[2, 3, 9]]) == ["the sat <unk>"]


def test_matrices_in_each_mode():
    tokenizer = text.Tokenizer()
    tokenizer.fit_on_texts(TEXTS)  # the 1, sat 2, cat 3, dog 4, on 5, mat 6
    rows = ["the cat the"]
    np.testing.assert_array_equal(tokenizer.texts_to_matrix(rows, "binary")[0],
                                  [0, 1, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(tokenizer.texts_to_matrix(rows, "count")[0],
                                  [0, 2, 0, 1, 0, 0, 0])
    np.testing.assert_allclose(tokenizer.texts_to_matrix(rows, "freq")[0],
                               [0, 2 / 3, 0, 1 / 3, 0, 0, 0])
    tfidf = tokenizer.texts_to_matrix(rows, "tfidf")[0]
    # "the" is in both documents, "cat" in one: (1 + log count) * log(1 + 2 / (1 + docs))
    np.testing.assert_allclose(tfidf[[1, 3]], [(1 + np.log(2)) * np.log(1 + 2 / 3), np.log(2)])
    with pytest.raises(ValueError, match="unknown mode"):
        tokenizer.texts_to_matrix(rows, "bm25")


def test_word_sequences_and_stable_hashing():
    assert text.text_to_word_sequence("Hello, World! It's a-test") == [
        "hello", "world", "it's", "a", "test"]
    hashed = text.hashing_trick("a b a", 10, "md5")
    assert hashed[0] == hashed[2] and all(1 <= h <= 9 for h in hashed)
