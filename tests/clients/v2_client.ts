// The new client: reads the legacy client's users through openapi-fetch typed by the types
// openapi-typescript generated from v2's document, then exercises what v2 adds. One call goes
// through v1's generated types too. Run by tests/clients/run; any mismatch exits non-zero.
import { readFileSync } from "node:fs";
import createClient from "openapi-fetch";
// Generated into target/clients/ts by tests/clients/run (never committed).
import type { components, paths as V2 } from "../../target/clients/ts/v2.js";
import type { paths as V1 } from "../../target/clients/ts/v1.js";

type User = components["schemas"]["User"];
type Problem = components["schemas"]["Problem"];
type Legacy = { id: number; uuid: string; name: string; email: string; age: number | null };

function fail(message: string): never {
  console.error(`v2_client: FAIL: ${message}`);
  process.exit(1);
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) fail(message);
}

const env = (name: string): string => process.env[name] ?? fail(`${name} is not set`);
const base = env("CLIENTS_BASE");
const run = env("CLIENTS_RUN");
const headers = { Authorization: `Bearer ${env("CLIENTS_TOKEN")}`, "X-Tenant-ID": env("CLIENTS_TENANT") };
const v2 = createClient<V2>({ baseUrl: `${base}/api/v2`, headers });
const v1 = createClient<V1>({ baseUrl: `${base}/api/v1`, headers });
const legacy: Legacy[] = JSON.parse(readFileSync(process.argv[2] ?? fail("no handoff file"), "utf8"));
check(legacy.length >= 3, `handoff has ${legacy.length} users`);

// A problem answer: the status, the RFC 9457 media type, and the pointers of its field errors.
function problem(what: string, response: Response, error: Problem | undefined, status: number): Problem {
  check(response.status === status, `${what}: status ${response.status}, want ${status}`);
  const type = response.headers.get("Content-Type") ?? "";
  check(type.startsWith("application/problem+json"), `${what}: Content-Type ${type}`);
  check(error !== undefined && error.status === status, `${what}: body ${JSON.stringify(error)}`);
  return error;
}

// 1. The same users, read through v2: by e-mail filter, by UUID (with its ETag), by v1 integer id.
for (const user of legacy) {
  const { data, response } = await v2.GET("/users", { params: { query: { email: user.email } } });
  check(response.status === 200 && data !== undefined, `list by email ${user.email}: ${response.status}`);
  check(data.totalElements === 1 && data.content.length === 1, `list by email ${user.email}: ${data.totalElements} found`);
  const found: User = data.content[0]!;
  check(found.id === user.uuid, `by email: id ${found.id}, v2 client saw ${user.uuid}`);
  check(found.name === user.name && found.email === user.email && (found.age ?? null) === user.age,
    `by email: ${JSON.stringify(found)} differs from ${JSON.stringify(user)}`);

  const byUuid = await v2.GET("/users/{id}", { params: { path: { id: user.uuid } } });
  check(byUuid.response.status === 200 && byUuid.data?.name === user.name, `get ${user.uuid}: ${byUuid.response.status}`);
  check(byUuid.response.headers.get("ETag") === `"${byUuid.data.version}"`,
    `get ${user.uuid}: ETag ${byUuid.response.headers.get("ETag")} for version ${byUuid.data.version}`);

  const byInt = await v2.GET("/users/{id}", { params: { path: { id: String(user.id) } } });
  check(byInt.data?.id === user.uuid, `get by v1 id ${user.id}: ${byInt.response.status} ${byInt.data?.id}`);
}

// One call through v1's generated types: the legacy shape of the same first user.
{
  const first = legacy[0]!;
  const { data, response } = await v1.GET("/users/{id}", { params: { path: { id: first.uuid } } });
  check(response.status === 200 && data?.id === first.id && data.name === first.name,
    `v1 get by UUID: ${response.status} ${JSON.stringify(data)}`);
}

