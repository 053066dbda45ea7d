"""Where the tests' files are, from wherever a test module sits (tests/collectors/<domain>/<plugin>/...)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"  # real captures, each with its origin in SOURCES.md
GOLDEN = TESTS / "golden"  # what parsers and collectors made of them, to compare against
