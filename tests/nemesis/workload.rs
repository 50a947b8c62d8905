//! The workload: clients of v1 and v2 through nginx, each a loop of keyed and unkeyed creates,
//! reads, `If-Match` updates and lists, every attempt recorded in the history. A keyed create
//! whose outcome is unclear is tried again with its key until it is known.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use reqwest::{Client, Method, RequestBuilder};
use serde_json::{Value, json};

use crate::{
    cluster::TENANT,
    history::{Answer, History, Kind, Op, Outcome},
    rng::Rng,
    tokens::{self, now},
};

/// How long a client waits for an answer: past the instances' request timeout and nginx's.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(40);

/// What every worker shares: where to send, when to stop, and the history.
#[derive(Clone)]
pub struct Shared {
    pub base: String,
    pub client: Client,
    pub history: History,
    pub started: Instant,
    /// No new operation begins once set.
    pub stop: Arc<AtomicBool>,
    /// Keyed creates stop retrying once set (the run is over for good).
    pub give_up: Arc<AtomicBool>,
    pub prefix: String,
}

/// A user this worker created and was told so: its e-mail and its id in each version.
struct Known {
    email: String,
    version: u16,
    id: String,
}

pub fn client() -> Client {
    Client::builder().timeout(CLIENT_TIMEOUT).pool_max_idle_per_host(4).build().unwrap()
}

/// What an answer means for an operation of `kind`.
pub fn classify(kind: Kind, answer: &Answer) -> Outcome {
    match answer {
        Answer::Transport(_) => Outcome::Info,
        Answer::Status { code, .. } => match (kind, code) {
            (_, 200..=299) => Outcome::Ok,
            // The same key still in flight elsewhere: try again.
            (Kind::KeyedCreate, 409) => Outcome::Info,
            // A write answered 5xx (nginx's 502 or 504, the service's 503) may have happened.
            (Kind::KeyedCreate | Kind::UnkeyedCreate | Kind::Update, 500..=599) => Outcome::Info,
            // A read or a list that was refused did nothing: a definite answer.
            _ => Outcome::Fail,
        },
    }
}

async fn answer_of(request: RequestBuilder) -> (Answer, Option<Value>, Option<String>) {
    match request.send().await {
        Err(err) => (Answer::Transport(short(err)), None, None),
        Ok(response) => {
            let code = response.status().as_u16();
            let headers = response.headers();
            let retry_after = headers.contains_key("retry-after");
            let from_instance = headers.contains_key("api-supported-versions");
            let etag = headers.get("etag").and_then(|v| v.to_str().ok()).map(str::to_string);
            match response.text().await {
                Ok(text) => {
                    (Answer::Status { code, retry_after, from_instance }, serde_json::from_str(&text).ok(), etag)
                }
                Err(err) => (Answer::Transport(short(err)), None, None),
            }
        }
    }
}

fn short(err: reqwest::Error) -> String {
    let kind = if err.is_timeout() {
        "timeout"
    } else if err.is_connect() {
        "connect"
    } else {
        "reset"
    };
    format!("{kind}: {}", err.without_url())
}

/// One worker until `stop`: its own choices from `seed`, as `subject`.
pub async fn worker(shared: Shared, index: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let subject = format!("client-{index}");
    let token = tokens::signed(&json!({"sub": subject, "exp": now() + 7200, "tenant": TENANT, "roles": []}));
    let mut known: Vec<Known> = Vec::new();
    let mut n = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        n += 1;
        let version = if rng.next().is_multiple_of(2) { 1 } else { 2 };
        let kind = [Kind::KeyedCreate, Kind::UnkeyedCreate, Kind::Read, Kind::Update, Kind::List]
            [rng.weighted(&[25, 15, 25, 10, 25])];
        let ctx = Ctx { shared: &shared, token: &token, worker: index };
        match kind {
            Kind::KeyedCreate | Kind::UnkeyedCreate => {
                let email = format!("{}{index}-{n}@nemesis.example", shared.prefix);
                let key = (kind == Kind::KeyedCreate).then(|| format!("{}{index}-{n}", shared.prefix));
                if let Some(made) = ctx.create(kind, version, &email, key.as_deref()).await {
                    known.push(made);
                }
            }
            Kind::Read | Kind::Update | Kind::List if known.is_empty() => ctx.list(version).await,
            Kind::Read => {
                let user = &known[(rng.next() % known.len() as u64) as usize];
                ctx.read(user).await;
            }
            Kind::Update => {
                let v2 = known.iter().filter(|k| k.version == 2).collect::<Vec<_>>();
                match v2.is_empty() {
                    true => ctx.list(2).await,
                    false => ctx.update(v2[(rng.next() % v2.len() as u64) as usize], n).await,
                }
            }
            Kind::List => ctx.list(version).await,
        }
        tokio::time::sleep(Duration::from_millis(rng.between(10, 40))).await;
    }
}

