"""An OAuth-protected MCP server on the official Python SDK (PyPI `mcp` 2.x),
for `cargo xtask interop`: the authorization server is the SDK's own
(`mcp.server.auth`: its metadata, registration, authorize, token and revoke
routes, mounted by `MCPServer(auth_server_provider=...)`), driven by the small
in-memory provider below. Loopback only, nothing persisted.

The provider approves every authorization at once (`/authorize` redirects
straight back with a code: the test plays the browser), issues access tokens
that live TOKEN_SECONDS (REFRESHED_SECONDS when they come from a refresh) and
refresh tokens that rotate on use.

Usage: auth_server.py PORT [TOKEN_SECONDS [REFRESHED_SECONDS]]

Besides `/mcp` (bearer-protected) it serves two test hooks without
authentication, which reveal no token: `GET /interop/state`, for the test to
await conditions instead of sleeping (how many access tokens from the
authorization-code grant are still valid, how many tokens each grant issued,
how many expired tokens were refused, how many revocations arrived), and
`POST /interop/expire`, which ends every access token now (refresh tokens
stay), so that the client meets a 401 with a token it believes valid.
"""
import secrets
import sys
import time

from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SCOPE = "mcp:tools"
CODE_SECONDS = 60
REFRESH_SECONDS = 3600
# In every code and token minted here, so the test can tell none was printed.
MARK = "pysecret"


class IssuedAccess(AccessToken):
    """An access token and the grant that issued it."""

    grant: str = "authorization_code"


class AutoApprovingProvider:
    """`OAuthAuthorizationServerProvider` in memory; every user says yes."""

    def __init__(self, token_seconds: int, refreshed_seconds: int):
        self.lifetime = {"authorization_code": token_seconds, "refresh_token": refreshed_seconds}
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, IssuedAccess] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.grants = {"authorization_code": 0, "refresh_token": 0}
        self.revoked = 0
        self.refused = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = MARK + "-code-" + secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + CODE_SECONDS,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="interop-user",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, grant: str) -> OAuthToken:
        now = int(time.time())
        lifetime = self.lifetime[grant]
        access = MARK + "-at-" + secrets.token_urlsafe(24)
        refresh = MARK + "-rt-" + secrets.token_urlsafe(24)
        self.access[access] = IssuedAccess(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + lifetime,
            resource=resource,
            subject="interop-user",
            grant=grant,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + REFRESH_SECONDS,
            resource=resource,
            subject="interop-user",
        )
        self.grants[grant] += 1
        return OAuthToken(
            access_token=access,
            expires_in=lifetime,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        # One use only.
        if self.codes.pop(authorization_code.code, None) is None:
            raise TokenError("invalid_grant", "authorization code already used")
        return self._issue(
            client.client_id, authorization_code.scopes, authorization_code.resource, "authorization_code"
        )

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        # Rotation: the refresh token presented is spent.
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token already used")
        return self._issue(client.client_id, scopes, refresh_token.resource, "refresh_token")

    async def load_access_token(self, token: str) -> IssuedAccess | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at <= time.time()):
            self.refused += 1
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        # Everything of that client goes, as the protocol recommends.
        self.revoked += 1
        for table in (self.access, self.refresh):
            for key in [k for k, v in table.items() if v.client_id == token.client_id]:
                del table[key]

    def live_login_tokens(self) -> int:
        """Access tokens from the authorization-code grant still valid."""
        now = time.time()
        return sum(
            1
            for t in self.access.values()
            if t.grant == "authorization_code" and (t.expires_at is None or t.expires_at > now)
        )

    def expire_access_tokens(self) -> None:
        now = int(time.time())
        for token in self.access.values():
            token.expires_at = now - 1


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    token_seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    refreshed_seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    base = f"http://127.0.0.1:{port}"
    provider = AutoApprovingProvider(token_seconds, refreshed_seconds)
    app = MCPServer(
        "py-auth-interop",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=True,
            required_scopes=[SCOPE],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    @app.tool()
    def echo(text: str) -> str:
        """Returns the given text."""
        return text

    @app.tool()
    def token_grant(ctx: Context) -> str:
        """Names the grant that issued the access token this request carries."""
        token = get_access_token()
        if token is None:
            user = getattr(getattr(ctx.request_context, "request", None), "user", None)
            token = getattr(user, "access_token", None)
        return getattr(token, "grant", "unknown")

    @app.custom_route("/interop/state", methods=["GET"])
    async def state(_: Request) -> JSONResponse:
        return JSONResponse(
            {
                "live_login": provider.live_login_tokens(),
                "grants": provider.grants,
                "refused": provider.refused,
                "revoked": provider.revoked,
            }
        )

    @app.custom_route("/interop/expire", methods=["POST"])
    async def expire(_: Request) -> JSONResponse:
        provider.expire_access_tokens()
        return JSONResponse({"expired": True})

    app.run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
