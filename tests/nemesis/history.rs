//! The history of a run, in Jepsen's terms: every operation as invoked and completed, with what
//! came of it (`ok`: it took effect; `fail`: it did not; `info`: nobody can tell), and every
//! fault with when it started and ended.

use std::sync::{Arc, Mutex};

/// What a client did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A create with an Idempotency-Key, retried with the key until its outcome is known.
    KeyedCreate,
    UnkeyedCreate,
    Read,
    /// A v2 update with `If-Match`.
    Update,
    List,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::KeyedCreate => "keyed create",
            Kind::UnkeyedCreate => "unkeyed create",
            Kind::Read => "read",
            Kind::Update => "If-Match update",
            Kind::List => "list",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Ok,
    Fail,
    Info,
}

/// What came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Status {
        code: u16,
        retry_after: bool,
        /// Answered by an instance (its headers), not made by nginx.
        from_instance: bool,
    },
    /// No answer: a reset, a refused connection, the client's timeout.
    Transport(String),
}

/// One attempt of one operation.
#[derive(Debug, Clone)]
pub struct Op {
    pub worker: usize,
    pub kind: Kind,
    pub version: u16,
    /// Seconds since the run began.
    pub invoked: f64,
    pub completed: f64,
    pub answer: Answer,
    pub outcome: Outcome,
    /// The e-mail a create writes (unique to the operation, the same on its retries).
    pub email: Option<String>,
    pub key: Option<String>,
    /// The user a read or update is about, as an e-mail of an acknowledged create.
    pub about: Option<String>,
}

/// One fault as the nemesis ran it.
#[derive(Debug, Clone)]
pub struct FaultEvent {
    pub kind: &'static str,
    pub detail: String,
    pub started: f64,
    pub ended: f64,
}

#[derive(Clone, Default)]
pub struct History {
    pub ops: Arc<Mutex<Vec<Op>>>,
    pub faults: Arc<Mutex<Vec<FaultEvent>>>,
}

impl History {
    pub fn record(&self, op: Op) {
        self.ops.lock().unwrap().push(op);
    }

    pub fn fault(&self, event: FaultEvent) {
        self.faults.lock().unwrap().push(event);
    }

    pub fn ops(&self) -> Vec<Op> {
        self.ops.lock().unwrap().clone()
    }

    pub fn faults(&self) -> Vec<FaultEvent> {
        self.faults.lock().unwrap().clone()
    }
}