/// An operation as it is sent, before its answer: what the history records of it.
struct Attempt {
    kind: Kind,
    version: u16,
    /// A create's e-mail and key.
    email: Option<String>,
    key: Option<String>,
    /// The user a read or update is about, by its e-mail.
    about: Option<String>,
}

impl Attempt {
    fn of(kind: Kind, version: u16) -> Attempt {
        Attempt { kind, version, email: None, key: None, about: None }
    }
}

struct Ctx<'a> {
    shared: &'a Shared,
    token: &'a str,
    worker: usize,
}

impl Ctx<'_> {
    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.shared.client.request(method, format!("{}{path}", self.shared.base)).bearer_auth(self.token)
    }

    fn elapsed(&self) -> f64 {
        self.shared.started.elapsed().as_secs_f64()
    }

    fn record(&self, attempt: Attempt, invoked: f64, answer: Answer) -> Outcome {
        let Attempt { kind, version, email, key, about } = attempt;
        let outcome = classify(kind, &answer);
        let completed = self.elapsed();
        let op = Op { worker: self.worker, kind, version, invoked, completed, answer, outcome, email, key, about };
        self.shared.history.record(op);
        outcome
    }

    /// A create; a keyed one is tried again with its key until its outcome is known.
    async fn create(&self, kind: Kind, version: u16, email: &str, key: Option<&str>) -> Option<Known> {
        let (path, body) = match version {
            1 => ("/users", json!({"name": "Nemesis User", "email": email})),
            _ => ("/api/v2/users", json!({"name": "Nemesis User", "email": email, "age": 40})),
        };
        loop {
            let mut request = self.request(Method::POST, path).json(&body);
            if let Some(key) = key {
                request = request.header("Idempotency-Key", key);
            }
            let invoked = self.elapsed();
            let (answer, reply, _) = answer_of(request).await;
            let attempt =
                Attempt { email: Some(email.into()), key: key.map(str::to_string), ..Attempt::of(kind, version) };
            let outcome = self.record(attempt, invoked, answer);
            match outcome {
                Outcome::Ok => {
                    let id = reply.as_ref().and_then(|r| r.get("id")).map(|id| match id {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })?;
                    return Some(Known { email: email.into(), version, id });
                }
                Outcome::Fail => return None,
                Outcome::Info if key.is_none() || self.shared.give_up.load(Ordering::Relaxed) => return None,
                Outcome::Info => tokio::time::sleep(Duration::from_millis(300)).await,
            }
        }
    }

    async fn read(&self, user: &Known) {
        let path = match user.version {
            1 => format!("/users/{}", user.id),
            _ => format!("/api/v2/users/{}", user.id),
        };
        let invoked = self.elapsed();
        let (answer, _, _) = answer_of(self.request(Method::GET, &path)).await;
        self.record(
            Attempt { about: Some(user.email.clone()), ..Attempt::of(Kind::Read, user.version) },
            invoked,
            answer,
        );
    }

    async fn update(&self, user: &Known, n: u64) {
        let path = format!("/api/v2/users/{}", user.id);
        let (_, _, etag) = answer_of(self.request(Method::GET, &path)).await;
        let Some(etag) = etag else { return };
        let invoked = self.elapsed();
        let patch = self
            .request(Method::PATCH, &path)
            .header("If-Match", etag)
            .header("Content-Type", "application/merge-patch+json")
            .body(json!({"name": format!("Nemesis User {n}")}).to_string());
        let (answer, _, _) = answer_of(patch).await;
        self.record(Attempt { about: Some(user.email.clone()), ..Attempt::of(Kind::Update, 2) }, invoked, answer);
    }

    async fn list(&self, version: u16) {
        let path = match version {
            1 => "/users?page=0&size=5",
            _ => "/api/v2/users?size=5",
        };
        let invoked = self.elapsed();
        let (answer, _, _) = answer_of(self.request(Method::GET, path)).await;
        self.record(Attempt::of(Kind::List, version), invoked, answer);
    }
}
