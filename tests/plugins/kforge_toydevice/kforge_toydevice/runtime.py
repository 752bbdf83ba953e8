"""The toy device's runtime, as a candidate would call it: draining its queue, and pinning lines in its cache (which
would survive the harness's flush, so a candidate must not)."""

_pinned = []


def drain():
    """Wait for the toy queue to empty (host memory: nothing to wait for)."""


def pin_cache(nbytes):
    """Keep ``nbytes`` of the toy cache from being evicted."""
    _pinned.append(nbytes)
