

def version() -> str:
    """rackpulse's installed version ("unknown" in a checkout that was never installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _installed

    try:
        return _installed("rackpulse")
    except PackageNotFoundError:
        return "unknown (not installed)"
