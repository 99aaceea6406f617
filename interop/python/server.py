"""A small MCP server on the official Python SDK (PyPI `mcp` 2.x), for interop.

Usage: server.py [stdio | streamable-http PORT]
"""
import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("py-interop")


@app.tool()
def echo(text: str) -> str:
    """Returns the given text."""
    return text


@app.tool()
def add(a: float, b: float) -> float:
    """Adds two numbers."""
    return a + b


@app.resource("note://hello")
def hello() -> str:
    """A fixed note."""
    return "hello from python"


@app.prompt()
def greet(name: str) -> str:
    """Greets someone."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        app.run("stdio")
    else:
        port = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
        app.run("streamable-http", host="127.0.0.1", port=port)
