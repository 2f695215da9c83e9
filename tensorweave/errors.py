"""`tf.errors`: re-exports."""
from tensorweave.framework.errors import *  # noqa: F401, F403
from tensorweave.framework.errors import (OpError, CancelledError, UnknownError,  # noqa: F401
                                          InvalidArgumentError, DeadlineExceededError,
                                          NotFoundError, AlreadyExistsError,
                                          PermissionDeniedError, UnauthenticatedError,
                                          ResourceExhaustedError, FailedPreconditionError,
                                          AbortedError, OutOfRangeError, UnimplementedError,
                                          InternalError, UnavailableError, DataLossError,
                                          exception_type_from_error_code,
                                          error_code_from_exception_type)
