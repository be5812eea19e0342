#!/usr/bin/env python3
"""The official Python SDK's client (`mcp` 2.x: `Client` over `streamable_http_client`, with an
`OAuthClientProvider`) against `switchboard serve --hostile SCENARIO --http ADDR`
(interop/hostile-peers.sh). It does what a host does: connect and list the tools, approving every
authorization the SDK asks for at once (a headless user agent following the redirects to the
redirect URI). What the SDK does is observed by the hostile server, not here; this prints one
line, `outcome: ...`, and exits 0 unless it cannot start.

    python interop/hostile_client.py --url http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import argparse
import logging
import warnings
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)

REDIRECT = "http://127.0.0.1/callback"


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class HeadlessAgent:
    def __init__(self) -> None:
        self._back: dict[str, str] | None = None

    async def redirect(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10.0) as http:
            url = authorization_url
            for _ in range(10):
                r = await http.get(url)
                location = r.headers.get("location")
                if not (300 <= r.status_code < 400) or not location:
                    raise RuntimeError(f"authorization answered {r.status_code}")
                nxt = urljoin(url, location)
                p = urlparse(nxt)
                if f"{p.scheme}://{p.netloc}{p.path}" == REDIRECT:
                    self._back = {k: v[0] for k, v in parse_qs(p.query).items()}
                    return
                url = nxt
            raise RuntimeError("too many redirects")

    async def callback(self) -> AuthorizationCodeResult:
        back, self._back = self._back, None
        if back is None:
            raise RuntimeError("no redirect came back")
        return AuthorizationCodeResult(code=back["code"], state=back.get("state"), iss=back.get("iss"))


async def run(url: str) -> str:
    agent = HeadlessAgent()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="hostile-test-py",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryStorage(),
        redirect_handler=agent.redirect,
        callback_handler=agent.callback,
    )
    http = httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30.0, read=60.0))
    client = Client(
        streamable_http_client(url, http_client=http),
        client_info=types.Implementation(name="hostile-test-py", version="1.0.0"),
        read_timeout_seconds=60.0,
        mode="legacy",
        cache=None,
    )
    async with client:
        tools = await client.list_tools()
        return f"listed {len(tools.tools)} tools"


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    args = ap.parse_args()
    outcome = "timed out after 30 s"
    with anyio.move_on_after(30):
        try:
            outcome = await run(args.url)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            while isinstance(e, BaseExceptionGroup) and e.exceptions:
                e = e.exceptions[0]
            outcome = f"error: {type(e).__name__}: {str(e)[:300]}"
    print(f"outcome: {outcome}", flush=True)


if __name__ == "__main__":
    anyio.run(main)
