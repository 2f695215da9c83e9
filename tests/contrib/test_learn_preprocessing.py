"""tf.contrib.learn.preprocessing: VocabularyProcessor and CategoricalVocabulary as TF 1.x's
(ids by first sight, 0 for padding and unknown words, trimming by frequency, reverse, save and
restore), the tokenizer, and ByteProcessor."""
import numpy as np
import pytest

import tensorweave as tf

learn = tf.contrib.learn


def test_fit_transform_reverse_and_unknown_words():
    processor = learn.preprocessing.VocabularyProcessor(4)
    ids = np.array(list(processor.fit_transform(["a b c", "a b", "c d e f g"])))
    np.testing.assert_array_equal(ids, [[1, 2, 3, 0], [1, 2, 0, 0], [3, 4, 5, 6]])
    assert len(processor.vocabulary_) == 8            # <UNK> + a..g
    np.testing.assert_array_equal(list(processor.transform(["b zz a"])), [[2, 0, 1, 0]])
    assert list(processor.reverse([[2, 0, 1, 0]])) == ["b <UNK> a <UNK>"]


def test_min_frequency_keeps_frequent_words_ordered_by_count():
    processor = learn.preprocessing.VocabularyProcessor(3, min_frequency=1)
    processor.fit(["x y y", "z y x", "w"])
    vocabulary = processor.vocabulary_
    assert [vocabulary.get(w) for w in ("y", "x", "z", "w")] == [1, 2, 0, 0]
    assert vocabulary.reverse(1) == "y" and len(vocabulary) == 3


def test_tokenizer_and_byte_processor():
    tokens = list(learn.preprocessing.tokenizer(["HelloWorld it's the NASA-run test"]))
    assert tokens == [["Hello", "World", "it's", "the", "NASA", "-run", "test"]]
    processor = learn.preprocessing.ByteProcessor(6)
    rows = list(processor.transform(["héllo!", "ab"]))
    np.testing.assert_array_equal(rows[1], [97, 98, 0, 0, 0, 0])
    assert list(processor.reverse(rows)) == ["héllo", "ab"]


def test_save_and_restore(tmp_path):
    processor = learn.preprocessing.VocabularyProcessor(5)
    processor.fit(["the cat sat", "the dog"])
    path = str(tmp_path / "vocab")
    processor.save(path)
    restored = learn.preprocessing.VocabularyProcessor.restore(path)
    np.testing.assert_array_equal(list(restored.transform(["the dog sat down"])),
                                  list(processor.transform(["the dog sat down"])))
    assert restored.max_document_length == 5 and len(restored.vocabulary_) == 5
    (tmp_path / "junk").write_text("not json")
    with pytest.raises(ValueError, match="not a VocabularyProcessor"):
        learn.preprocessing.VocabularyProcessor.restore(str(tmp_path / "junk"))
    from tensorweave.contrib.learn.python.learn.preprocessing import VocabularyProcessor
    assert VocabularyProcessor is learn.preprocessing.VocabularyProcessor
