"""`tf.contrib.legacy_seq2seq`: TF 1.0's sequence-to-sequence models over lists of time steps
(the translate and PTB/char-rnn tutorials): sequence losses, rnn_decoder and the basic / tied /
embedding / attention encoder-decoders, and model_with_buckets.

Inputs and outputs are Python lists with one [batch, ...] tensor per time step, as in TF 1.x.
`feed_previous=True` (or a loop_function) feeds each step the previous step's output (its
argmax, embedded) instead of the given decoder input. Variable names follow TF 1.x's
(embedding_rnn_seq2seq/embedding_rnn_decoder/embedding, attention_decoder/AttnW_0, ...).
"""
import copy

from tensorweave.framework import nest
from tensorweave.contrib._rnn_cells import (EmbeddingWrapper, OutputProjectionWrapper,
                                           _linear)
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.ops import (array_ops, conv_ops, math_ops, nn_impl, nn_ops,
                             reduction_ops, variable_scope)
from tensorweave.ops.rnn_unrolled import static_rnn


# --- losses ---------------------------------------------------------------------------------------
def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True,
                             softmax_loss_function=None, name=None):
    """Per-example weighted cross entropy summed over the time steps ([batch]); divided by the
    summed weights with average_across_timesteps."""
    if not len(logits) == len(targets) == len(weights):
        raise ValueError(f"Lengths of logits, weights, and targets must be the same "
                         f"{len(logits)}, {len(weights)}, {len(targets)}.")
    with name_scope(name, "sequence_loss_by_example", logits + targets + weights):
        losses = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                target = array_ops.reshape(target, [-1])
                crossent = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=target,
                                                                           logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            losses.append(crossent * weight)
        total = math_ops.add_n(losses)
        if average_across_timesteps:
            total = total / (math_ops.add_n(list(weights)) + 1e-12)
        return total


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, softmax_loss_function=None, name=None):
    """sequence_loss_by_example summed over the batch (averaged with average_across_batch)."""
    with name_scope(name, "sequence_loss", logits + targets + weights):
        cost = reduction_ops.reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps, softmax_loss_function))
        if average_across_batch:
            batch = array_ops.shape(targets[0])[0]
            return cost / math_ops.cast(batch, cost.dtype)
        return cost


# --- decoders -------------------------------------------------------------------------------------
def rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    """Runs `cell` over the decoder inputs from initial_state; returns (outputs, state)."""
    with variable_scope.variable_scope(scope or "rnn_decoder"):
        state, outputs, prev = initial_state, [], None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with variable_scope.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                variable_scope.get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def basic_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, dtype=dtypes.float32, scope=None):
    """Encodes with a copy of `cell`, decodes with `cell` from the encoder's final state."""
    with variable_scope.variable_scope(scope or "basic_rnn_seq2seq"):
        encoder_cell = copy.deepcopy(cell)
        _, state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        return rnn_decoder(decoder_inputs, state, cell)


def tied_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, loop_function=None,
                     dtype=dtypes.float32, scope=None):
    """basic_rnn_seq2seq with the encoder and decoder sharing one set of variables."""
    with variable_scope.variable_scope("combined_tied_rnn_seq2seq"):
        scope = scope or "tied_rnn_seq2seq"
        _, state = static_rnn(cell, encoder_inputs, dtype=dtype, scope=scope)
        variable_scope.get_variable_scope().reuse_variables()
        return rnn_decoder(decoder_inputs, state, cell, loop_function=loop_function,
                           scope=scope)


def _extract_argmax_and_embed(embedding, output_projection=None,
                              update_embedding=True):
    """A loop function: the previous output's argmax symbol (after the projection), embedded
    (with the gradient stopped at the embedding unless update_embedding)."""
    def loop_function(prev, _):
        if output_projection is not None:
            prev = conv_ops.bias_add(math_ops.matmul(prev, output_projection[0]),
                                     output_projection[1])
        symbol = reduction_ops.argmax(prev, 1)
        embedded = nn_impl.embedding_lookup(embedding, symbol)
        return embedded if update_embedding else array_ops.stop_gradient(embedded)
    return loop_function


def _projection(output_projection, num_symbols, dtype):
    if output_projection is None:
        return None
    weights = convert_to_tensor(output_projection[0], dtype=dtype)
    biases = convert_to_tensor(output_projection[1], dtype=dtype)
    weights.shape.assert_is_compatible_with([None, num_symbols])
    biases.shape.assert_is_compatible_with([num_symbols])
    return weights, biases


def embedding_rnn_decoder(decoder_inputs, initial_state, cell, num_symbols, embedding_size,
                          output_projection=None, feed_previous=False,
                          update_embedding_for_previous=True, scope=None):
    """rnn_decoder over embedded symbol inputs ([batch] int32 each)."""
    with variable_scope.variable_scope(scope or "embedding_rnn_decoder"):
        embedded, loop_function = _embedded_decoder_inputs(
            decoder_inputs, num_symbols, embedding_size, output_projection, feed_previous,
            update_embedding_for_previous, nest.flatten(initial_state)[0].dtype)
        return rnn_decoder(embedded, initial_state, cell, loop_function=loop_function)


