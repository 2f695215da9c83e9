"""`tf.contrib.seq2seq` (TF 1.15): sequence-to-sequence decoding: the sequence loss, helpers,
BasicDecoder and dynamic_decode, attention mechanisms and AttentionWrapper, and beam search.
Re-exports only."""
from tensorweave.contrib.seq2seq.loss import sequence_loss  # noqa: F401
from tensorweave.contrib.seq2seq.helper import (Helper, CustomHelper,  # noqa: F401
                                                TrainingHelper, GreedyEmbeddingHelper,
                                                SampleEmbeddingHelper,
                                                ScheduledEmbeddingTrainingHelper,
                                                ScheduledOutputTrainingHelper,
                                                InferenceHelper)
from tensorweave.contrib.seq2seq.decoder import Decoder, dynamic_decode  # noqa: F401
from tensorweave.contrib.seq2seq.basic_decoder import (BasicDecoder,  # noqa: F401
                                                       BasicDecoderOutput)
from tensorweave.contrib.seq2seq.attention_mechanisms import (  # noqa: F401
    AttentionMechanism, BahdanauAttention, LuongAttention, BahdanauMonotonicAttention,
    LuongMonotonicAttention, hardmax, safe_cumprod, monotonic_attention)
from tensorweave.contrib.seq2seq.attention_wrapper import (AttentionWrapper,  # noqa: F401
                                                           AttentionWrapperState)
from tensorweave.contrib.seq2seq.beam_search_ops import gather_tree, tile_batch  # noqa: F401
from tensorweave.contrib.seq2seq.beam_search_decoder import (  # noqa: F401
    BeamSearchDecoder, BeamSearchDecoderOutput, BeamSearchDecoderState,
    FinalBeamSearchDecoderOutput)
