"""Peer client: the official Python SDK (`mcp` on PyPI) over Streamable HTTP:
`ClientSession` over `streamable_http_client`, used the way its docs show.
The legacy era runs `initialize()` (2025-11-25); 2026-07-28 runs
`discover()` (`server/discover`) instead.

Usage: python client.py <cold|seq|conc|big|list> <N> <URL> [legacy|2026]
Prints one JSON line. CPU and time figures start after the imports.
"""

import json
import math
import os
import resource
import sys
import time

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ECHO_TEXT = "hello from the MCP peer benchmark"


def peak_rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def percentile(sorted_vals: list, p: float) -> float:
    if not sorted_vals:
        return 0.0
    rank = math.ceil(p / 100 * len(sorted_vals))
    return sorted_vals[min(max(rank, 1), len(sorted_vals)) - 1]


def check_text(r, want_len: int) -> None:
    if r.is_error or len(r.content) != 1 or r.content[0].type != "text":
        raise RuntimeError(f"unexpected tool result: {r!r}"[:200])
    if len(r.content[0].text) != want_len:
        raise RuntimeError(f"text length {len(r.content[0].text)} != {want_len}")


async def main() -> None:
    args = sys.argv[1:]
    if len(args) < 3:
        raise SystemExit("usage: client.py <workload> <N> <URL> [legacy|2026]")
    workload, n, url = args[0], int(args[1]), args[2]
    modern = len(args) > 3 and args[3] in ("2026", "2026-07-28")
    conc = int(os.environ.get("MCP_BENCH_CONC", "64"))
    kb = int(os.environ.get("MCP_BENCH_KB", "1024"))
    out: dict = {"client": "python", "workload": workload, "n": n}

    t0 = time.perf_counter()
    # The SDK bounds one SSE event at 1 MiB by default, which a 1 MiB text
    # result (JSON-escaped) exceeds: this client raises it through the
    # documented parameter, as an application expecting such results would.
    async with streamable_http_client(url, max_sse_event_size=16 * 1024 * 1024) as (read, write):
        async with ClientSession(read, write) as session:
            if modern:
                await session.discover()
            else:
                await session.initialize()
            out["protocol"] = session.protocol_version
            want = "2026-07-28" if modern else "2025-11-25"
            if session.protocol_version != want:
                raise RuntimeError(f"negotiated {session.protocol_version}, want {want}")
            out["init_ms"] = (time.perf_counter() - t0) * 1e3

            async def echo():
                check_text(await session.call_tool("echo", {"text": ECHO_TEXT}), len(ECHO_TEXT))

            async def blob():
                check_text(await session.call_tool("blob", {"kb": kb}), kb * 1024)

            async def list_tools():
                r = await session.list_tools()
                if len(r.tools) != 50:
                    raise RuntimeError(f"expected 50 tools, got {len(r.tools)}")

            if workload == "cold":
                await list_tools()
            elif workload in ("seq", "big", "list"):
                one, warm = {"seq": (echo, 200), "big": (blob, 2), "list": (list_tools, 20)}[workload]
                for _ in range(warm):
                    await one()
                lat = [0.0] * n
                t, cpu0 = time.perf_counter(), cpu_s()
                for i in range(n):
                    s = time.perf_counter()
                    await one()
                    lat[i] = (time.perf_counter() - s) * 1e6
                el = time.perf_counter() - t
                out["cpu_s"] = cpu_s() - cpu0
                lat.sort()
                out.update(elapsed_s=el, ops_per_s=n / el, p50_us=percentile(lat, 50), p99_us=percentile(lat, 99))
                if workload == "big":
                    out["mb_per_s"] = n * kb * 1024 / 1e6 / el
            elif workload == "conc":
                for _ in range(200):
                    await echo()
                state = {"next": 0}

                async def worker() -> None:
                    while state["next"] < n:
                        state["next"] += 1
                        await echo()

                t, cpu0 = time.perf_counter(), cpu_s()
                async with anyio.create_task_group() as tg:
                    for _ in range(min(conc, n)):
                        tg.start_soon(worker)
                el = time.perf_counter() - t
                out["cpu_s"] = cpu_s() - cpu0
                out.update(elapsed_s=el, ops_per_s=n / el, concurrency=conc)
            else:
                raise SystemExit(f"unknown workload {workload}")
    out["total_ms"] = (time.perf_counter() - t0) * 1e3
    out["peak_rss_kb"] = peak_rss_kb()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    anyio.run(main)
