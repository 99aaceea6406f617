"""A small real HTTP API for the OpenAPI tests: FastAPI generates its
OpenAPI 3.1 document at /openapi.json, and the tests turn it into MCP tools.

It has path, query and body parameters, an enum, an array query parameter,
an error status, a binary response, an API-key scheme and a bearer scheme.
Every request it serves is recorded; GET /_seen returns them (method, path,
query pairs, the API key and bearer token as sent, the JSON body), so a test
can check that the app saw the requests the document describes.

Usage: python openapi_app.py  (listens on 127.0.0.1, an ephemeral port,
printed as "listening on http://127.0.0.1:PORT" once ready)
"""

import enum
import socket
import sys
from typing import List, Optional

import uvicorn
from fastapi import Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

app = FastAPI(title="Pet shop", version="1.0.0")
SEEN = []
PETS = {1: {"id": 1, "name": "Rex", "kind": "dog", "tags": ["good"]}}

api_key = APIKeyHeader(name="X-Api-Key", auto_error=False)
bearer = HTTPBearer(auto_error=False)


class Kind(str, enum.Enum):
    dog = "dog"
    cat = "cat"
    bird = "bird"


class NewPet(BaseModel):
    name: str
    kind: Kind
    tags: List[str] = []


class Pet(BaseModel):
    id: int
    name: str
    kind: Kind
    tags: List[str] = []


@app.middleware("http")
async def record(request: Request, call_next):
    if request.url.path != "/_seen" and request.url.path != "/openapi.json":
        body = await request.body()
        SEEN.append(
            {
                "method": request.method,
                "path": request.url.path,
                "raw_path": request.scope.get("raw_path", b"").decode("latin-1"),
                "query": list(request.query_params.multi_items()),
                "api_key": request.headers.get("x-api-key"),
                "authorization": request.headers.get("authorization"),
                "body": body.decode("utf-8", "replace"),
            }
        )
    return await call_next(request)


@app.get("/_seen", include_in_schema=False)
def seen():
    return SEEN


@app.get("/pets", operation_id="list_pets", summary="List pets", tags=["pets"])
def list_pets(
    kind: Optional[Kind] = None,
    tags: List[str] = Query(default=[]),
    limit: int = Query(default=10, ge=1, le=100),
) -> List[Pet]:
    pets = [p for p in PETS.values() if kind is None or p["kind"] == kind.value]
    if tags:
        pets = [p for p in pets if set(tags) & set(p["tags"])]
    return pets[:limit]


@app.get("/pets/{pet_id}", operation_id="get_pet", summary="Get one pet", tags=["pets"])
def get_pet(pet_id: int) -> Pet:
    if pet_id not in PETS:
        raise HTTPException(status_code=404, detail=f"no pet {pet_id}")
    return PETS[pet_id]


@app.post("/pets", operation_id="create_pet", summary="Add a pet", tags=["admin"])
def create_pet(pet: NewPet, key: Optional[str] = Depends(api_key)) -> Pet:
    if key != "k-123":
        raise HTTPException(status_code=401, detail="bad api key")
    new_id = max(PETS) + 1
    PETS[new_id] = {"id": new_id, **pet.model_dump(mode="json")}
    return PETS[new_id]


@app.get(
    "/files/{name}",
    operation_id="download_file",
    summary="A binary file",
    tags=["files"],
    responses={200: {"content": {"application/octet-stream": {}}}},
)
def download_file(
    name: str, creds: Optional[HTTPAuthorizationCredentials] = Depends(bearer)
):
    if creds is None or creds.credentials != "b-456":
        raise HTTPException(status_code=403, detail="bad bearer token")
    return Response(content=bytes(range(256)) + name.encode(), media_type="application/octet-stream")


def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the line is printed: a client that connects at once
    # waits in the backlog until the server accepts.
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
