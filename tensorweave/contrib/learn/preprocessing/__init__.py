"""`tf.contrib.learn.preprocessing`: text to word-id arrays (VocabularyProcessor, its
tokenizer, ByteProcessor) and CategoricalVocabulary. Re-exports only."""
from tensorweave.contrib.learn.preprocessing.categorical_vocabulary import (  # noqa: F401
    CategoricalVocabulary)
from tensorweave.contrib.learn.preprocessing.text import (ByteProcessor,  # noqa: F401
                                                          VocabularyProcessor, tokenizer)
from tensorweave.contrib.learn.preprocessing import text  # noqa: F401
