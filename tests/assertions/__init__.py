"""Tests of the assertion families."""
