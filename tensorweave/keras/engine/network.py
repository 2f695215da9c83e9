"""The functional network: `Model(inputs, outputs)` walks back from its outputs through the
recorded layer calls (nodes) to its inputs, and so knows its layers, weights, updates and losses.
Raw TensorFlow ops between Keras layers are allowed (the walk passes through them), but such a
network can only run on its own inputs: calling it on new tensors replays layer calls, which
needs every step to be a layer.

A subclassed Model (`call` overridden, layers assigned as attributes) is built on first use:
placeholders shaped like the first data it sees (or `build(input_shape)`), then `call` on them.
"""
import numpy as np

from tensorweave.framework import graph as graph_lib
from tensorweave.keras import backend
from tensorweave.keras.engine import node as node_lib
from tensorweave.keras.engine import serialization
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_layer import InputLayer
from tensorweave.layers import base
from tensorweave.ops import array_ops


class Network(Layer):
    def __init__(self, *args, **kwargs):
        inputs = kwargs.pop("inputs", args[0] if args else None)
        outputs = kwargs.pop("outputs", args[1] if len(args) > 1 else None)
        name = kwargs.pop("name", None)
        trainable = kwargs.pop("trainable", True)
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        self._tracked_layers = []
        Layer.__init__(self, trainable=trainable, name=name)
        self.inputs, self.outputs = [], []
        self._network_nodes, self._network_layers = [], []
        self._is_graph_network = False
        self._has_raw_ops = False
        self._single_input = self._single_output = True
        if (inputs is None) != (outputs is None):
            raise ValueError("A functional Model needs both `inputs` and `outputs`")
        if inputs is not None:
            self._init_graph_network(inputs, outputs)

    def __setattr__(self, name, value):
        tracked = self.__dict__.get("_tracked_layers")
        if tracked is not None and isinstance(value, base.Layer) and value is not self and \
                not any(value is layer for layer in tracked):
            tracked.append(value)
        super().__setattr__(name, value)

    # --- the graph of layers ------------------------------------------------------------------
    def _init_graph_network(self, inputs, outputs):
        self._single_input = not isinstance(inputs, (list, tuple))
        self._single_output = not isinstance(outputs, (list, tuple))
        self.inputs = node_lib.flatten(inputs)
        self.outputs = node_lib.flatten(outputs)
        for tensor in self.inputs + self.outputs:
            if not node_lib.is_graph_tensor(tensor):
                raise TypeError(f"Model {self.name}: inputs and outputs must be graph tensors, "
                                f"got {tensor!r}")
        for tensor in self.inputs:
            if node_lib.keras_history(tensor) is None:  # a raw tf.placeholder: adopt it
                InputLayer(input_tensor=tensor, name=tensor.op.name)
        nodes, layers, seen_nodes, seen_tensors = [], [], set(), set()
        input_set = set(self.inputs)

        def visit(tensor):
            if tensor in seen_tensors:
                return
            seen_tensors.add(tensor)
            history = node_lib.keras_history(tensor)
            if history is None or (tensor in input_set and
                                   not isinstance(history[0], InputLayer)):
                if tensor in input_set:
                    history = node_lib.keras_history(tensor)
                else:
                    if tensor.op.type == "Placeholder":
                        raise ValueError(
                            f"Graph disconnected: cannot obtain value for tensor "
                            f"{tensor.name} (a placeholder that is not among the inputs of "
                            f"model {self.name}: {[t.name for t in self.inputs]})")
                    self._has_raw_ops = True
                    for source in tensor.op.inputs:
                        visit(source)
                    return
            layer, node_index, _ = history
            node = layer._inbound_nodes[node_index]
            if id(node) in seen_nodes:
                return
            seen_nodes.add(id(node))
            if isinstance(layer, InputLayer) and tensor not in input_set and \
                    layer.is_placeholder:
                raise ValueError(f"Graph disconnected: cannot obtain value for tensor "
                                 f"{tensor.name} at layer {layer.name!r}: it is not among the "
                                 f"inputs of model {self.name}")
            if tensor not in input_set:
                for source in node.input_tensors:
                    visit(source)
            nodes.append(node)
            if not any(layer is known for known in layers):
                layers.append(layer)

        for tensor in self.inputs:
            visit(tensor)
        for tensor in self.outputs:
            visit(tensor)
        self._network_nodes, self._network_layers = nodes, layers
        self._is_graph_network = True
        self.built = True

    @property
    def input(self):
        if not self.inputs:
            raise AttributeError(f"Model {self.name} is not built: it has no input yet")
        return self.inputs[0] if len(self.inputs) == 1 else list(self.inputs)

    @property
    def output(self):
        if not self.outputs:
            raise AttributeError(f"Model {self.name} is not built: it has no output yet")
        return self.outputs[0] if len(self.outputs) == 1 else list(self.outputs)

    @property
    def layers(self):
        if self._is_graph_network:
            return list(self._network_layers)
        return list(self._tracked_layers)

    def get_layer(self, name=None, index=None):
        if index is not None:
            if index >= len(self.layers):
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only "
                                 f"has {len(self.layers)} layers.")
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}")

    def _all_layers(self):
        layers = list(self.layers)
        for layer in self._tracked_layers:
            if not any(layer is known for known in layers):
                layers.append(layer)
        return layers

    def _gather(self, attribute):
        found, seen = [], set()
        for layer in self._all_layers():
            for variable in getattr(layer, attribute):
                if id(variable) not in seen:
                    seen.add(id(variable))
                    found.append(variable)
        return found

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        own = list(self._trainable_weights)
        return own + [w for w in self._gather("trainable_weights") if w not in set(own)]

    @property
    def non_trainable_weights(self):
        own = list(self._non_trainable_weights)
        if not self.trainable:
            own = list(self._trainable_weights) + own
            return own + [w for w in self._gather("weights") if w not in set(own)]
        return own + [w for w in self._gather("non_trainable_weights") if w not in set(own)]

    @property
    def weights(self):
        return self.trainable_weights + [w for w in self.non_trainable_weights
                                         if w not in set(self.trainable_weights)]

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def updates(self):
        """The update ops (e.g. BatchNormalization's moving averages) of this network's own
        layer calls; fit runs them with each training step."""
        if self._is_graph_network:
            return [u for node in self._network_nodes for u in node.updates]
        return [u for layer in self._all_layers() for u in layer.updates]

    @property
    def weight_regularization_losses(self):
        losses = list(self._weight_losses)
        for layer in self._all_layers():
            losses += layer.weight_regularization_losses
        return losses

    @property
    def losses(self):
        """Weight regularisation of every layer, plus the activity regularisation of this
        network's layer calls."""
        losses = self.weight_regularization_losses
        if self._is_graph_network:
            return losses + [loss for node in self._network_nodes for loss in node.losses]
        return losses + [loss for layer in self._all_layers() for loss in layer.losses
                         if loss not in set(losses)]

    def reset_states(self):
        """Zeroes the states of the stateful RNN layers."""
        for layer in self.layers:
            if getattr(layer, "stateful", False):
                layer.reset_states()
            elif isinstance(layer, Network):
                layer.reset_states()

    # --- calling on new tensors ---------------------------------------------------------------
    def call(self, inputs, training=None, mask=None):
        if not self._is_graph_network:
            raise NotImplementedError(f"Model {self.name}: a subclassed Model must implement "
                                      "call(inputs)")
        if self._has_raw_ops:
            raise ValueError(f"Model {self.name} has raw TensorFlow ops between its layers: it "
                             "runs on its own inputs (fit, predict, ...) but cannot be called "
                             "on new tensors. Wrap the ops in a Lambda layer.")
        new_inputs = node_lib.flatten(inputs)
        if len(new_inputs) != len(self.inputs):
            raise ValueError(f"Model {self.name} expects {len(self.inputs)} inputs, got "
                             f"{len(new_inputs)}")
        mapping = dict(zip(self.inputs, new_inputs))
        for node in self._network_nodes:
            if isinstance(node.layer, InputLayer):
                continue
            arguments = dict(node.arguments)
            if training is not None and node.layer._expects_training_arg():
                arguments["training"] = training
            sources = [mapping[t] for t in node.input_tensors]
            call_input = sources if node.list_input or len(sources) != 1 else sources[0]
            results = node_lib.flatten(node.layer(call_input, **arguments))
            for old, new in zip(node.output_tensors, results):
                mapping[old] = new
            made = node.layer._inbound_nodes[-1]
            self._updates.extend(made.updates)
            self._losses.extend(made.losses)
        outputs = [mapping[t] for t in self.outputs]
        return outputs[0] if self._single_output else outputs

    def build(self, input_shape=None):
        """Builds a subclassed model on placeholders of `input_shape` (batch dimension first;
        a list of shapes for several inputs)."""
        if self._is_graph_network:
            self.built = True
            return
        if input_shape is None:
            raise ValueError(f"Model {self.name}: build needs an input_shape")
        several = isinstance(input_shape, list) and bool(input_shape) and all(
            isinstance(shape, (list, tuple)) or hasattr(shape, "as_list")
            for shape in input_shape)
        shapes = [_as_tuple(s) for s in input_shape] if several else [_as_tuple(input_shape)]
        self._build_on_placeholders(shapes, [backend.floatx()] * len(shapes), not several)

    def _build_on_placeholders(self, shapes, dtypes, single=True):
        graph = graph_lib.get_default_graph()
        with graph.name_scope(None):
            placeholders = [array_ops.placeholder(dtype, tuple(shape), name=f"input_{i + 1}")
                            for i, (shape, dtype) in enumerate(zip(shapes, dtypes))]
        for tensor in placeholders:
            InputLayer(input_tensor=tensor, name=tensor.op.name)
        call_input = placeholders[0] if single and len(placeholders) == 1 else placeholders
        with graph.name_scope(self.name):
            outputs = self.call(call_input)
        self._init_graph_network(call_input, outputs)
        self._is_graph_network = False  # called through its own `call`, layers as tracked

    # --- configuration ------------------------------------------------------------------------
    def get_config(self):
        if not self._is_graph_network:
            raise NotImplementedError(f"Model {self.name} is a subclassed model: its "
                                      "architecture is Python code, with no config")
        return serialization.network_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return serialization.network_from_config(cls, config, custom_objects)

    def to_json(self, **kwargs):
        return serialization.to_json(self, **kwargs)

    def to_yaml(self, **kwargs):
        return serialization.to_yaml(self, **kwargs)

    # --- description --------------------------------------------------------------------------
    def count_params(self):
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    def summary(self, line_length=None, positions=None, print_fn=None):
        """Prints each layer's name, type, output shape and parameter count, then the totals."""
        print_fn = print_fn or print
        if not self.built:
            raise ValueError("This model has not yet been built. Build the model first by "
                             "calling `build()` or calling `fit()` with some data, or specify "
                             "an `input_shape` argument in the first layer(s) for automatic "
                             "build.")
        width = line_length or 65
        columns = [int(width * p) for p in (positions or (0.45, 0.85, 1.0))]
        print_fn(f'Model: "{self.name}"')
        print_fn("_" * width)
        print_fn(_row(["Layer (type)", "Output Shape", "Param #"], columns))
        print_fn("=" * width)
        rows = self.layers
        for index, layer in enumerate(rows):
            try:
                shape = layer.output_shape
            except AttributeError:
                shape = "multiple"
            params = layer.count_params() if layer.built else 0
            print_fn(_row([f"{layer.name} ({type(layer).__name__})", str(shape),
                           str(params)], columns))
            print_fn("=" * width if index == len(rows) - 1 else "_" * width)
        trainable = int(sum(np.prod(w.shape.as_list()) for w in self.trainable_weights))
        total = self.count_params()
        print_fn(f"Total params: {total:,}")
        print_fn(f"Trainable params: {trainable:,}")
        print_fn(f"Non-trainable params: {total - trainable:,}")
        print_fn("_" * width)


def _as_tuple(shape):
    return tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape)


def _row(fields, columns):
    line = ""
    for field, end in zip(fields, columns):
        line = (line + field)[:end]
        line += " " * (end - len(line))
    return line.rstrip()
