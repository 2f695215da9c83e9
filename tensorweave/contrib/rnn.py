"""`tf.contrib.rnn`: TF 1.x's cells, wrappers and RNN drivers under their contrib names, and
the fused LSTM cells (LSTMBlockCell, LSTMBlockFusedCell), and contrib's own cells and stacked
bidirectional RNNs (_rnn_cells.py, _rnn_cells_more.py, _rnn_cells_lstm_variants.py,
_rnn_cells_grid.py). Re-exports only."""
from tensorweave.layers.rnn_cell_impl import (RNNCell, LayerRNNCell, BasicRNNCell,  # noqa: F401
                                              GRUCell, BasicLSTMCell, LSTMCell,
                                              LSTMStateTuple)
from tensorweave.layers.rnn_cell_wrappers import (MultiRNNCell, DropoutWrapper,  # noqa: F401
                                                  ResidualWrapper, DeviceWrapper)
from tensorweave.layers.rnn_cell_block import LSTMBlockCell, LSTMBlockFusedCell  # noqa: F401
from tensorweave.ops.rnn_unrolled import static_rnn, static_bidirectional_rnn  # noqa: F401
from tensorweave.ops.rnn import dynamic_rnn  # noqa: F401
from tensorweave.contrib._rnn_cells import (EmbeddingWrapper, GRUBlockCell,  # noqa: F401
                                           GRUBlockCellV2, HighwayWrapper,
                                           InputProjectionWrapper, LayerNormBasicLSTMCell,
                                           OutputProjectionWrapper,
                                           stack_bidirectional_dynamic_rnn,
                                           stack_bidirectional_rnn)
from tensorweave.contrib._rnn_cells_more import (  # noqa: F401,E402
    ConvLSTMCell, Conv1DLSTMCell, Conv2DLSTMCell, Conv3DLSTMCell, UGRNNCell, SRUCell,
    IndRNNCell, IndyGRUCell, IndyLSTMCell, FusedRNNCellAdaptor, TimeReversedFusedRNN,
    best_effort_input_batch_size, NASCell, AttentionCellWrapper, LayerNormLSTMCell)
from tensorweave.contrib._rnn_cells_lstm_variants import (  # noqa: F401,E402
    CoupledInputForgetGateLSTMCell, PhasedLSTMCell, TimeFreqLSTMCell)
from tensorweave.contrib._rnn_cells_grid import (  # noqa: F401,E402
    BidirectionalGridLSTMCell, GridLSTMCell)
