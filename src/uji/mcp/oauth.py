"""The SDK's OAuth client (`mcp.client.auth`) for one HTTP server: which of its providers a
server's `oauth` calls for, and the storage that keeps what they obtain in
`<data>/mcp-auth.json` (uji.mcp_tokens). Imported with uji.mcp.client, in its thread.

The SDK does the protocol: protected resource metadata (RFC 9728, from WWW-Authenticate
then the well-known paths), authorization server metadata (RFC 8414 and OpenID, with the
path-insertion fallbacks), dynamic client registration or a client ID metadata document,
PKCE, the scope from WWW-Authenticate or scopes_supported, step-up on 403
insufficient_scope, refresh, client credentials and identity assertions. uji adds three
things around it: the token's expiry and the metadata it came with survive the process
(the SDK keeps them in memory), so the next run refreshes an expired token rather than
presenting it; an authorization the user must give fails the server with NeedsLogin unless
`uji mcp login` is connecting it; and a step-up's scope is kept for that login to ask.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.oauth2 import OAuthContext
from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, BaseModel, ValidationError

from uji import __version__
from uji import mcp_tokens as tokens
from uji.mcp.auth import CALLBACK_PATH, NeedsLogin
from uji.mcp.config import OAuthConfig

if TYPE_CHECKING:
    from uji.mcp.auth import Authorizer
    from uji.mcp.config import Connection

M = TypeVar("M", bound=BaseModel)
SecretMethod = Literal["client_secret_basic", "client_secret_post"]
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


def provider(server: Connection) -> httpx2.Auth | None:
    """The `httpx2.Auth` for the server's requests, or None: no OAuth (`oauth = false`, an
    Authorization header of the user's own), or nothing to present or refresh yet in a run
    with no browser at hand (its 401 then says to log in)."""
    cfg, oauth, data_dir = server.config, server.config.oauth, server.service.data_dir
    if cfg.url is None or not oauth.enabled or data_dir is None:
        return None
    if any(name.lower() == "authorization" for name in cfg.headers):
        return None
    store = Store(data_dir, server.name, cfg.url)
    with warnings.catch_warnings():  # no `issuer`: the SDK's deprecation warning would reach stderr
        warnings.simplefilter("ignore")
        if oauth.grant == "client_credentials":
            return _client_credentials(cfg.url, oauth, store)
        if oauth.grant == "identity_assertion":
            return _identity_assertion(cfg.url, oauth, store)
    if server.authorizer is None and not store.kept().get("tokens"):
        return None
    return CodeFlow(server.name, cfg.url, oauth, store, server.authorizer)


def _model(kind: type[M], value: object) -> M | None:
    if not isinstance(value, dict):
        return None
    try:
        return kind.model_validate(value)
    except ValidationError:
        return None


def _json(model: BaseModel) -> tokens.Json:
    dumped: tokens.Json = model.model_dump(mode="json", exclude_none=True)
    return dumped


class Store:
    """The SDK's TokenStorage for one server, over uji.mcp_tokens."""

    def __init__(self, data_dir: str, name: str, url: str) -> None:
        self.data_dir, self.name, self.url = data_dir, name, url
        self.context: OAuthContext | None = None  # the provider's: what it discovered
        self.fresh = False  # a login: the kept token is not presented, a new one is wanted
        self.fixed_client: OAuthClientInformationFull | None = None  # pre-registered (config)
        self.drop_client = False  # the kept registration is for another redirect URI

    def kept(self) -> tokens.Entry:
        return tokens.entry(self.data_dir, self.name, self.url)

    def save(self, entry: tokens.Entry) -> None:
        tokens.save(self.data_dir, self.name, self.url, entry)

    async def get_tokens(self) -> OAuthToken | None:
        return None if self.fresh else _model(OAuthToken, self.kept().get("tokens"))

    async def set_tokens(self, token: OAuthToken) -> None:
        expires = time.time() + token.expires_in if token.expires_in else None
        entry = tokens.Entry(tokens=_json(token), expires_at=expires)
        context = self.context
        if context is not None and context.oauth_metadata is not None:
            entry["metadata"] = _json(context.oauth_metadata)
        if context is not None and context.protected_resource_metadata is not None:
            entry["resource"] = _json(context.protected_resource_metadata)
        self.save(entry)
        self.fresh = False

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.fixed_client is not None:
            return self.fixed_client
        if self.drop_client:
            return None
        return _model(OAuthClientInformationFull, self.kept().get("client"))

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.drop_client = False
        self.save(tokens.Entry(client=_json(client_info)))

    def restore(self, context: OAuthContext) -> None:
        """What the SDK keeps only in memory, from last time: when the token expires (so an
        expired one is refreshed, not presented) and the metadata it was issued with (so the
        refresh goes to the authorization server's token endpoint)."""
        self.context = context
        kept = self.kept()
        if context.current_tokens is not None:
            context.token_expiry_time = kept.get("expires_at")
        if context.oauth_metadata is None:
            context.oauth_metadata = _model(OAuthMetadata, kept.get("metadata"))
        if context.protected_resource_metadata is None:
            resource = _model(ProtectedResourceMetadata, kept.get("resource"))
            context.protected_resource_metadata = resource
            if resource is not None and resource.authorization_servers:
                context.auth_server_url = str(resource.authorization_servers[0])


