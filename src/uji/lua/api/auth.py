"""uji.auth: save_key, authenticated, configure (the keychain) and login (subscription
sign-in in the browser, providers/oauth.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.lua.runtime import Api, ApiError, Pending
from uji.providers.auth import AuthError, authenticated, save_key

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.providers.catalog import Catalog, Provider


def install(host: LuaHost, catalog: Catalog, auth_file: str) -> Api:
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

    def auth_configure(keychain: bool) -> str | None:
        """Why the keychain cannot be used, when it cannot (said as a notice)."""
        from uji.providers.auth import use_keychain

        return use_keychain(auth_file, bool(keychain))

    def auth_login(provider_id: str) -> Pending:
        provider = known("login", provider_id)

        async def login() -> bool:
            from uji.providers import oauth
            from uji.providers.auth import save_credential

            if provider.oauth is None:
                raise ApiError(oauth.NO_OAUTH)
            try:
                credential = await oauth.login(provider.oauth, oauth.open_browser, host.notice)
            except oauth.LoginError as e:
                raise ApiError(str(e)) from None
            try:
                save_credential(auth_file, provider.id, credential)
            except AuthError as e:
                raise ApiError(f"signed in but could not save the credential: {e}") from None
            return True

        return Pending(login())

    return {
        "auth_save_key": auth_save_key,
        "auth_authenticated": auth_authenticated,
        "auth_configure": auth_configure,
        "auth_login": auth_login,
    }
