"""A host on the official Python SDK (PyPI `mcp` 2.x) in front of
`mcp serve --stdio`, for `cargo xtask interop`: it lists the merged tools of
the servers behind the gateway, calls one tool of each, reads a resource,
gets a prompt, answers a server's sampling request, and sees `list_changed`
only after the operator adopted a changed tool list (it plays the operator
too, with `mcp serve --control SOCKET`).

Usage:
  gateway_host.py check MCP CONFIG SOCKET
      one JSON line per check: {"check", "status": "pass"|"fail", "detail"}
  gateway_host.py check-url MCP URL SOCKET
      the same checks against a running `mcp serve --http` at URL
      (Streamable HTTP), whose control socket is SOCKET
  gateway_host.py bench N TOOL -- COMMAND [ARGS...]
  gateway_host.py bench N TOOL -- URL
      N sequential calls of TOOL on the server COMMAND starts (or the
      Streamable HTTP server at URL), after a warm-up; one JSON line with
      calls/s and the median latency

The session uses the `initialize` handshake (2025-11-25): requests from
servers (sampling) travel on a legacy session only.
"""

import json
import re
import subprocess
import sys
import time

import contextlib

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


@contextlib.asynccontextmanager
async def transport(command: str, args: list[str]):
    """The streams of the server COMMAND starts, or of the server at a URL."""
    if command.startswith(("http://", "https://")):
        async with streamable_http_client(command) as streams:
            yield streams[0], streams[1]
    else:
        async with stdio_client(StdioServerParameters(command=command, args=args)) as (read, write):
            yield read, write


def emit(check: str, ok: bool, detail: object) -> None:
    print(json.dumps({"check": check, "status": "pass" if ok else "fail", "detail": str(detail)}), flush=True)


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def step(check: str, body) -> None:
    """One named check; an exception is that check's failure, not the run's."""
    try:
        ok, detail = await body()
        emit(check, ok, detail)
    except Exception as e:  # noqa: BLE001 - reported as the check's failure
        emit(check, False, repr(e)[:200])


async def all_tools(session: ClientSession) -> list[str]:
    names: list[str] = []
    cursor = None
    while True:
        page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
        names.extend(t.name for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return names


async def check(mcp: str, config: str, socket: str, url: str | None = None) -> None:
    changed = {"count": 0}
    heard = anyio.Event()

    async def sampling(context, params: types.CreateMessageRequestParams):
        meta = params.meta if isinstance(params.meta, dict) else (params.meta.model_dump() if params.meta else {})
        server = meta.get("mcp-gateway/server", "?")
        return types.CreateMessageResult(
            model="python-sdk-host",
            role="assistant",
            content=types.TextContent(type="text", text=f"four (asked by {server})"),
        )

    async def messages(message) -> None:
        inner = getattr(message, "root", message)
        if getattr(inner, "method", None) == "notifications/tools/list_changed":
            changed["count"] += 1
            heard.set()

    def control(*words: str) -> str:
        out = subprocess.run([mcp, "serve", "--control", socket, *words], capture_output=True, text=True, check=True)
        return out.stdout

    target = (url, []) if url else (mcp, ["--config", config, "serve", "--stdio", "--control", socket])
    async with transport(*target) as (read, write):
        async with ClientSession(read, write, sampling_callback=sampling, message_handler=messages) as session:

            async def initialize():
                init = await session.initialize()
                return init.server_info.name == "mcp-gateway", f"{init.server_info.name} {init.protocol_version}"

            await step("initialize", initialize)

            async def merged():
                names = await all_tools(session)
                return all(n in names for n in ["legacy_echo", "modern_add", "remote_text"]), ",".join(names)

            await step("tools/list (merged)", merged)

            async def call(name: str, args: dict, want: str):
                r = await session.call_tool(name, args)
                return text_of(r) == want and not r.is_error, text_of(r)

            await step("call (legacy stdio)", lambda: call("legacy_echo", {"text": "hi"}, "hi"))
            await step("call (2026 stdio)", lambda: call("modern_add", {"a": 2, "b": 3}, "5"))
            await step("call (http)", lambda: call("remote_text", {}, "remote says hi"))

            async def read():
                r = await session.read_resource("mcp-gateway://legacy/file:///readme.txt")
                text = getattr(r.contents[0], "text", None)
                return text == "read me", text

            await step("resources/read", read)

            async def prompt():
                r = await session.get_prompt("modern/greet", {"who": "python"})
                said = getattr(r.messages[0].content, "text", None)
                return said == "hello python", said

            await step("prompts/get", prompt)

            async def sample():
                r = await session.call_tool("ask", {})
                return "four (asked by legacy)" in text_of(r) and not r.is_error, text_of(r)[:80]

            await step("sampling (server asks host)", sample)

            async def list_changed():
                await session.call_tool("change", {})
                pending = ""
                for _ in range(200):
                    pending = control("pending")
                    if "+fresh" in pending:
                        break
                if "+fresh" not in pending:
                    return False, f"nothing pending: {pending}"
                if changed["count"] != 0:
                    return False, "list_changed came before the approval"
                generation = re.search(r"generation (\d+)", pending).group(1)
                control("adopt", "legacy", generation)
                with anyio.move_on_after(20):
                    await heard.wait()
                names = await all_tools(session)
                fresh = "fresh" in names
                return changed["count"] > 0 and fresh, f"heard {changed['count']}, fresh listed: {fresh}"

            await step("list_changed after approval", list_changed)


async def bench(n: int, tool: str, command: str, args: list[str]) -> None:
    async with transport(command, args) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            arguments = {"text": "hello from the gateway bench"}
            for _ in range(min(n, 200)):
                await session.call_tool(tool, arguments)
            latencies = []
            start = time.perf_counter()
            for _ in range(n):
                t = time.perf_counter()
                await session.call_tool(tool, arguments)
                latencies.append((time.perf_counter() - t) * 1e3)
            seconds = time.perf_counter() - start
    latencies.sort()
    print(json.dumps({"client": "python", "calls": n, "calls_per_s": n / seconds, "p50_ms": latencies[n // 2]}))


def main() -> None:
    args = sys.argv[1:]
    if len(args) == 4 and args[0] == "check":
        try:
            anyio.run(check, args[1], args[2], args[3])
        except Exception as e:  # noqa: BLE001 - reported as a failed check
            emit("connect", False, repr(e)[:200])
    elif len(args) == 4 and args[0] == "check-url":
        try:
            anyio.run(check, args[1], "", args[3], args[2])
        except Exception as e:  # noqa: BLE001 - reported as a failed check
            emit("connect", False, repr(e)[:200])
    elif len(args) >= 5 and args[0] == "bench" and args[3] == "--":
        anyio.run(bench, int(args[1]), args[2], args[4], args[5:])
    else:
        print(
            "usage: gateway_host.py check MCP CONFIG SOCKET | check-url MCP URL SOCKET"
            " | bench N TOOL -- COMMAND [ARGS...] | bench N TOOL -- URL",
            file=sys.stderr,
        )
        sys.exit(2)


if __name__ == "__main__":
    main()
