#!/usr/bin/env python3
"""The official Python SDK's OAuth client (`mcp` 2.x: `mcp.client.auth.OAuthClientProvider` with a
`TokenStorage`, as the `auth` of the httpx2 client under `streamable_http_client`) against our
resource server (`switchboard serve --http ... --auth-issuer ISSUER`) with oidc-provider
(interop/oauth/server.mjs) as the authorization server.

    python interop/oauth/py_oauth_client.py --url http://127.0.0.1:PORT/mcp \
        --issuer http://127.0.0.1:PORT --machine-key FILE

FILE is the private key server.mjs wrote for the private_key_jwt client (MACHINE_KEY_FILE). The
person a browser would need is played by the `redirect_handler`: it fetches the authorization
URL with httpx2 and follows oidc-provider's login and consent redirects (which approve at once)
with a cookie jar, stopping at the redirect URI; the `callback_handler` hands the SDK that
redirect's code, state and iss. The clients connect with `mode="auto"`: our server answers the
`server/discover` probe, so they speak revision 2026-07-28, where every POST carries the token.

Prints one line per check (`PASS name` / `FAIL name: why`), then `N passed, M failed`; exits 0
only when every check passed.
"""

from __future__ import annotations

import argparse
import base64
import importlib.metadata
import json
import logging
import sys
import traceback
import warnings
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

warnings.simplefilter("ignore", DeprecationWarning)
# The session warns that a tool called before the list was read cannot have its structured
# content validated; these checks call tools they did not list first.
logging.getLogger("mcp.client.session").setLevel(logging.ERROR)

REDIRECT = "http://127.0.0.1/callback"
CIMD_NO_REFRESH = "https://client.switchboard.test/oauth/no-refresh.json"
SIMPLE_TEXT = "This is a simple text response for testing."
USER = "switchboard-test-user"
OVERALL_TIMEOUT_S = 120.0

passed = 0
failed = 0


def ok(name: str) -> None:
    global passed
    passed += 1
    print(f"PASS {name}", flush=True)


def bad(name: str, why: str) -> None:
    global failed
    failed += 1
    print(f"FAIL {name}: {why}", flush=True)


async def check(name: str, fn: Callable[[], Awaitable[Any]]) -> None:
    """Runs `fn`; an exception or a false result fails `name`, a string result is the reason."""
    try:
        r = await fn()
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        bad(name, " | ".join(traceback.format_exception_only(e)).strip()[:600])
        return
    if r is True or r is None:
        ok(name)
    else:
        bad(name, "check failed" if r is False else str(r))


def claims_of(jwt: str) -> dict[str, Any]:
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def texts(result: types.CallToolResult) -> list[tuple[str, str]]:
    return [(c.type, getattr(c, "text", "")) for c in result.content]


# ---------------------------------------------------------------- storage and the user agent


class MemoryStorage(TokenStorage):
    """A `TokenStorage` in memory that records what the SDK stores."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None
        self.token_history: list[OAuthToken] = []
        self.client_history: list[OAuthClientInformationFull] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.token_history.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info
        self.client_history.append(client_info)


class HeadlessAgent:
    """The `redirect_handler` and `callback_handler` pair: the first follows the authorization URL's
    redirects with a cookie jar down to REDIRECT, the second returns what that redirect carried."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self._back: dict[str, str] | None = None

    async def redirect(self, authorization_url: str) -> None:
        self.urls.append(authorization_url)
        async with httpx2.AsyncClient(follow_redirects=False, timeout=15.0) as http:
            url = authorization_url
            for _ in range(20):
                r = await http.get(url)
                location = r.headers.get("location")
                if not (300 <= r.status_code < 400) or not location:
                    raise RuntimeError(f"the authorization server answered {r.status_code} without a redirect")
                nxt = urljoin(url, location)
                p = urlparse(nxt)
                if f"{p.scheme}://{p.netloc}{p.path}" == REDIRECT:
                    q = {k: v[0] for k, v in parse_qs(p.query).items()}
                    if "error" in q:
                        raise RuntimeError(f"authorization refused: {q['error']}")
                    self._back = q
                    return
                url = nxt
            raise RuntimeError("more than 20 redirects")

    async def callback(self) -> AuthorizationCodeResult:
        back, self._back = self._back, None
        if back is None:
            raise RuntimeError("no redirect came back")
        return AuthorizationCodeResult(code=back["code"], state=back.get("state"), iss=back.get("iss"))

    def last_query(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlparse(self.urls[-1]).query).items()}


def client_for(url: str, auth: httpx2.Auth) -> Client:
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30.0, read=60.0))
    return Client(
        streamable_http_client(url, http_client=http),
        client_info=types.Implementation(name="switchboard-oauth-interop-py", version="1.0.0"),
        read_timeout_seconds=60.0,
        mode="auto",
        cache=None,
    )


