"""tf.errors: the class per canonical code, and the code <-> class mapping."""
import pickle

import pytest

import tensorweave as tf
from tensorweave.framework import errors

# TensorFlow's canonical error codes (grpc status codes), class by class.
ERROR_TABLE = [
    ("CancelledError", "CANCELLED", 1),
    ("UnknownError", "UNKNOWN", 2),
    ("InvalidArgumentError", "INVALID_ARGUMENT", 3),
    ("DeadlineExceededError", "DEADLINE_EXCEEDED", 4),
    ("NotFoundError", "NOT_FOUND", 5),
    ("AlreadyExistsError", "ALREADY_EXISTS", 6),
    ("PermissionDeniedError", "PERMISSION_DENIED", 7),
    ("ResourceExhaustedError", "RESOURCE_EXHAUSTED", 8),
    ("FailedPreconditionError", "FAILED_PRECONDITION", 9),
    ("AbortedError", "ABORTED", 10),
    ("OutOfRangeError", "OUT_OF_RANGE", 11),
    ("UnimplementedError", "UNIMPLEMENTED", 12),
    ("InternalError", "INTERNAL", 13),
    ("UnavailableError", "UNAVAILABLE", 14),
    ("DataLossError", "DATA_LOSS", 15),
    ("UnauthenticatedError", "UNAUTHENTICATED", 16),
]


@pytest.mark.parametrize("class_name,code_name,code", ERROR_TABLE)
def test_error_class_code_and_mapping(class_name, code_name, code):
    cls = getattr(tf.errors, class_name)
    assert cls.__name__ == class_name
    assert getattr(tf.errors, code_name) == code
    assert issubclass(cls, tf.errors.OpError) and issubclass(cls, Exception)
    assert cls.error_code == code
    assert tf.errors.exception_type_from_error_code(code) is cls
    assert errors.error_code_from_exception_type(cls) == code


@pytest.mark.parametrize("class_name,code_name,code", ERROR_TABLE)
def test_error_instances_carry_message_op_and_code(class_name, code_name, code):
    cls = getattr(tf.errors, class_name)
    err = cls(None, "the-op", "something broke")
    assert err.message == "something broke" and str(err) == "something broke"
    assert err.op == "the-op" and err.node_def is None
    assert err.error_code == code
    with pytest.raises(tf.errors.OpError):
        raise err


def test_errors_pickle_with_class_and_message():
    err = pickle.loads(pickle.dumps(tf.errors.NotFoundError(None, None, "no file")))
    assert type(err) is tf.errors.NotFoundError and err.message == "no file"
    assert err.error_code == tf.errors.NOT_FOUND


def test_base_op_error_takes_an_explicit_code():
    err = tf.errors.OpError(None, None, "custom", tf.errors.ABORTED)
    assert err.error_code == tf.errors.ABORTED
    restored = pickle.loads(pickle.dumps(err))
    assert restored.error_code == tf.errors.ABORTED and restored.message == "custom"


def test_unknown_code_is_rejected():
    with pytest.raises(KeyError):
        tf.errors.exception_type_from_error_code(999)
    assert tf.errors.OK == 0