def _embedded_decoder_inputs(decoder_inputs, num_symbols, embedding_size, output_projection,
                             feed_previous, update_embedding_for_previous, dtype):
    """(the decoder inputs looked up in a new "embedding" variable, the loop function feeding
    back the previous output's symbol when feed_previous)."""
    projection = _projection(output_projection, num_symbols, dtype)
    embedding = variable_scope.get_variable("embedding", [num_symbols, embedding_size],
                                            dtype=dtype)
    loop_function = _extract_argmax_and_embed(
        embedding, projection, update_embedding_for_previous) if feed_previous else None
    return [nn_impl.embedding_lookup(embedding, i) for i in decoder_inputs], loop_function


def embedding_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols,
                          num_decoder_symbols, embedding_size, output_projection=None,
                          feed_previous=False, dtype=None, scope=None):
    """Embedded encoder (a copy of `cell` in an EmbeddingWrapper) into an embedding decoder;
    without output_projection the decoder's outputs are projected to num_decoder_symbols."""
    if not isinstance(feed_previous, bool):
        raise TypeError("embedding_rnn_seq2seq: feed_previous must be a Python bool here "
                        "(build the model twice, sharing variables, for both modes)")
    with variable_scope.variable_scope(scope or "embedding_rnn_seq2seq"):
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), num_encoder_symbols,
                                        embedding_size)
        _, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
        return embedding_rnn_decoder(decoder_inputs, encoder_state, cell, num_decoder_symbols,
                                     embedding_size, output_projection=output_projection,
                                     feed_previous=feed_previous)


def embedding_tied_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, num_symbols,
                               embedding_size, num_decoder_symbols=None,
                               output_projection=None, feed_previous=False, dtype=None,
                               scope=None):
    """One embedding and one cell shared by the encoder and the decoder."""
    with variable_scope.variable_scope(scope or "embedding_tied_rnn_seq2seq"):
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        output_symbols = num_decoder_symbols or num_symbols
        projection = _projection(output_projection, output_symbols, dtype)
        embedding = variable_scope.get_variable("embedding", [num_symbols, embedding_size],
                                                dtype=dtype)
        encoder_embedded = [nn_impl.embedding_lookup(embedding, x) for x in encoder_inputs]
        decoder_embedded = [nn_impl.embedding_lookup(embedding, x) for x in decoder_inputs]
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, output_symbols)
        loop_function = _extract_argmax_and_embed(embedding, projection, True) \
            if feed_previous else None
        return tied_rnn_seq2seq(encoder_embedded, decoder_embedded, cell,
                                loop_function=loop_function, dtype=dtype)


def attention_decoder(decoder_inputs, initial_state, attention_states, cell, output_size=None,
                      num_heads=1, loop_function=None, dtype=None, scope=None,
                      initial_state_attention=False):
    """An RNN decoder attending over attention_states ([batch, length, size]) with
    `num_heads` additive (Bahdanau) heads; each step's input is mixed with the previous
    attention reads, and its output projected with the new ones (AttnOutputProjection)."""
    if not decoder_inputs:
        raise ValueError("attention_decoder: must provide at least 1 input")
    if num_heads < 1:
        raise ValueError("attention_decoder: with less than 1 heads, use a non-attention "
                         "decoder")
    dims = attention_states.shape.as_list()
    if len(dims) != 3 or dims[2] is None or dims[1] is None:
        raise ValueError(f"attention_decoder: attention_states must be [batch, length, size] "
                         f"with length and size known, got {attention_states.shape}")
    output_size = output_size or cell.output_size
    with variable_scope.variable_scope(scope or "attention_decoder", dtype=dtype):
        dtype = dtypes.as_dtype(dtype) if dtype is not None else attention_states.dtype
        batch = array_ops.shape(decoder_inputs[0])[0]
        length, size = dims[1], dims[2]
        hidden = array_ops.reshape(attention_states, [-1, length, 1, size])
        features, vectors = [], []
        for head in range(num_heads):
            kernel = variable_scope.get_variable(f"AttnW_{head}", [1, 1, size, size],
                                                 dtype=dtype)
            features.append(conv_ops.conv2d(hidden, kernel, [1, 1, 1, 1], "SAME"))
            vectors.append(variable_scope.get_variable(f"AttnV_{head}", [size], dtype=dtype))

        def attention(query):
            query = array_ops.concat(nest.flatten(query), 1) if nest.is_nested(query) \
                else query
            reads = []
            for head in range(num_heads):
                with variable_scope.variable_scope(f"Attention_{head}"):
                    projected = array_ops.reshape(_linear([query], size, True), [-1, 1, 1, size])
                    scores = reduction_ops.reduce_sum(
                        vectors[head] * math_ops.tanh(features[head] + projected), [2, 3])
                    weights = nn_ops.softmax(scores)
                    read = reduction_ops.reduce_sum(
                        array_ops.reshape(weights, [-1, length, 1, 1]) * hidden, [1, 2])
                    reads.append(array_ops.reshape(read, [-1, size]))
            return reads

        state, outputs, prev = initial_state, [], None
        zeros = array_ops.zeros(array_ops.stack([batch, size]), dtype=dtype)
        reads = [zeros for _ in range(num_heads)]
        for read in reads:
            read.set_shape([None, size])
        if initial_state_attention:
            reads = attention(initial_state)
        for i, inp in enumerate(decoder_inputs):
            if i > 0:
                variable_scope.get_variable_scope().reuse_variables()
            if loop_function is not None and prev is not None:
                with variable_scope.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            input_size = inp.shape.as_list()[1]
            if input_size is None:
                raise ValueError(f"attention_decoder: could not infer input size from "
                                 f"{inp.name}")
            mixed = _linear([inp] + reads, input_size, True)
            cell_output, state = cell(mixed, state)
            if i == 0 and initial_state_attention:
                with variable_scope.variable_scope(variable_scope.get_variable_scope(),
                                                   reuse=True):
                    reads = attention(state)
            else:
                reads = attention(state)
            with variable_scope.variable_scope("AttnOutputProjection"):
                output = _linear([cell_output] + reads, output_size, True)
            if loop_function is not None:
                prev = output
            outputs.append(output)
    return outputs, state


