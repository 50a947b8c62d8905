"""Tandem's benchmark endpoints written the way FastAPI users write them: an asyncpg pool,
redis-py for the Idempotency-Key, PyJWT for the bearer token, pydantic for the body.

uvicorn app:app --workers 2 --loop uvloop --http httptools
"""

import json
import os

import asyncpg
import jwt
import redis.asyncio as redis
from fastapi import FastAPI, Header, HTTPException, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

app = FastAPI()
SECRET = os.environ["PEER_JWT_SECRET"]
USER_COLUMNS = "id, uuid, name, email, age, created_at, updated_at, version"
CUSTOMER_COLUMNS = "id, customer_number, name, email, phone, branch_code, created_date"


@app.on_event("startup")
async def startup():
    app.state.pool = await asyncpg.create_pool(os.environ["PEER_DATABASE_URL"], min_size=4, max_size=8)
    app.state.redis = redis.from_url(os.environ["PEER_REDIS_URL"])


def authenticate(authorization):
    if not authorization or not authorization.startswith("Bearer "):
        raise HTTPException(401)
    try:
        return jwt.decode(authorization[7:], SECRET, algorithms=["HS256"])
    except jwt.PyJWTError:
        raise HTTPException(401)


def stamp(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@app.get("/api/v2/users/{user_id}")
async def get_user(user_id: int, authorization: str | None = Header(None)):
    authenticate(authorization)
    row = await app.state.pool.fetchrow(f"SELECT {USER_COLUMNS} FROM users WHERE tenant = $1 AND id = $2", "default", user_id)
    if row is None:
        raise HTTPException(404)
    return {"id": str(row["uuid"]), "name": row["name"], "email": row["email"], "age": row["age"],
            "createdAt": stamp(row["created_at"]), "updatedAt": stamp(row["updated_at"]), "version": row["version"]}


@app.get("/api/v2/customers")
async def customers(page: int = 0, size: int = 20, authorization: str | None = Header(None)):
    authenticate(authorization)
    async with app.state.pool.acquire() as connection:
        rows = await connection.fetch(
            f"SELECT {CUSTOMER_COLUMNS} FROM customers WHERE tenant = $1 ORDER BY id LIMIT $2 OFFSET $3",
            "default", size, page * size)
        total = await connection.fetchval("SELECT n FROM customer_counts WHERE tenant = $1 AND branch_code = ''", "default")
    content = [{"id": r["id"], "customerNumber": r["customer_number"], "name": r["name"], "email": r["email"],
                "phone": r["phone"], "branchCode": r["branch_code"], "createdDate": stamp(r["created_date"])} for r in rows]
    pages = -(-total // size)
    return {"content": content, "pageable": {"pageNumber": page, "pageSize": size, "sort": [], "offset": page * size,
            "paged": True, "unpaged": False}, "totalElements": total, "totalPages": pages, "size": size, "number": page,
            "numberOfElements": len(content), "first": page == 0, "last": page >= pages - 1, "sort": [], "empty": not content}


class UserIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    email: str = Field(max_length=254, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    age: int | None = Field(default=None, ge=18)


@app.post("/users", status_code=201)
async def create_user(body: UserIn, response: Response, authorization: str | None = Header(None),
                      idempotency_key: str | None = Header(None)):
    claims = authenticate(authorization)
    key = f"peer:idem:{claims['sub']}:{idempotency_key}" if idempotency_key else None
    if key and not await app.state.redis.set(key, "inflight", nx=True, px=60_000):
        stored = await app.state.redis.get(key)
        if stored and stored != b"inflight":
            kept = json.loads(stored)
            return JSONResponse(kept["body"], status_code=201, headers={"Location": kept["location"], "Idempotent-Replayed": "true"})
        raise HTTPException(409)
    row = await app.state.pool.fetchrow(
        "INSERT INTO users (uuid, tenant, name, email, email_key, age, created_at, updated_at) "
        "VALUES (gen_random_uuid(), 'default', $1, $2, lower($2), $3, now(), now()) RETURNING id",
        body.name, body.email, body.age)
    result, location = {"id": row["id"], "name": body.name}, f"/users/{row['id']}"
    if key:
        await app.state.redis.set(key, json.dumps({"body": result, "location": location}), px=86_400_000)
    response.headers["Location"] = location
    return result
