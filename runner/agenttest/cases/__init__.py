"""Test cases: loading suites (`load_suite`) into validated Cases, and the models the engine consumes."""

from .loader import load_suite
from .model import Case, InvalidCase, Suite

__all__ = ["Case", "InvalidCase", "Suite", "load_suite"]
