"""`tf.contrib.predictor`: a SavedModel (or an Estimator's latest checkpoint) loaded into its
own graph and session, called with a dict of input arrays to get a dict of output arrays:

    predict_fn = tf.contrib.predictor.from_saved_model(export_dir)
    predictions = predict_fn({"x": images})["probabilities"]
"""
import os
import shutil
import tempfile

from tensorweave.framework import graph as graph_lib
from tensorweave.runtime.session import Session
from tensorweave.train.saved_model import loader

DEFAULT_SIGNATURE = "serving_default"


class Predictor:
    """Feeds `feed_tensors` by key, fetches `fetch_tensors` by key, in `session`."""

    def __init__(self, session, feed_tensors, fetch_tensors):
        self._session = session
        self._feed_tensors = dict(feed_tensors)
        self._fetch_tensors = dict(fetch_tensors)

    @property
    def session(self):
        return self._session

    @property
    def graph(self):
        return self._session.graph

    @property
    def feed_tensors(self):
        return dict(self._feed_tensors)

    @property
    def fetch_tensors(self):
        return dict(self._fetch_tensors)

    def __call__(self, input_dict):
        unknown = sorted(set(input_dict) - set(self._feed_tensors))
        if unknown:
            raise ValueError(f"Predictor: unknown input keys {unknown}; the inputs are "
                             f"{sorted(self._feed_tensors)}")
        feed = {self._feed_tensors[key]: value for key, value in input_dict.items()}
        return self._session.run(self._fetch_tensors, feed_dict=feed)

    def __repr__(self):
        return (f"Predictor(inputs={sorted(self._feed_tensors)}, "
                f"outputs={sorted(self._fetch_tensors)})")


def _by_name(graph, names, what):
    return {key: graph.get_tensor_by_name(name) for key, name in names.items()}


def from_saved_model(export_dir, signature_def_key=None, signature_def=None, input_names=None,
                     output_names=None, tags=None, graph=None, config=None):
    """A Predictor for the SavedModel in `export_dir`: the meta graph with `tags` (default
    'serve') and its signature `signature_def_key` (default 'serving_default'), or the given
    `signature_def`, or explicit {key: tensor name} `input_names`/`output_names`."""
    if (input_names is None) != (output_names is None):
        raise ValueError("from_saved_model: give both input_names and output_names, or neither")
    if signature_def is not None and signature_def_key is not None:
        raise ValueError("from_saved_model: give signature_def or signature_def_key, not both")
    graph = graph or graph_lib.Graph()
    session = Session(graph=graph, config=config)
    try:
        with graph.as_default():
            meta_graph = loader.load(session, list(tags or ["serve"]), export_dir)
        if input_names is not None:
            feeds = _by_name(graph, input_names, "input")
            fetches = _by_name(graph, output_names, "output")
        else:
            if signature_def is None:
                key = signature_def_key or DEFAULT_SIGNATURE
                signatures = meta_graph.signature_def
                if key not in signatures:
                    raise ValueError(f"from_saved_model: the SavedModel in {export_dir} has no "
                                     f"signature {key!r}; it has {sorted(signatures)}")
                signature_def = signatures[key]
            feeds, fetches = loader.signature_tensors(graph, signature_def)
    except BaseException:
        session.close()
        raise
    return Predictor(session, feeds, fetches)


def from_estimator(estimator, serving_input_receiver_fn, output_key=None, graph=None,
                   config=None):
    """A Predictor for the estimator's latest checkpoint: the model exported as a SavedModel
    with `serving_input_receiver_fn` (into a temporary directory, removed once loaded), the
    signature `output_key` (default 'serving_default')."""
    base = tempfile.mkdtemp(prefix="tensorweave-predictor-")
    try:
        export_dir = estimator.export_saved_model(base, serving_input_receiver_fn)
        export_dir = export_dir.decode() if isinstance(export_dir, bytes) else export_dir
        return from_saved_model(os.fspath(export_dir), signature_def_key=output_key,
                                graph=graph, config=config)
    finally:
        shutil.rmtree(base, ignore_errors=True)


from_contrib_estimator = from_estimator
