// Tandem's benchmark endpoints written the way Fastify users write them: the `postgres`
// client, ioredis for the Idempotency-Key, @fastify/jwt for the bearer token, a JSON schema for
// the body. One process, as a container usually runs it.
'use strict'

const fastify = require('fastify')({ logger: false })
const postgres = require('postgres')
const Redis = require('ioredis')

const sql = postgres(process.env.PEER_DATABASE_URL, { max: 8 })
const redis = new Redis(process.env.PEER_REDIS_URL)
const stamp = (t) => t.toISOString().replace(/\.\d{3}Z$/, 'Z')

fastify.register(require('@fastify/jwt'), { secret: process.env.PEER_JWT_SECRET })
fastify.addHook('onRequest', async (request, reply) => {
  try {
    await request.jwtVerify()
  } catch (err) {
    reply.code(401).send({ error: 'unauthorized' })
  }
})

fastify.get('/api/v2/users/:id', async (request, reply) => {
  const [row] = await sql`SELECT id, uuid, name, email, age, created_at, updated_at, version
    FROM users WHERE tenant = 'default' AND id = ${request.params.id}`
  if (!row) return reply.code(404).send({ error: 'not found' })
  return { id: row.uuid, name: row.name, email: row.email, age: row.age,
    createdAt: stamp(row.created_at), updatedAt: stamp(row.updated_at), version: Number(row.version) }
})

fastify.get('/api/v2/customers', async (request) => {
  const page = Number(request.query.page || 0)
  const size = Number(request.query.size || 20)
  const [rows, [{ n }]] = await Promise.all([
    sql`SELECT id, customer_number, name, email, phone, branch_code, created_date FROM customers
      WHERE tenant = 'default' ORDER BY id LIMIT ${size} OFFSET ${page * size}`,
    sql`SELECT n FROM customer_counts WHERE tenant = 'default' AND branch_code = ''`
  ])
  const total = Number(n)
  const pages = Math.ceil(total / size)
  const content = rows.map((r) => ({ id: Number(r.id), customerNumber: r.customer_number, name: r.name,
    email: r.email, phone: r.phone, branchCode: r.branch_code, createdDate: stamp(r.created_date) }))
  return { content, pageable: { pageNumber: page, pageSize: size, sort: [], offset: page * size, paged: true, unpaged: false },
    totalElements: total, totalPages: pages, size, number: page, numberOfElements: content.length,
    first: page === 0, last: page >= pages - 1, sort: [], empty: content.length === 0 }
})

const userBody = {
  type: 'object',
  required: ['name', 'email'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    email: { type: 'string', maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$' },
    age: { type: 'integer', minimum: 18 }
  }
}

fastify.post('/users', { schema: { body: userBody } }, async (request, reply) => {
  const header = request.headers['idempotency-key']
  const key = header ? `peer:idem:${request.user.sub}:${header}` : null
  if (key && !(await redis.set(key, 'inflight', 'PX', 60000, 'NX'))) {
    const stored = await redis.get(key)
    if (stored && stored !== 'inflight') {
      const kept = JSON.parse(stored)
      return reply.code(201).header('location', kept.location).header('idempotent-replayed', 'true').send(kept.body)
    }
    return reply.code(409).send({ error: 'in flight' })
  }
  const { name, email, age = null } = request.body
  const [row] = await sql`INSERT INTO users (uuid, tenant, name, email, email_key, age, created_at, updated_at)
    VALUES (gen_random_uuid(), 'default', ${name}, ${email}, lower(${email}), ${age}, now(), now()) RETURNING id`
  const body = { id: Number(row.id), name }
  const location = `/users/${row.id}`
  if (key) await redis.set(key, JSON.stringify({ body, location }), 'PX', 86400000)
  return reply.code(201).header('location', location).send(body)
})

fastify.listen({ port: Number(process.env.PEER_PORT || 18383), host: '127.0.0.1' })
