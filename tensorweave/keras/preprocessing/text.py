"""`tf.keras.preprocessing.text`: Keras's Tokenizer (a word index built from word counts, texts
to index sequences or to bag-of-words matrices), text_to_word_sequence, one_hot and
hashing_trick, with Keras's defaults (punctuation filtered, lower-cased, split on spaces)."""
import collections
import hashlib

import numpy as np

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(text, filters=FILTERS, lower=True, split=" "):
    if lower:
        text = text.lower()
    text = text.translate(str.maketrans({c: split for c in filters}))
    return [word for word in text.split(split) if word]


def hashing_trick(text, n, hash_function=None, filters=FILTERS, lower=True, split=" "):
    """Each word to (hash(word) % (n - 1)) + 1; hash_function 'md5' is stable across runs
    (Python's hash of str is not)."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(word):
            return int(hashlib.md5(word.encode()).hexdigest(), 16)
    return [hash_function(word) % (n - 1) + 1
            for word in text_to_word_sequence(text, filters, lower, split)]


def one_hot(text, n, filters=FILTERS, lower=True, split=" "):
    return hashing_trick(text, n, hash, filters, lower, split)


class Tokenizer:
    _MODES = ("binary", "count", "tfidf", "freq")

    def __init__(self, num_words=None, filters=FILTERS, lower=True, split=" ",
                 char_level=False, oov_token=None, document_count=0, **kwargs):
        if "nb_words" in kwargs:
            num_words = kwargs.pop("nb_words")
        if kwargs:
            raise TypeError(f"Tokenizer: unrecognized keyword arguments {sorted(kwargs)}")
        self.num_words, self.filters, self.lower, self.split = num_words, filters, lower, split
        self.char_level, self.oov_token = char_level, oov_token
        self.document_count = document_count
        self.word_counts = collections.OrderedDict()
        self.word_docs = collections.defaultdict(int)
        self.word_index, self.index_word, self.index_docs = {}, {}, collections.defaultdict(int)

    def _words(self, text):
        if self.char_level or isinstance(text, list):
            words = text if isinstance(text, list) else list(text)
            return [w.lower() for w in words] if self.lower else words
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts):
        """Counts the words; word_index numbers them from 1 by descending count (first seen
        first among equals), after oov_token when there is one."""
        for text in texts:
            self.document_count += 1
            words = self._words(text)
            for word in words:
                self.word_counts[word] = self.word_counts.get(word, 0) + 1
            for word in set(words):
                self.word_docs[word] += 1
        ranked = [w for w, _ in sorted(self.word_counts.items(), key=lambda item: -item[1])]
        if self.oov_token is not None:
            ranked = [self.oov_token] + ranked
        self.word_index = {word: index for index, word in enumerate(ranked, start=1)}
        self.index_word = {index: word for word, index in self.word_index.items()}
        self.index_docs = collections.defaultdict(int, {
            self.word_index[word]: count for word, count in self.word_docs.items()})

    def fit_on_sequences(self, sequences):
        self.document_count += len(sequences)
        for sequence in sequences:
            for index in set(sequence):
                self.index_docs[index] += 1

    def texts_to_sequences(self, texts):
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            sequence = []
            for word in self._words(text):
                index = self.word_index.get(word)
                if index is not None and not (self.num_words and index >= self.num_words):
                    sequence.append(index)
                elif oov is not None:
                    sequence.append(oov)
            yield sequence

    def sequences_to_texts(self, sequences):
        oov = self.word_index.get(self.oov_token)
        texts = []
        for sequence in sequences:
            words = []
            for index in sequence:
                if index in self.index_word and not (self.num_words and index >= self.num_words):
                    words.append(self.index_word[index])
                elif oov is not None:
                    words.append(self.index_word[oov])
            texts.append(" ".join(words))
        return texts

    def texts_to_matrix(self, texts, mode="binary"):
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """[len(sequences), num_words] rows: presence, counts, frequencies or TF-IDF
        ((1 + log count) * log(1 + documents / (1 + documents with the word)))."""
        if mode not in self._MODES:
            raise ValueError(f"Tokenizer.sequences_to_matrix: unknown mode {mode!r} (one of "
                             f"{self._MODES})")
        width = self.num_words or (len(self.word_index) + 1 if self.word_index else None)
        if width is None:
            raise ValueError("Specify num_words or fit the Tokenizer on texts first")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer before using tfidf mode")
        matrix = np.zeros((len(sequences), width))
        for row, sequence in enumerate(sequences):
            if not len(sequence):
                continue
            counts = collections.Counter(index for index in sequence if index < width)
            for index, count in counts.items():
                if mode == "count":
                    matrix[row, index] = count
                elif mode == "freq":
                    matrix[row, index] = count / len(sequence)
                elif mode == "binary":
                    matrix[row, index] = 1
                else:
                    matrix[row, index] = (1 + np.log(count)) * np.log(
                        1 + self.document_count / (1 + self.index_docs.get(index, 0)))
        return matrix

    def get_config(self):
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower,
                "split": self.split, "char_level": self.char_level,
                "oov_token": self.oov_token, "document_count": self.document_count}
