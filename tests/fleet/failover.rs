//! A PostgreSQL failover under keyed writers (the book's operators/fleet.md): a synchronous standby
//! promoted and the old primary stopped, reached once through an endpoint that is repointed (a
//! Patroni HAProxy, CloudNativePG's `-rw` service, a managed writer name) and once through a
//! multi-host URL. Nothing acknowledged is lost, nothing is created twice, and every answer in the
//! switch is 201 or 503.

use std::{
    collections::HashSet,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU16, Ordering},
    },
    time::{Duration, Instant},
};

use reqwest::{Client, Method};
use tokio::net::{TcpListener, TcpStream};

use crate::{
    client::{client_token, request, status, user},
    scenarios::unique,
    services::{Fleet, Pair},
};

/// How the instances reach the primary.
#[derive(Clone, Copy)]
enum Reach {
    /// One address whose target an operator (or Patroni) repoints at the new primary.
    Endpoint,
    /// `standby,primary` with `target_session_attrs=read-write`.
    MultiHost,
}

pub async fn a_promoted_replica_takes_over_through_a_repointed_endpoint(fleet: &mut Fleet) {
    failover(fleet, Reach::Endpoint).await;
}

pub async fn a_promoted_replica_takes_over_through_a_multi_host_url(fleet: &mut Fleet) {
    failover(fleet, Reach::MultiHost).await;
}

/// A TCP endpoint whose target can be changed, as a virtual IP or a writer DNS name is: new
/// connections go to the target of the moment.
struct Endpoint {
    port: u16,
    target: Arc<AtomicU16>,
    accept: tokio::task::JoinHandle<()>,
}

