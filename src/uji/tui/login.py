"""/login: pick a provider, type its API key, save it in `<data>/auth.toml` (or the
keychain). A provider with `oauth` offers a subscription sign-in in the browser first; one
with its own loop needs nothing. Custom asks for the server's base URL and model first,
and saves them in the database.

Saving goes through `uji.providers.auth.save_key` (atomic, mode 0600). Signing out
rewrites the file without the provider's entry, with the same care."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.providers import auth

if TYPE_CHECKING:
    from uji.providers.catalog import Provider
    from uji.tui.command_view import CommandView


def signed_in(path: str, provider_id: str) -> bool:
    try:
        return auth.saved_entry(path, provider_id) is not None
    except auth.AuthError:
        return False


def sign_out(path: str, provider_id: str) -> None:
    """Drop the provider's entry from auth.toml. Raises AuthError."""
    auth.remove_key(path, provider_id)


async def login(tui: CommandView, args: str) -> None:
    app = tui.conversation.app
    assert app is not None
    path = app.paths.auth_file
    chosen = await _choose_provider(tui, path, args.strip())
    if chosen is None:
        return
    if signed_in(path, chosen.id) and not await _sign_in_again(tui, path, chosen):
        return
    if chosen.id == "custom" and not await _custom(tui):
        return
    provider = app.catalog.get(chosen.id)
    assert provider is not None
    if provider.loop is not None:  # it talks to its model itself: nothing to ask
        _use(tui, provider)
        return
    if provider.oauth is not None:
        how = await tui.select(f"Sign in to {provider.name}", ["Subscription (browser sign-in)", "API key"])
        if how is None:
            return
        if how == 0:
            await _subscription(tui, provider)
            return
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
    _use(tui, provider)


def _use(tui: CommandView, provider: Provider) -> None:
    """Switch to the provider just signed in to, unless it is the current one."""
    app = tui.conversation.app
    assert app is not None
    if app.models.provider_id != provider.id and provider.models:
        app.models.use_model(provider.id, None)
        tui.show_notice(f"now using {provider.id}/{app.models.model_id} (/models picks another)")
    tui.state_changed()


async def _subscription(tui: CommandView, provider: Provider) -> None:
    """The browser sign-in (providers/oauth.py), saved like a key."""
    from uji.providers import oauth

    app = tui.conversation.app
    assert app is not None and provider.oauth is not None
    try:
        credential = await oauth.login(provider.oauth, oauth.open_browser, tui.show_notice)
        auth.save_credential(app.paths.auth_file, provider.id, credential)
    except (oauth.LoginError, auth.AuthError) as e:
        tui.show_notice(f"could not sign in to {provider.name}: {e}")
        return
    tui.show_notice(f"signed in to {provider.name}")
    _use(tui, provider)


async def _choose_provider(tui: CommandView, path: str, wanted: str) -> Provider | _Named | None:
    """The provider named on the command line, else the one the user picks."""
    app = tui.conversation.app
    assert app is not None
    providers: list[Provider | _Named] = list(app.catalog.list())
    if app.catalog.get("custom") is None:  # offered before it has a URL
        from uji.providers.builtin import CUSTOM

        providers = sorted([*providers, _Named(CUSTOM["id"], CUSTOM["name"])], key=lambda p: p.id)
    index = next((i for i, p in enumerate(providers) if p.id == wanted), None)
    if index is None:
        labels = [f"{p.name} ({p.id})" + (" — signed in" if signed_in(path, p.id) else "") for p in providers]
        index = await tui.select("Sign in to which provider?", labels)
    return None if index is None else providers[index]


async def _sign_in_again(tui: CommandView, path: str, chosen: Provider | _Named) -> bool:
    """Signed in already: sign in again (True), or sign out, or neither (False)."""
    choice = await tui.select(f"{chosen.name} is signed in", ["Sign in again", "Sign out"])
    if choice is None:
        return False
    if choice == 1:
        try:
            sign_out(path, chosen.id)
        except auth.AuthError as e:
            tui.show_notice(f"could not sign out: {e}")
            return False
        tui.show_notice(f"signed out of {chosen.name}")
        return False
    return True


class _Named:
    def __init__(self, id: str, name: str) -> None:
        self.id, self.name = id, name


async def _custom(tui: CommandView) -> bool:
    """Custom: the server's base URL and a model, saved in the data dir so they survive
    a restart (the key, if any, goes to auth.toml like any other). False if cancelled."""
    app = tui.conversation.app
    assert app is not None
    saved = app.catalog.get("custom")
    url = await tui.prompt(
        "Base URL of the OpenAI-compatible server (…/v1)",
        saved.base_url if saved else "http://localhost:8080/v1",
    )
    if not url or not url.strip():
        return False
    try:
        provider = app.models.set_custom(url)
    except ValueError as e:
        tui.show_notice(str(e))
        return False
    last = app.models.setting("model.custom") or ""
    model = await tui.prompt("Model id on that server (Enter alone: the first one it lists)", last)
    if model is None:
        return False
    model = model.strip()
    if not model:
        await app.models.load_provider(provider)
        model = next((m.id for m in provider.models), "")
        if not model:
            tui.show_notice(f"{provider.base_url} lists no models: type the model id")
            return False
    app.models.use_model("custom", model)
    tui.show_notice(f"now using custom/{model} at {provider.base_url} (saved)")
    tui.state_changed()
    return True
