"""`learn.preprocessing.VocabularyProcessor`: documents to fixed-length arrays of word ids
(0-padded, id 0 also for unknown words), with TF 1.x's tokenizer. Saved as JSON (TF pickled
the object; a JSON file cannot run code when read)."""
import json
import re

import numpy as np

from tensorweave.framework import file_io
from tensorweave.contrib.learn.preprocessing.categorical_vocabulary import CategoricalVocabulary

TOKENIZER_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z][a-z]+(?=[A-Z])|[\'\w\-]+", re.UNICODE)
_FORMAT = "tensorweave-vocabulary-processor"


def tokenizer(iterator):
    """Each document's tokens: words (with ' and -), capitalised runs split CamelCase."""
    for value in iterator:
        yield TOKENIZER_RE.findall(value)


class ByteProcessor:
    """Documents to fixed-length arrays of their UTF-8 bytes (0-padded)."""

    def __init__(self, max_document_length):
        self.max_document_length = max_document_length

    def fit(self, x):
        return self

    def fit_transform(self, x):
        return self.transform(x)

    def reverse(self, x):
        for data in x:
            yield bytes(int(b) for b in data).rstrip(b"\x00").decode("utf-8", "ignore")

    def transform(self, x):
        for document in x:
            raw = document.encode("utf-8") if isinstance(document, str) else bytes(document)
            row = np.zeros(self.max_document_length, dtype=np.uint8)
            raw = raw[:self.max_document_length]
            row[:len(raw)] = np.frombuffer(raw, dtype=np.uint8)
            yield row


class VocabularyProcessor:
    """Maps documents to [max_document_length] arrays of word ids."""

    def __init__(self, max_document_length, min_frequency=0, vocabulary=None,
                 tokenizer_fn=None):
        self.max_document_length = max_document_length
        self.min_frequency = min_frequency
        self.vocabulary_ = vocabulary if vocabulary is not None else CategoricalVocabulary()
        self._tokenizer = tokenizer_fn or tokenizer

    def fit(self, raw_documents, unused_y=None):
        """Learns the vocabulary of `raw_documents` (then trims and freezes it)."""
        for tokens in self._tokenizer(raw_documents):
            for token in tokens:
                self.vocabulary_.add(token)
        if self.min_frequency > 0:
            self.vocabulary_.trim(self.min_frequency)
        self.vocabulary_.freeze()
        return self

    def fit_transform(self, raw_documents, unused_y=None):
        self.fit(raw_documents)
        return self.transform(raw_documents)

    def transform(self, raw_documents):
        """Yields one int64 array of word ids per document."""
        for tokens in self._tokenizer(raw_documents):
            word_ids = np.zeros(self.max_document_length, np.int64)
            for index, token in enumerate(tokens[:self.max_document_length]):
                word_ids[index] = self.vocabulary_.get(token)
            yield word_ids

    def reverse(self, documents):
        """Yields the words of each array of ids, joined by spaces."""
        for item in documents:
            yield " ".join(self.vocabulary_.reverse(class_id) for class_id in item)

    def save(self, filename):
        vocabulary = self.vocabulary_
        state = {"format": _FORMAT, "max_document_length": self.max_document_length,
                 "min_frequency": self.min_frequency,
                 "unknown_token": vocabulary._unknown_token,
                 "support_reverse": vocabulary._support_reverse,
                 "frozen": vocabulary._freeze,
                 "mapping": sorted(vocabulary._mapping.items(), key=lambda kv: kv[1]),
                 "freq": sorted(vocabulary._freq.items())}
        if self._tokenizer is not tokenizer:
            state["custom_tokenizer"] = True
        with file_io.GFile(filename, "w") as handle:
            handle.write(json.dumps(state))

    @classmethod
    def restore(cls, filename):
        """The processor saved at `filename` (a custom tokenizer_fn is not saved: set
        `processor._tokenizer` again after restoring)."""
        with file_io.GFile(filename, "r") as handle:
            try:
                state = json.loads(handle.read())
            except ValueError:
                state = None
        if not isinstance(state, dict) or state.get("format") != _FORMAT:
            raise ValueError(f"{filename} is not a VocabularyProcessor saved by tensorweave")
        vocabulary = CategoricalVocabulary(state["unknown_token"], state["support_reverse"])
        vocabulary._mapping = {key: index for key, index in state["mapping"]}
        if state["support_reverse"]:
            vocabulary._reverse_mapping = [key for key, _ in state["mapping"]]
        vocabulary._freq.update(dict(state["freq"]))
        vocabulary._freeze = state["frozen"]
        return cls(state["max_document_length"], state["min_frequency"], vocabulary)