# ---------------------------------------------------------------- the checks


async def raw_post(url: str, body: dict[str, Any], token: str | None = None) -> httpx2.Response:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(timeout=15.0) as http:
        return await http.post(url, content=json.dumps(body), headers=headers)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


async def run(url: str, issuer: str, machine_key: str) -> None:
    prm_url = url.removesuffix("/mcp") + "/.well-known/oauth-protected-resource/mcp"

    async def no_token() -> Any:
        r = await raw_post(url, INITIALIZE)
        challenge = r.headers.get("www-authenticate", "")
        if r.status_code != 401:
            return f"status {r.status_code}"
        return (f'resource_metadata="{prm_url}"' in challenge and 'scope="mcp:basic"' in challenge) or challenge

    await check("[AU-4] [AU-22] no token: 401 with a Bearer challenge naming the metadata and the scope", no_token)

    # Dynamic registration, authorization code with PKCE; `short-lived` asks oidc-provider for
    # access tokens that expire in two seconds, which the SDK refreshes ahead of expiry.
    storage = MemoryStorage()
    agent = HeadlessAgent()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="py-sdk short-lived",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=agent.redirect,
        callback_handler=agent.callback,
    )
    client = client_for(url, provider)
    connected = False
    try:
        async with client:
            connected = True

            async def first_authorization() -> Any:
                q = agent.last_query()
                if len(agent.urls) != 1:
                    return f"{len(agent.urls)} authorization requests"
                if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
                    return f"PKCE {q}"
                if q.get("resource") != url:
                    return f"resource {q.get('resource')}"
                return "mcp:basic" in q.get("scope", "").split() or f"scope {q.get('scope')}"

            await check("[AU-13] [AU-15] the SDK asked for authorization: S256, resource, challenged scope", first_authorization)

            async def registered() -> Any:
                if len(storage.client_history) != 1 or not storage.client_history[0].client_id:
                    return f"{len(storage.client_history)} registrations"
                cid = storage.client_history[0].client_id
                return (cid != CIMD_NO_REFRESH and agent.last_query().get("client_id") == cid) or cid

            await check("[AU-16] dynamic client registration (RFC 7591) at oidc-provider", registered)

            async def audience_bound() -> Any:
                t = storage.tokens
                if t is None or not t.refresh_token:
                    return "no tokens, or no refresh token"
                c = claims_of(t.access_token)
                if c.get("aud") != url:
                    return f"aud {c.get('aud')}"
                return c.get("sub") == USER or f"sub {c.get('sub')}"

            await check("the code from the headless redirect was exchanged for an audience-bound token", audience_bound)

            async def modern() -> Any:
                return client.protocol_version == "2026-07-28" or f"protocol version {client.protocol_version}"

            await check("the connection speaks revision 2026-07-28 (server/discover answered)", modern)

            async def listed() -> Any:
                names: list[str] = []
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    names += [t.name for t in page.tools]
                    cursor = page.next_cursor
                    if not cursor:
                        break
                return ("test_simple_text" in names and "test_scoped_write" in names) or ",".join(names)

            await check("tools/list through the authorized connection (every page)", listed)

            async def simple() -> Any:
                r = await client.call_tool("test_simple_text", {})
                return texts(r) == [("text", SIMPLE_TEXT)] or repr(r)

            await check("tools/call test_simple_text: the exact text", simple)

            async def refreshed() -> Any:
                before = storage.tokens
                assert before is not None
                await anyio.sleep(3.0)
                r = await client.call_tool("test_simple_text", {})
                after = storage.tokens
                assert after is not None
                if after.access_token == before.access_token:
                    return "the same access token"
                if after.refresh_token == before.refresh_token:
                    return "the refresh token was not rotated"
                if len(agent.urls) != 1:
                    return "a new authorization instead of a refresh"
                return texts(r) == [("text", SIMPLE_TEXT)] or repr(r)

            await check("[AU-25] an expiring token is refreshed (rotated refresh token), the call goes on", refreshed)
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, (KeyboardInterrupt, SystemExit)) or connected:
            raise
        bad("authorization-code client: connect", " | ".join(traceback.format_exception_only(e)).strip()[:600])

    async def another_resource() -> Any:
        async with httpx2.AsyncClient(timeout=15.0) as http:
            r = await http.post(
                f"{issuer}/token",
                data={"grant_type": "client_credentials", "resource": "http://127.0.0.1:1/other", "scope": "mcp:basic"},
                auth=("switchboard-machine", "switchboard-machine-secret"),
            )
        other = r.json()["access_token"]
        if claims_of(other)["aud"] != "http://127.0.0.1:1/other":
            return "no token for the other resource"
        r = await raw_post(url, INITIALIZE, other)
        challenge = r.headers.get("www-authenticate", "")
        return (r.status_code == 401 and 'error="invalid_token"' in challenge) or f"{r.status_code} {challenge}"

    await check("[AU-21] [SEC-TP-1] a token of the same issuer for another resource: 401 invalid_token", another_resource)

    # A client ID metadata document instead of registration (no refresh tokens); the SDK's
    # step-up on 403 is a new authorization with the union of the scopes. Step-up is checked with
    # this client rather than the registered one: the SDK registers with the challenged scope
    # (`mcp:basic`), and oidc-provider holds a client to the scopes it registered with (RFC 7591
    # §2), so it refuses that client's step-up with `invalid_scope`.
    storage = MemoryStorage()
    agent = HeadlessAgent()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="py-sdk (client ID metadata document)",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=agent.redirect,
        callback_handler=agent.callback,
        client_metadata_url=CIMD_NO_REFRESH,
    )
    client = client_for(url, provider)
    connected = False
    try:
        async with client:
            connected = True

            async def cimd() -> Any:
                if [c.client_id for c in storage.client_history] != [CIMD_NO_REFRESH]:
                    return repr(storage.client_history)
                assert storage.tokens is not None
                return claims_of(storage.tokens.access_token).get("client_id") == CIMD_NO_REFRESH or "client_id claim"

            await check("[AU-10] a client ID metadata document URL as client_id, no registration", cimd)

            async def step_up() -> Any:
                asked = len(agent.urls)
                r = await client.call_tool("test_scoped_write", {})
                if len(agent.urls) != asked + 1:
                    return f"{len(agent.urls) - asked} new authorization requests"
                scope = agent.last_query().get("scope", "").split()
                if "mcp:write" not in scope or "mcp:basic" not in scope:
                    return f"scope {scope}"
                return texts(r) == [("text", f"Scoped write done for {USER}")] or repr(r)

            await check("[AU-26] [AU-7] step-up: 403 on test_scoped_write, a new authorization for mcp:basic mcp:write", step_up)
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, (KeyboardInterrupt, SystemExit)) or connected:
            raise
        bad("client ID metadata document client: connect", " | ".join(traceback.format_exception_only(e)).strip()[:600])

    async def machine_nosub() -> Any:
        storage = MemoryStorage()
        provider = ClientCredentialsOAuthProvider(
            server_url=url,
            storage=storage,
            client_id="switchboard-machine-nosub",
            client_secret="switchboard-machine-nosub-secret",
            scope="mcp:basic mcp:write",
            issuer=issuer,
        )
        async with client_for(url, provider) as c:
            r = await c.call_tool("test_scoped_write", {})
        assert storage.tokens is not None
        if "sub" in claims_of(storage.tokens.access_token):
            return "the token has a sub"
        return texts(r) == [("text", "Scoped write done for switchboard-machine-nosub")] or repr(r)

    await check(
        "[SEC-SH-5] client credentials (client_secret_basic), a token without sub: the client is the subject",
        machine_nosub,
    )

    async def machine_jwt() -> Any:
        storage = MemoryStorage()
        with open(machine_key, encoding="utf-8") as f:
            pem = f.read()
        provider = PrivateKeyJWTOAuthProvider(
            server_url=url,
            storage=storage,
            client_id="switchboard-machine-jwt",
            assertion_provider=SignedJWTParameters(
                issuer="switchboard-machine-jwt",
                subject="switchboard-machine-jwt",
                signing_key=pem,
                signing_algorithm="ES256",
            ).create_assertion_provider(),
            scope="mcp:basic",
            issuer=issuer,
        )
        async with client_for(url, provider) as c:
            r = await c.call_tool("test_simple_text", {})
        assert storage.tokens is not None
        if claims_of(storage.tokens.access_token).get("client_id") != "switchboard-machine-jwt":
            return "client_id claim"
        return texts(r) == [("text", SIMPLE_TEXT)] or repr(r)

    await check("client credentials with private_key_jwt (RFC 7523, ES256)", machine_jwt)


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--issuer", required=True)
    ap.add_argument("--machine-key", required=True)
    opts = ap.parse_args()
    print(f"# py_oauth_client (mcp {importlib.metadata.version('mcp')}) -> {opts.url}, authorization server {opts.issuer}")
    try:
        with anyio.fail_after(OVERALL_TIMEOUT_S):
            await run(opts.url, opts.issuer, opts.machine_key)
    except TimeoutError:
        bad("overall", f"not done within {OVERALL_TIMEOUT_S} s")
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        bad("run", " | ".join(traceback.format_exception(e))[-1500:])
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
