"""Helpers shared by the contrib layers: variable collections given per variable, and outputs
collected under an alias (the scope that made them), as slim's end_points are built.

Tensors here take no new attributes (TF 1.x sets `tensor.alias`), so a graph keeps the aliases
of its collected outputs: `get_tensor_alias` and `convert_collection_to_dict` read them.
"""
import collections

from tensorweave.framework import graph as graph_lib


def variable_collections(variables_collections, name):
    """The extra collections of variable `name`: a dict gives them per variable name."""
    if isinstance(variables_collections, dict):
        return variables_collections.get(name)
    return variables_collections


def _aliases(graph):
    aliases = getattr(graph, "_contrib_output_aliases", None)
    if aliases is None:
        aliases = graph._contrib_output_aliases = {}
    return aliases


def collect_named_outputs(collections_, alias, outputs):
    """Adds `outputs` to each of `collections_` under `alias`; returns it."""
    if collections_:
        graph = outputs.graph
        known = _aliases(graph).setdefault(outputs.name, [])
        alias = alias[:-1] if alias.endswith("/") else alias
        if alias not in known:
            known.append(alias)
        graph.add_to_collections([collections_] if isinstance(collections_, str)
                                 else collections_, outputs)
    return outputs


def get_tensor_aliases(tensor):
    """Every alias `tensor` was collected under (a block's output is also its last unit's),
    else [its op name]."""
    return list(_aliases(tensor.graph).get(tensor.name) or [tensor.op.name])


def get_tensor_alias(tensor):
    """The alias a layer last collected `tensor` under, else its op name."""
    return get_tensor_aliases(tensor)[-1]


def convert_collection_to_dict(collection, clear_collection=False):
    """An ordered {alias: tensor} of a collection of layer outputs (slim's end_points)."""
    graph = graph_lib.get_default_graph()
    tensors = graph.get_collection(collection)
    result = collections.OrderedDict((alias, t) for t in tensors
                                     for alias in get_tensor_aliases(t))
    if clear_collection:
        del graph.get_collection_ref(collection)[:]
    return result


def scope_alias(name_scope):
    """A name scope string ('MaxPool2D/') as the alias of the outputs built under it."""
    return name_scope.rstrip("/")