// 2. Walk count=false slices with a cursor to the end: every user once, in the sort's order.
{
  const all = await v2.GET("/users", { params: { query: { size: 100, sort: ["email,asc"] } } });
  check(all.data?.totalElements !== undefined, `count page: ${all.response.status}`);
  const expected = all.data.content.map((u) => u.id);
  check(expected.length === all.data.totalElements, `count page: ${expected.length} of ${all.data.totalElements}`);

  const seen: string[] = [];
  let cursor: string | undefined;
  for (let slice = 0; ; slice++) {
    check(slice <= expected.length, "cursor walk does not end");
    const query = { size: 2, sort: ["email,asc" as const], count: false, ...(cursor ? { cursor } : {}) };
    const { data, response } = await v2.GET("/users", { params: { query } });
    check(response.status === 200 && data !== undefined, `slice ${slice}: status ${response.status}`);
    check(data.totalElements === undefined && data.totalPages === undefined, `slice ${slice} has totals`);
    check(data.nextCursor !== undefined, `slice ${slice} has no nextCursor field (null on the last)`);
    seen.push(...data.content.map((u) => u.id));
    if (data.nextCursor === null) break;
    cursor = data.nextCursor;
  }
  check(JSON.stringify(seen) === JSON.stringify(expected),
    `cursor walk saw ${seen.length} users, not the ${expected.length} of the page, in order`);
}

// 3. A 400 problem naming each bad field by JSON pointer.
{
  const { error, response } = await v2.POST("/users", { body: { name: " ", email: "nope", age: 30 } });
  const body = problem("invalid create", response, error, 400);
  const pointers = body.errors.map((e) => e.pointer).sort();
  check(JSON.stringify(pointers) === JSON.stringify(["/email", "/name"]), `invalid create: pointers ${pointers}`);
}

// 4. Optimistic concurrency: a patch with the current ETag works; a PUT with the old one is 412.
{
  const id = legacy[1]!.uuid;
  const before = await v2.GET("/users/{id}", { params: { path: { id } } });
  const stale = before.response.headers.get("ETag") ?? fail("no ETag on GET");
  const patched = await v2.PATCH("/users/{id}", {
    params: { path: { id }, header: { "If-Match": stale } },
    body: { age: 44 },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  check(patched.response.status === 200 && patched.data?.age === 44, `patch: ${patched.response.status}`);
  const fresh = patched.response.headers.get("ETag");
  check(fresh !== null && fresh !== stale, `patch: ETag ${fresh} after ${stale}`);

  const { error, response } = await v2.PUT("/users/{id}", {
    params: { path: { id }, header: { "If-Match": stale } },
    body: { name: "Stale Writer", email: legacy[1]!.email, age: 50 },
  });
  problem("PUT with stale If-Match", response, error, 412);
  const after = await v2.GET("/users/{id}", { params: { path: { id } } });
  check(after.data?.name === legacy[1]!.name && after.data.age === 44, "the stale PUT changed the user");
}

// 5. Idempotency-Key: a retried POST replays the first answer and creates one user only.
{
  const email = `retried-${run}@example.com`;
  const send = () => v2.POST("/users", {
    params: { header: { "Idempotency-Key": `clients-${run}` } },
    body: { name: "Retried User", email, age: 25 },
  });
  const first = await send();
  const retry = await send();
  check(first.response.status === 201 && retry.response.status === 201,
    `keyed POST: ${first.response.status} then ${retry.response.status}`);
  check(first.response.headers.get("Idempotent-Replayed") === null, "first keyed POST says it was replayed");
  check(retry.response.headers.get("Idempotent-Replayed") === "true", "retry lacks Idempotent-Replayed: true");
  check(JSON.stringify(first.data) === JSON.stringify(retry.data), "the replay's body differs");
  check(first.response.headers.get("Location") === retry.response.headers.get("Location"), "the replay's Location differs");
  const { data } = await v2.GET("/users", { params: { query: { email } } });
  check(data?.totalElements === 1, `keyed POST twice made ${data?.totalElements} users`);
}

console.log(`v2_client: ok: read ${legacy.length} legacy users through v2 (and one through v1's types), ` +
  "walked the cursor to the end, got a 400 with pointers, a 412 and an idempotent replay");
