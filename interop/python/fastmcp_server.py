"""A small MCP server on fastmcp (PyPI), for interop.

Usage: fastmcp_server.py [stdio | http PORT]
"""
import sys

from fastmcp import FastMCP

app = FastMCP("fastmcp-interop")


@app.tool
def echo(text: str) -> str:
    """Returns the given text."""
    return text


@app.resource("note://hello")
def hello() -> str:
    """A fixed note."""
    return "hello from fastmcp"


@app.prompt
def greet(name: str) -> str:
    """Greets someone."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        app.run("stdio", show_banner=False)
    else:
        port = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
        app.run("http", host="127.0.0.1", port=port, show_banner=False)
