"""peerlink's typed errors: one class per code of the C++ library, raised for the library's own errors."""

import builtins
import re
import tempfile
import unittest
from pathlib import Path

import peerlink
from peerlink import _native
from peerlink.errors import ERROR_CLASSES, ErrorCode, _from_native
from support import fixture


def upper_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


class ErrorsTest(unittest.TestCase):
    def test_every_code_of_the_library_has_its_class(self) -> None:
        library = {upper_snake(name): value for name, value in _native.error_codes().items()}
        self.assertEqual(library, {code.name: int(code) for code in ErrorCode})
        self.assertEqual(set(ERROR_CLASSES), set(ErrorCode))
        for code, cls in ERROR_CLASSES.items():
            with self.subTest(code=code.name):
                self.assertEqual(cls.code, code)
                self.assertTrue(issubclass(cls, peerlink.Error))
                self.assertTrue(issubclass(cls, RuntimeError))
                self.assertIs(getattr(peerlink, cls.__name__), cls)
                error = _from_native(int(code), "what failed; what to do")
                self.assertIs(type(error), cls)
                self.assertEqual(str(error), "what failed; what to do")

    def test_classes_are_also_the_builtin_they_mean(self) -> None:
        self.assertTrue(issubclass(peerlink.InvalidUsageError, ValueError))
        self.assertTrue(issubclass(peerlink.InvalidInputError, ValueError))
        self.assertTrue(issubclass(peerlink.TimeoutError, builtins.TimeoutError))
        self.assertTrue(issubclass(peerlink.SystemCallError, OSError))
        self.assertEqual(str(peerlink.TimeoutError("rank 3 never arrived")), "rank 3 never arrived")

    def test_an_unknown_code_is_an_internal_error_that_keeps_the_message(self) -> None:
        error = _from_native(99, "something new")
        self.assertIsInstance(error, peerlink.InternalError)
        self.assertEqual(str(error), "peerlink error code 99, which this package does not know: something new")

    def test_library_errors_arrive_typed(self) -> None:
        with self.assertRaises(peerlink.InvalidInputError) as caught:
            peerlink.topology("/no/such/topology.json")
        self.assertEqual(str(caught.exception), "topology file /no/such/topology.json: cannot open: No such file or "
                                                "directory")
        self.assertEqual(caught.exception.code, ErrorCode.INVALID_INPUT)
        self.assertIsNone(caught.exception.__cause__)
        with self.assertRaisesRegex(peerlink.InvalidInputError, r"is a character device"):
            peerlink.topology("/dev/zero")
        with tempfile.TemporaryDirectory() as folder:
            bad = Path(folder) / "bad.json"
            bad.write_text(fixture("rtx4090x2").read_text().replace('"sm_count": 128', '"sm_count": "many"', 1))
            expected = r'^topology file .*bad.json: gpus\[0\]\.sm_count: expected an integer, got "many"$'
            with self.assertRaisesRegex(peerlink.InvalidInputError, expected):
                peerlink.topology(bad)


if __name__ == "__main__":
    unittest.main()