class CodeFlow(OAuthClientProvider):
    """The authorization code flow with PKCE: a user's sign-in in the browser."""

    def __init__(
        self, name: str, url: str, oauth: OAuthConfig, store: Store, authorizer: Authorizer | None
    ) -> None:
        self.name, self.oauth, self.store, self.authorizer = name, oauth, store, authorizer
        kept_client = store.kept().get("client")
        kept_uris = kept_client.get("redirect_uris") if isinstance(kept_client, dict) else None
        if authorizer is not None:
            redirect = authorizer.redirect_uri
            store.fresh = True
            # A registration for another port: many servers match redirect URIs exactly.
            store.drop_client = not (isinstance(kept_uris, list) and redirect in kept_uris)
        elif isinstance(kept_uris, list) and kept_uris and isinstance(kept_uris[0], str):
            redirect = kept_uris[0]
        else:
            redirect = f"http://127.0.0.1{CALLBACK_PATH}"
        if oauth.client_id:
            store.fixed_client = OAuthClientInformationFull(
                client_id=oauth.client_id,
                client_secret=oauth.client_secret,
                redirect_uris=[AnyUrl(redirect)],
                grant_types=["authorization_code", "refresh_token"],
                token_endpoint_auth_method=oauth.token_endpoint_auth_method  # checked in mcp.lua
                or ("client_secret_basic" if oauth.client_secret else "none"),
            )
        metadata = OAuthClientMetadata(
            client_name="uji",
            redirect_uris=[AnyUrl(redirect)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",  # a public client; the server may assign another
            scope=oauth.scope,
            software_id="uji",
            software_version=__version__,
        )
        super().__init__(
            url,
            metadata,
            store,
            redirect_handler=self._open,
            callback_handler=self._come_back,
            client_metadata_url=oauth.client_metadata_url,
        )

    async def _initialize(self) -> None:
        await super()._initialize()
        self.store.restore(self.context)

    async def _perform_authorization(self) -> httpx2.Request:
        scope = union_scopes(self.context.client_metadata.scope, self.oauth.scope)
        if self.authorizer is None:
            # Nobody to open a browser for: keep what was asked, for the login to ask it.
            granted = self.context.current_tokens.scope if self.context.current_tokens else None
            more = bool(scope) and not set((scope or "").split()) <= set((granted or "").split())
            if scope:
                self.store.save(tokens.Entry(scope=union_scopes(self.store.kept().get("scope"), scope) or ""))
            raise NeedsLogin(self.name, scope if more and granted else None)
        self.context.client_metadata.scope = union_scopes(scope, self.store.kept().get("scope"))
        return await super()._perform_authorization()

    async def _open(self, url: str) -> None:
        assert self.authorizer is not None
        await self.authorizer.open(url)

    async def _come_back(self) -> AuthorizationCodeResult:
        assert self.authorizer is not None
        answer = await self.authorizer.answer()
        if answer.error:
            raise OAuthFlowError(f"the authorization server refused: {answer.error}")
        if not answer.code:
            raise OAuthFlowError("the redirect came back without an authorization code")
        return AuthorizationCodeResult(code=answer.code, state=answer.state, iss=answer.iss)


class ClientCredentials(ClientCredentialsOAuthProvider):
    """client_credentials with the client's id and secret (basic or post)."""

    store: Store

    async def _initialize(self) -> None:
        await super()._initialize()
        self.store.restore(self.context)


class ClientAssertion(PrivateKeyJWTOAuthProvider):
    """client_credentials, the client authenticated by a JWT signed with its private key."""

    store: Store

    async def _initialize(self) -> None:
        await super()._initialize()
        self.store.restore(self.context)


def _client_credentials(url: str, oauth: OAuthConfig, store: Store) -> httpx2.Auth:
    client_id = oauth.client_id or ""
    made: ClientCredentials | ClientAssertion
    if oauth.private_key:
        signed = SignedJWTParameters(
            issuer=client_id,
            subject=client_id,
            signing_key=oauth.private_key,
            signing_algorithm=oauth.signing_algorithm,
        )
        made = ClientAssertion(
            url, store, client_id, signed.create_assertion_provider(), scope=oauth.scope, issuer=oauth.issuer
        )
    else:
        method: SecretMethod = (
            "client_secret_post"
            if oauth.token_endpoint_auth_method == "client_secret_post"
            else "client_secret_basic"
        )
        made = ClientCredentials(
            url,
            store,
            client_id,
            oauth.client_secret or "",
            token_endpoint_auth_method=method,
            scope=oauth.scope,
            issuer=oauth.issuer,
        )
    made.store = store
    return made


def _identity_assertion(url: str, oauth: OAuthConfig, store: Store) -> httpx2.Auth:
    """SEP-990: the user's ID token from the enterprise IdP is exchanged there (RFC 8693) for
    an ID-JAG, which the SDK's provider presents to the MCP authorization server."""

    async def id_jag(audience: str, resource: str) -> str:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "audience": audience,
            "resource": resource,
            "subject_token": oauth.id_token or "",
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "client_id": oauth.idp_client_id or "",
        }
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(oauth.idp_token_endpoint or "", data=form)
        answer: Any = response.json() if response.status_code == 200 else None
        if not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str):
            raise OAuthFlowError(
                f"the identity provider's token exchange failed (HTTP {response.status_code}): "
                f"{response.text[:300]}"
            )
        return str(answer["access_token"])

    method: SecretMethod = (
        "client_secret_basic"
        if oauth.token_endpoint_auth_method == "client_secret_basic"
        else "client_secret_post"
    )
    return IdentityAssertionOAuthProvider(
        url,
        store,
        oauth.client_id or "",
        oauth.client_secret or "",
        oauth.issuer or "",
        id_jag,
        scope=oauth.scope,
        token_endpoint_auth_method=method,
    )
