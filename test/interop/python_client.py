"""Drives pagewise with the official Python MCP SDK client, as a Python agent would.

Usage:
  python_client.py SCENARIO [+ SCENARIO ...]
where a SCENARIO is one of
  stdio NODE BIN ROOT [MODE]
  http URL TOKEN [MODE]

MODE is the client's negotiation mode: "auto" (the SDK's default: probe server/discover, fall back
to initialize) or "legacy" (the initialize handshake). The root (or the token's root) must hold
big.txt, app.log and data.json as test/python-interop.e2e.test.ts writes them. Scenarios run one
after another with a fresh client each, in one process (importing the SDK once). Prints one JSON
object per scenario, one a line, in order: what was negotiated and what each tool returned, for the
test to check, or {"failed": "..."} for a scenario that raised.
"""

import asyncio
import hashlib
import json
import sys
import traceback

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def parse(result):
    """The one text block of a tool result, parsed, with the error flag."""
    assert len(result.content) == 1, f"expected one content block, got {len(result.content)}"
    assert result.structured_content is None, "no structuredContent copy expected"
    text = result.content[0].text
    return json.loads(text), bool(result.is_error), text


async def run(client):
    out = {"protocol_version": client.protocol_version}
    tools = await client.list_tools()
    out["tools"] = [tool.name for tool in tools.tools]
    out["instructions"] = client.instructions

    # read, page by page to the end: the bytes must match the file.
    pages = []
    page, error, _ = parse(await client.call_tool("read", {"path": "big.txt", "max_tokens": 3000}))
    assert not error, page
    pages.append(page["content"])
    while page["has_more"]:
        page, error, _ = parse(
            await client.call_tool("read", {"cursor": page["next_cursor"], "max_tokens": 3000})
        )
        assert not error, page
        pages.append(page["content"])
    joined = "".join(pages).encode("utf-8")
    out["read"] = {"pages": len(pages), "sha256": hashlib.sha256(joined).hexdigest(), "bytes": len(joined)}

    listing, error, _ = parse(await client.call_tool("list", {}))
    out["list"] = sorted(item["path"] for item in listing["items"]) if not error else listing

    found, error, _ = parse(await client.call_tool("search", {"pattern": "needle", "max_tokens": 4000}))
    out["search"] = found if error else [f'{item["path"]}:{item["line"]}' for item in found["items"]]

    tail, error, _ = parse(await client.call_tool("tail", {"path": "app.log", "limit": 2}))
    out["tail"] = tail if error else [item["text"] for item in tail["items"]]

    queried, error, _ = parse(
        await client.call_tool(
            "json_read", {"path": "data.json", "language": "jsonpath", "query": "$.items[*].id"}
        )
    )
    out["json_read"] = queried if error else [item["value"] for item in queried["items"]]

    errors = {}
    for name, tool, args in [
        ("missing", "read", {"path": "no-such-file.txt", "max_tokens": 500}),
        ("outside", "read", {"path": "/etc/passwd", "max_tokens": 500}),
        ("zero_budget", "read", {"path": "big.txt", "max_tokens": 0}),
        ("huge_limit", "read", {"path": "big.txt", "max_tokens": 200, "limit": 1e21}),
        ("tail_cursor", "tail", {"path": "app.log", "cursor": "abc"}),
        ("bad_cursor", "read", {"cursor": "not-a-cursor", "max_tokens": 500}),
    ]:
        body, error, _ = parse(await client.call_tool(tool, args))
        errors[name] = {"is_error": error, "code": body.get("error", {}).get("code")}
    out["errors"] = errors
    return out


async def scenario(args):
    """Connects as one scenario says, and runs every call on a fresh client."""
    kind = args[0]
    if kind == "stdio":
        node, bin_path, root = args[1:4]
        mode = args[4] if len(args) > 4 else "auto"
        server = StdioServerParameters(command=node, args=[bin_path, "serve", "--root", root])
        async with Client(server, mode=mode) as client:
            return await run(client)
    url, token = args[1:3]
    mode = args[3] if len(args) > 3 else "auto"
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            return await run(client)


async def main(argv):
    scenarios = [[]]
    for arg in argv[1:]:
        if arg == "+":
            scenarios.append([])
        else:
            scenarios[-1].append(arg)
    for args in scenarios:
        try:
            result = await scenario(args)
        except Exception:  # reported for this scenario's test; the next scenario still runs
            result = {"failed": traceback.format_exc()}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
