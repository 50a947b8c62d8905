//! Database connections under load: more concurrent requests than connections, each list
//! needing two statements (the page and its count), all answer. On PostgreSQL this checks the
//! held connections' bookkeeping: with more holders than the pool has connections, a request
//! would wait out the store's timeout for a connection that never comes back, and answer 503.

use crate::harness::Backend;

crate::scenarios![more_concurrent_lists_than_connections_all_answer];

async fn more_concurrent_lists_than_connections_all_answer(backend: Backend) {
    // Straight after start: the pool opens its connections while the requests arrive, so
    // they interleave the way they do on a busy instance.
    let app = backend.spawn_with(|s| s.db_pool_size = 2).await;
    let lists = (0..32).map(|_| app.get("/api/v2/users?size=1"));
    let replies = futures_util::future::join_all(lists).await;
    for reply in &replies {
        reply.assert_status(200);
        assert_eq!(reply.json()["totalElements"], 0);
    }
}