def embedding_attention_decoder(decoder_inputs, initial_state, attention_states, cell,
                                num_symbols, embedding_size, num_heads=1, output_size=None,
                                output_projection=None, feed_previous=False,
                                update_embedding_for_previous=True, dtype=None, scope=None,
                                initial_state_attention=False):
    """attention_decoder over embedded symbol inputs."""
    output_size = output_size or (cell.output_size if output_projection is None else None)
    with variable_scope.variable_scope(scope or "embedding_attention_decoder", dtype=dtype) \
            as opened:
        embedded, loop_function = _embedded_decoder_inputs(
            decoder_inputs, num_symbols, embedding_size, output_projection, feed_previous,
            update_embedding_for_previous, opened.dtype or dtypes.float32)
        return attention_decoder(embedded, initial_state, attention_states, cell,
                                 output_size=output_size or cell.output_size,
                                 num_heads=num_heads, loop_function=loop_function,
                                 initial_state_attention=initial_state_attention)


def embedding_attention_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols,
                                num_decoder_symbols, embedding_size, num_heads=1,
                                output_projection=None, feed_previous=False, dtype=None,
                                scope=None, initial_state_attention=False):
    """The translate tutorial's model: an embedded encoder whose outputs the embedded
    attention decoder attends over."""
    if not isinstance(feed_previous, bool):
        raise TypeError("embedding_attention_seq2seq: feed_previous must be a Python bool "
                        "here (build the model twice, sharing variables, for both modes)")
    with variable_scope.variable_scope(scope or "embedding_attention_seq2seq", dtype=dtype) \
            as opened:
        dtype = opened.dtype or dtypes.float32
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), num_encoder_symbols,
                                        embedding_size)
        encoder_outputs, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        top = [array_ops.reshape(e, [-1, 1, cell.output_size]) for e in encoder_outputs]
        attention_states = array_ops.concat(top, 1)
        output_size = None
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
            output_size = num_decoder_symbols
        return embedding_attention_decoder(
            decoder_inputs, encoder_state, attention_states, cell, num_decoder_symbols,
            embedding_size, num_heads=num_heads, output_size=output_size,
            output_projection=output_projection, feed_previous=feed_previous,
            initial_state_attention=initial_state_attention)


def model_with_buckets(encoder_inputs, decoder_inputs, targets, weights, buckets, seq2seq,
                       softmax_loss_function=None, per_example_loss=False, name=None):
    """One model per (encoder length, decoder length) bucket, sharing variables; returns
    (outputs per bucket, losses per bucket)."""
    if len(encoder_inputs) < buckets[-1][0]:
        raise ValueError(f"Length of the encoder inputs ({len(encoder_inputs)}) must be at "
                         f"least that of the last bucket ({buckets[-1][0]}).")
    if len(targets) < buckets[-1][1] or len(weights) < buckets[-1][1]:
        raise ValueError(f"Length of targets ({len(targets)}) and weights ({len(weights)}) "
                         f"must be at least that of the last bucket ({buckets[-1][1]}).")
    losses, outputs = [], []
    with name_scope(name, "model_with_buckets"):
        for j, (enc_len, dec_len) in enumerate(buckets):
            with variable_scope.variable_scope(variable_scope.get_variable_scope(),
                                               reuse=True if j > 0 else None):
                bucket_outputs, _ = seq2seq(encoder_inputs[:enc_len], decoder_inputs[:dec_len])
                outputs.append(bucket_outputs)
                loss_fn = sequence_loss_by_example if per_example_loss else sequence_loss
                losses.append(loss_fn(outputs[-1], targets[:dec_len], weights[:dec_len],
                                      softmax_loss_function=softmax_loss_function))
    return outputs, losses
