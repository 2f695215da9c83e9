"""`tf.config.optimizer`: Grappler's options and the XLA JIT switch, stored and reported.

tensorweave has no Grappler pass pipeline and no XLA: the options a program sets are kept and
returned by the getters (so code that saves and restores them works) and change nothing in
how graphs run. The option names are checked against Grappler's, so a typo is an error.
"""
_KNOWN_OPTIONS = ("layout_optimizer", "constant_folding", "shape_optimization", "remapping",
                  "arithmetic_optimization", "dependency_optimization", "loop_optimization",
                  "function_optimization", "debug_stripper", "disable_model_pruning",
                  "scoped_allocator_optimization", "pin_to_host_optimization",
                  "implementation_selector", "auto_mixed_precision",
                  "auto_mixed_precision_mkl", "auto_mixed_precision_onednn_bfloat16",
                  "disable_meta_optimizer", "min_graph_nodes", "auto_parallel",
                  "use_plugin_optimizers")
_options = {}
_jit = [False]


def set_experimental_options(options):
    unknown = sorted(set(options) - set(_KNOWN_OPTIONS))
    if unknown:
        raise ValueError(f"tf.config.optimizer.set_experimental_options: unknown options "
                         f"{unknown}; known: {list(_KNOWN_OPTIONS)}")
    _options.update(options)


def get_experimental_options():
    return dict(_options)


def set_jit(enabled):
    """`enabled`: True/False, or TF 2's "autoclustering" (True)."""
    if enabled not in (True, False, "autoclustering", ""):
        raise ValueError(f"tf.config.optimizer.set_jit: expected a bool or 'autoclustering', "
                         f"got {enabled!r}")
    _jit[0] = bool(enabled)


def get_jit():
    return _jit[0]
