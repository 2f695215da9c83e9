"""Names one component provides for another of the same layer to answer with (DESIGN.md:
siblings meet through a lower layer's registry). tf.contrib.learn's estimators are built in
estimator/ and answered by contrib/learn, neither importing the other."""
import threading

_lock = threading.Lock()
_provided = {}  # namespace -> {name: object}


def provide(namespace, **objects):
    """Makes `objects` available under `namespace` (a later provider of a name replaces it)."""
    with _lock:
        _provided.setdefault(namespace, {}).update(objects)


def find(namespace, name):
    """The object provided as `name` in `namespace`; AttributeError if none was."""
    with _lock:
        found = _provided.get(namespace, {})
        if name in found:
            return found[name]
    raise AttributeError(f"module 'tensorweave.{namespace}' has no attribute {name!r}")


def names(namespace):
    with _lock:
        return sorted(_provided.get(namespace, {}))
