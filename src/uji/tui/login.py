"""/login: pick a provider, type its API key, save it in `<data>/auth.toml`.

Saving goes through `uji.providers.auth.save_key` (atomic, mode 0600). Signing out
rewrites the file without the provider's entry, with the same care."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.providers import auth

if TYPE_CHECKING:
    from uji.tui.app import UjiApp


def signed_in(path: str, provider_id: str) -> bool:
    try:
        return auth.saved_key(path, provider_id) is not None
    except auth.AuthError:
        return False


def sign_out(path: str, provider_id: str) -> None:
    """Drop the provider's entry from auth.toml. Raises AuthError."""
    auth.remove_key(path, provider_id)


async def login(tui: UjiApp, args: str) -> None:
    app = tui.conversation.app
    assert app is not None
    path = app.paths.auth_file
    providers = app.catalog.list()
    labels = [f"{p.name} ({p.id})" + (" — signed in" if signed_in(path, p.id) else "") for p in providers]
    wanted = args.strip()
    index = next((i for i, p in enumerate(providers) if p.id == wanted), None)
    if index is None:
        index = await tui.select("Sign in to which provider?", labels)
    if index is None:
        return
    provider = providers[index]
    if signed_in(path, provider.id):
        choice = await tui.select(f"{provider.name} is signed in", ["Sign in again", "Sign out"])
        if choice is None:
            return
        if choice == 1:
            try:
                sign_out(path, provider.id)
            except auth.AuthError as e:
                tui.show_notice(f"could not sign out: {e}")
                return
            tui.show_notice(f"signed out of {provider.name}")
            return
    if provider.id == "custom":
        base_url = await tui.prompt("Base URL of the OpenAI-compatible server", provider.base_url)
        if not base_url:
            return
        model = await tui.prompt("Model id on that server", "")
        if not model:
            return
        app.catalog.add({"id": "custom", "base_url": base_url.strip(), "models": [model.strip()]})
        app.use_model("custom", model.strip())
    env = " or ".join(f"${v}" for v in provider.auth_env)
    title = f"API key for {provider.name}" + (f" (Enter alone: use {env})" if env else "")
    key = await tui.prompt(title, "", hidden=True)
    if key is None:
        return
    key = key.strip()
    if not key:
        tui.show_notice(f"no key saved; uji uses {env} when it is set" if env else "no key saved")
        return
    try:
        auth.save_key(path, provider.id, key)
    except auth.AuthError as e:
        tui.show_notice(f"could not save the key: {e}")
        return
    tui.show_notice(f"saved the key for {provider.name} in {path}")
    if app.provider_id != provider.id and provider.models:
        app.use_model(provider.id, None)
        tui.show_notice(f"now using {provider.id}/{app.model_id} (/models picks another)")
    tui.state_changed()
