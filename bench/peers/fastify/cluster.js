// Fastify as a user runs it on a 2-core machine: node's cluster module, one worker a core,
// sharing the port. Each worker is server.js as it is.
'use strict'

const cluster = require('node:cluster')
const os = require('node:os')

if (cluster.isPrimary) {
  const workers = Number(process.env.PEER_WORKERS || os.availableParallelism())
  for (let i = 0; i < workers; i++) cluster.fork()
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers)) worker.kill('SIGTERM')
    process.exit(0)
  })
} else {
  require('./server.js')
}
