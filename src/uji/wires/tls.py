"""The wires' TLS context, with the CA store loaded on the first TLS handshake.

Loading the system CA bundle takes tens of milliseconds, and a run against a local
`http://127.0.0.1` model never needs it. `trust_context()` returns a context that
verifies as a browser does (certificate and host name required) but reads the CA bundle
in its first `wrap_bio` / `wrap_socket`, which is where every TLS connection starts
(asyncio's TLS goes through `wrap_bio`).

Where the trust store is not OpenSSL's files (Windows and macOS), the system's own
store is asked through `truststore`.
"""

from __future__ import annotations

import os
import ssl
import sys
import threading
from typing import Any


class LazyTrustContext(ssl.SSLContext):
    """A client context whose CA certificates are loaded just before its first handshake."""

    _lock: threading.Lock
    _trusted: bool

    def __new__(cls) -> LazyTrustContext:
        ctx = super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)
        ctx._lock = threading.Lock()
        ctx._trusted = False
        return ctx

    def __init__(self) -> None:  # SSLContext.__init__ takes the protocol; it is set in __new__
        pass

    @property
    def trusted(self) -> bool:
        """Whether the CA certificates have been loaded (a handshake was started)."""
        return self._trusted

    def _trust(self) -> None:
        if self._trusted:
            return
        with self._lock:
            if not self._trusted:
                cafile, capath = ca_locations()
                if cafile or capath:
                    self.load_verify_locations(cafile, capath)
                self._trusted = True

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self._trust()
        return super().wrap_bio(*args, **kwargs)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self._trust()
        return super().wrap_socket(*args, **kwargs)


# Where the distributions keep their CA bundle, for an OpenSSL built with other defaults.
CA_FILE_CANDIDATES = (
    "/etc/ssl/cert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/pki/tls/cert.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/ca-bundle.pem",
)


def ca_locations() -> tuple[str | None, str | None]:
    """(cafile, capath) on Linux: SSL_CERT_FILE or SSL_CERT_DIR, else OpenSSL's
    compiled-in paths, else a well-known bundle file."""
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return cafile, None
    if capath := os.environ.get("SSL_CERT_DIR"):
        return None, capath
    paths = ssl.get_default_verify_paths()
    file = paths.openssl_cafile if os.path.isfile(paths.openssl_cafile) else None
    folder = paths.openssl_capath if os.path.isdir(paths.openssl_capath) else None
    if folder and not file and not _has_hashed_certs(folder):
        folder = None
    if not file and not folder:
        file = next(filter(os.path.isfile, CA_FILE_CANDIDATES), None)
    return file, folder


def _has_hashed_certs(folder: str) -> bool:
    import re

    return any(re.fullmatch(r"[0-9a-fA-F]{8}\.\d", f) for f in os.listdir(folder))


def trust_context() -> ssl.SSLContext:
    """The context https connections verify with: a lazy one on OpenSSL-file platforms,
    the system's trust store elsewhere."""
    if sys.platform in ("win32", "darwin"):
        try:
            import truststore
        except ImportError:
            return ssl.create_default_context()
        return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return LazyTrustContext()
