//! Ports for the servers a test starts (the binary, the fleet's nginx, PostgreSQL and Redis).

use std::{collections::BTreeSet, net::TcpListener, sync::Mutex};

/// A port free a moment ago, and never handed out before by this process: servers started at
/// once cannot draw the same port, where the one that loses the bind would be reported live by
/// the other's health check (and its test would talk to the wrong server).
pub fn free_port() -> u16 {
    static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if HANDED_OUT.lock().unwrap().insert(port) {
            return port;
        }
    }
}
