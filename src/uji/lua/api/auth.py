"""uji.auth: save_key, authenticated."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.lua.runtime import Api, ApiError
from uji.providers.auth import AuthError, authenticated, save_key

if TYPE_CHECKING:
    from uji.providers.catalog import Catalog, Provider


def install(catalog: Catalog, auth_file: str) -> Api:
    def known(fname: str, provider_id: str) -> Provider:
        provider = catalog.get(provider_id)
        if provider is None:
            raise ApiError(f"uji.auth.{fname}: unknown provider {provider_id!r}")
        return provider

    def auth_save_key(provider_id: str, key: str) -> str | None:
        """None when saved, else the reason (Lua returns it as `nil, err`)."""
        known("save_key", provider_id)
        try:
            save_key(auth_file, provider_id, key)
        except AuthError as e:
            return str(e)
        return None

    def auth_authenticated(provider_id: str) -> bool:
        provider = known("authenticated", provider_id)
        try:
            return authenticated(auth_file, provider)
        except AuthError as e:
            raise ApiError(f"uji.auth.authenticated: {e}") from None

    return {"auth_save_key": auth_save_key, "auth_authenticated": auth_authenticated}