impl Endpoint {
    async fn start(target: u16) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = Arc::new(AtomicU16::new(target));
        let to = target.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let port = to.load(Ordering::SeqCst);
                tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(("127.0.0.1", port)).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        Endpoint { port, target, accept }
    }

    fn repoint(&self, port: u16) {
        self.target.store(port, Ordering::SeqCst);
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// What one keyed create went through: its answers in order, when, and whether it ended 201.
struct Create {
    email: String,
    answers: Vec<(Instant, Result<u16, String>, bool)>,
    created: bool,
}

async fn failover(fleet: &mut Fleet, reach: Reach) {
    let name = match reach {
        Reach::Endpoint => "ha-endpoint",
        Reach::MultiHost => "ha-multi-host",
    };
    let pair = Pair::start(&fleet.dir.join(name)).await;
    let (primary, standby) = (pair.primary.port, pair.standby.port);
    let endpoint = Endpoint::start(primary).await;
    let url = match reach {
        Reach::Endpoint => format!("postgres://postgres@127.0.0.1:{}/tandem", endpoint.port),
        // The standby first: until it is promoted, `read-write` must pass over it.
        Reach::MultiHost => {
            format!(
                "postgres://postgres@127.0.0.1:{standby},127.0.0.1:{primary}/tandem?target_session_attrs=read-write"
            )
        }
    };
    // The first applies the migrations before the second starts.
    let first = fleet.extra_instance(&url, &format!("{name}-1")).await;
    let second = fleet.extra_instance(&url, &format!("{name}-2")).await;
    let bases = [first.url(), second.url()];

    let client = Client::new();
    let prefix = format!("{name}-{}-", unique());
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (client, base, prefix, stop) = (client.clone(), bases[w % 2].clone(), prefix.clone(), stop.clone());
            tokio::spawn(async move { keyed_writer(client, base, format!("{prefix}{w}"), stop).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await;

    // The switch: the old primary goes away (as a crashed host does), the standby is
    // promoted, and the endpoint points at it.
    let switched = Instant::now();
    assert!(pair.primary.stop("immediate"), "the old primary did not stop");
    pair.promote();
    if let Reach::Endpoint = reach {
        endpoint.repoint(standby);
    }
    let promoted = switched.elapsed();
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop.store(true, Ordering::Relaxed);
    let mut creates = Vec::new();
    for writer in writers {
        creates.extend(writer.await.unwrap());
    }

    let answers: Vec<&(Instant, Result<u16, String>, bool)> = creates.iter().flat_map(|c| &c.answers).collect();
    let unexpected: Vec<String> = creates
        .iter()
        .flat_map(|c| c.answers.iter().map(move |a| (&c.email, a)))
        .filter(|(_, (_, answer, _))| !matches!(answer, Ok(201 | 503)))
        .map(|(email, (_, answer, _))| format!("{email}: {answer:?}"))
        .collect();
    let refused = answers.iter().filter(|(_, a, _)| matches!(a, Ok(503))).count();
    let replayed = answers.iter().filter(|(_, _, replay)| *replay).count();
    let refusals = || answers.iter().filter(|(_, a, _)| !matches!(a, Ok(201))).map(|(at, ..)| *at);
    let since_stop =
        |at: Option<Instant>| at.map_or(f64::NAN, |at| at.saturating_duration_since(switched).as_secs_f64());
    let (first_refusal, last_refusal) = (since_stop(refusals().min()), since_stop(refusals().max()));
    // The longest any one key waited for a definitive answer.
    let longest_wait = creates
        .iter()
        .filter(|c| c.answers.len() > 1)
        .map(|c| c.answers.last().unwrap().0.duration_since(c.answers[0].0))
        .max()
        .unwrap_or_default();
    println!(
        "    {}: {} creates, {} answers; promoted {:.2} s after the stop; {refused} × 503, {replayed} replays; \
         503s from {first_refusal:.2} s to {last_refusal:.2} s after the stop; longest wait for one key {:.2} s",
        name,
        creates.iter().filter(|c| c.created).count(),
        answers.len(),
        promoted.as_secs_f64(),
        longest_wait.as_secs_f64(),
    );
    assert!(unexpected.is_empty(), "answers other than 201 or 503 in the switch: {unexpected:#?}");
    let settled = switched + promoted + Duration::from_secs(1);
    let after = answers.iter().filter(|(at, a, _)| *at > settled && matches!(a, Ok(201))).count();
    assert!(after >= 20, "writes did not come back after the failover ({after} created)");

    // What the new primary holds is exactly what was acknowledged, once each.
    let promoted_db = sqlx::PgPool::connect(&format!("postgres://postgres@127.0.0.1:{standby}/tandem")).await.unwrap();
    let stored: Vec<String> = sqlx::query_scalar("SELECT email FROM users WHERE email LIKE $1")
        .bind(format!("{prefix}%"))
        .fetch_all(&promoted_db)
        .await
        .unwrap();
    promoted_db.close().await;
    let stored_set: HashSet<&str> = stored.iter().map(String::as_str).collect();
    assert_eq!(stored.len(), stored_set.len(), "a user created twice");
    let acknowledged: HashSet<&str> = creates.iter().filter(|c| c.created).map(|c| c.email.as_str()).collect();
    let lost: Vec<&&str> = acknowledged.difference(&stored_set).collect();
    assert!(lost.is_empty(), "acknowledged creates lost in the failover: {lost:?}");
    assert_eq!(stored_set, acknowledged, "stored users that were never acknowledged");
    drop((first, second));
}

/// Keyed creates, each retried with its key on 503 until it is answered 201, until `stop`.
async fn keyed_writer(client: Client, base: String, subject: String, stop: Arc<AtomicBool>) -> Vec<Create> {
    let token = client_token(&subject);
    let mut creates = Vec::new();
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let (key, email) = (unique(), format!("{subject}-{n}@fleet.example"));
        let mut create = Create { email, answers: Vec::new(), created: false };
        let started = Instant::now();
        loop {
            let post = request(&client, Method::POST, format!("{base}/api/v2/users"), &token)
                .header("Idempotency-Key", &key)
                .json(&user(&create.email));
            let answer = status(post).await;
            let replay = answer
                .as_ref()
                .is_ok_and(|(_, headers, _)| headers.get("idempotent-replayed").is_some_and(|v| v == "true"));
            let code = answer.map(|(code, ..)| code);
            create.answers.push((Instant::now(), code.clone(), replay));
            match code {
                Ok(201) => {
                    create.created = true;
                    break;
                }
                Ok(503) if started.elapsed() < Duration::from_secs(30) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                _ => break,
            }
        }
        creates.push(create);
    }
    creates
}
