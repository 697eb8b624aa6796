"""peerlink's exceptions: one class per error code of the C++ library (``include/peerlink/error.hpp``).

Every error peerlink raises is a :class:`peerlink.Error` (itself a ``RuntimeError``) carrying the library's
:class:`ErrorCode` and its one-line message, which names what failed and what to do. Where a built-in exception
says the same, the class is also one: :class:`InvalidUsageError` and :class:`InvalidInputError` are
``ValueError``\\ s, :class:`TimeoutError` is the built-in ``TimeoutError``, :class:`SystemCallError` an
``OSError``.
"""

from __future__ import annotations

import builtins
import enum
from typing import Dict, Type


class ErrorCode(enum.IntEnum):
    """What kind of failure an :class:`Error` reports; values are ``peerlink_status_t``'s (``status.h``)."""

    INVALID_USAGE = 1  #: bad argument or PEERLINK_* value
    INVALID_INPUT = 2  #: malformed file or data (e.g. a topology file)
    NO_DEVICE = 3  #: no usable CUDA GPU in this process
    CUDA_ERROR = 4  #: a CUDA runtime or driver call failed
    NVML_ERROR = 5  #: an NVML call failed
    SYSTEM_ERROR = 6  #: an operating-system call failed
    TIMEOUT = 7  #: a wait passed its deadline
    REMOTE_ERROR = 8  #: the peer process or GPU reported a failure
    UNSUPPORTED = 9  #: the platform cannot do this
    DATA_MISMATCH = 10  #: verification found wrong bytes
    INTERNAL = 11  #: a bug in peerlink


class Error(RuntimeError):
    """Base of every peerlink exception: ``code`` says what kind, ``str(error)`` what failed."""

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidUsageError(Error, ValueError):
    """A bad argument or PEERLINK_* value (a GPU that does not exist, a timeout out of range...)."""

    code = ErrorCode.INVALID_USAGE


class InvalidInputError(Error, ValueError):
    """A malformed file or data given to peerlink (a topology file, with the field that is wrong)."""

    code = ErrorCode.INVALID_INPUT


class NoDeviceError(Error):
    """No usable CUDA GPU in this process (no driver, none visible); the message says which."""

    code = ErrorCode.NO_DEVICE


class CudaError(Error):
    """A CUDA runtime or driver call failed; the message names the call and CUDA's error."""

    code = ErrorCode.CUDA_ERROR


class NvmlError(Error):
    """An NVML call failed."""

    code = ErrorCode.NVML_ERROR


class SystemCallError(Error, OSError):
    """An operating-system call failed (the message has errno's text)."""

    code = ErrorCode.SYSTEM_ERROR


class TimeoutError(Error, builtins.TimeoutError):  # noqa: A001 - peerlink.TimeoutError is also the built-in one
    """A wait passed its deadline; the message names who was waited for."""

    code = ErrorCode.TIMEOUT


class RemoteError(Error):
    """The peer process or GPU reported a failure."""

    code = ErrorCode.REMOTE_ERROR


class UnsupportedError(Error):
    """The platform cannot do what was asked."""

    code = ErrorCode.UNSUPPORTED


class DataMismatchError(Error):
    """Verification found wrong bytes."""

    code = ErrorCode.DATA_MISMATCH


class InternalError(Error):
    """A bug in peerlink: please report it with the message."""

    code = ErrorCode.INTERNAL


ERROR_CLASSES: Dict[ErrorCode, Type[Error]] = {
    cls.code: cls
    for cls in (
        InvalidUsageError,
        InvalidInputError,
        NoDeviceError,
        CudaError,
        NvmlError,
        SystemCallError,
        TimeoutError,
        RemoteError,
        UnsupportedError,
        DataMismatchError,
        InternalError,
    )
}
"""The exception class of every code."""


def _from_native(code: int, message: str) -> Error:
    """The exception for a ``peerlink::Error`` (called by the native module's exception translator)."""
    try:
        cls = ERROR_CLASSES[ErrorCode(code)]
    except ValueError:
        return InternalError(f"peerlink error code {code}, which this package does not know: {message}")
    return cls(message)
