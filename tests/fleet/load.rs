//! The fleet under traffic: a rolling restart, and a Sentinel failover, while clients send.

use std::{
    collections::HashSet,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use reqwest::{Client, Method};

use crate::{
    client::{TENANT, client_token, request, status, user},
    scenarios::unique,
    services::Fleet,
};

/// What one request of the mix got.
struct Outcome {
    what: &'static str,
    answer: Result<(u16, bool), String>,
    /// The e-mail a POST created.
    email: Option<String>,
}

async fn users_like(fleet: &Fleet, prefix: &str) -> Vec<String> {
    sqlx::query_scalar("SELECT email FROM users WHERE tenant = $1 AND email LIKE $2")
        .bind(TENANT)
        .bind(format!("{prefix}%"))
        .fetch_all(&fleet.db)
        .await
        .unwrap()
}

/// One client's steady mix through nginx until `stop`: a list, a keyed POST, an unkeyed POST,
/// a read by id.
async fn mix(client: Client, base: String, subject: String, prefix: String, stop: Arc<AtomicBool>) -> Vec<Outcome> {
    let token = client_token(&subject);
    let mut outcomes = Vec::new();
    let mut last_id = None::<i64>;
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let email = format!("{prefix}{subject}-{n}@fleet.example");
        let (what, builder, creates) = match n % 4 {
            0 => ("list", request(&client, Method::GET, format!("{base}/api/v2/users?size=5"), &token), false),
            1 => {
                let post = request(&client, Method::POST, format!("{base}/api/v2/users"), &token);
                ("keyed POST", post.header("Idempotency-Key", unique()).json(&user(&email)), true)
            }
            2 => {
                let post = request(&client, Method::POST, format!("{base}/api/v2/users"), &token);
                ("unkeyed POST", post.json(&user(&email)), true)
            }
            _ => {
                let id = last_id.unwrap_or(1);
                ("read by id", request(&client, Method::GET, format!("{base}/api/v2/users/{id}"), &token), false)
            }
        };
        let answer = status(builder).await.map(|(code, headers, body)| {
            if code == 201 {
                last_id = serde_json::from_str::<serde_json::Value>(&body).ok().and_then(|b| b["id"].as_i64());
            }
            (code, headers.get("idempotent-replayed").is_some_and(|v| v == "true"))
        });
        outcomes.push(Outcome { what, answer, email: creates.then_some(email) });
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    outcomes
}

/// About 20 s of steady traffic through nginx while each instance in turn gets SIGTERM and is
/// started again: no request fails, every 201 is stored exactly once, no key runs twice.
pub async fn a_rolling_restart_under_load_loses_nothing(fleet: &mut Fleet) {
    let client = Client::new();
    let prefix = format!("roll-{}-", unique());
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let subject = format!("roller{w}");
            tokio::spawn(mix(client.clone(), fleet.nginx.clone(), subject, prefix.clone(), stop.clone()))
        })
        .collect();
    let started = Instant::now();
    for i in 0..fleet.instances.len() {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let exit = fleet.instances[i].terminate().await;
        assert!(exit.success(), "instance {} exited with {exit} after SIGTERM", i + 1);
        fleet.instances[i].start(&fleet.tandem);
        fleet.instances[i].wait_ready().await;
        println!("    instance {} restarted at {:.1} s", i + 1, started.elapsed().as_secs_f64());
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    let mut outcomes = Vec::new();
    for worker in workers {
        outcomes.extend(worker.await.unwrap());
    }

    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| !matches!(o.answer, Ok((200 | 201, _)))).collect();
    let created: HashSet<&str> =
        outcomes.iter().filter(|o| matches!(o.answer, Ok((201, _)))).filter_map(|o| o.email.as_deref()).collect();
    let replayed = outcomes.iter().filter(|o| matches!(o.answer, Ok((_, true)))).count();
    println!(
        "    {} requests in {:.1} s, {} created, {} failed",
        outcomes.len(),
        started.elapsed().as_secs_f64(),
        created.len(),
        failed.len()
    );
    let failures: Vec<String> = failed.iter().map(|o| format!("{}: {:?}", o.what, o.answer)).collect();
    assert!(failures.is_empty(), "requests failed during the rolling restart: {failures:#?}");
    assert_eq!(replayed, 0, "a first try was answered as a replay: a key ran twice");
    let stored = users_like(fleet, &prefix).await;
    let stored_set: HashSet<&str> = stored.iter().map(String::as_str).collect();
    assert_eq!(stored.len(), stored_set.len(), "a user stored twice");
    assert_eq!(stored_set, created, "the users stored are not exactly the ones answered 201");
}

/// Keyed POSTs through nginx while the Redis primary dies: 503 (or 409 for a key whose claim
/// the new primary inherited in flight) while Sentinel fails over, then 201 again with no
/// restart, and every key created its user exactly once.
pub async fn a_sentinel_failover_during_keyed_posts(fleet: &mut Fleet) {
    let client = Client::new();
    let prefix = format!("failover-{}-", unique());
    let pids: Vec<_> = fleet.instances.iter().map(|i| i.pid()).collect();
    let old_primary = fleet.redis_primary_port().await.expect("the Sentinels name a primary");
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let (client, base, prefix, stop) = (client.clone(), fleet.nginx.clone(), prefix.clone(), stop.clone());
            tokio::spawn(async move {
                let token = client_token(&format!("failover{w}"));
                let mut seen = Vec::new();
                for n in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let (key, email) = (unique(), format!("{prefix}{w}-{n}@fleet.example"));
                    let first = Instant::now();
                    loop {
                        let post = request(&client, Method::POST, format!("{base}/api/v2/users"), &token)
                            .header("Idempotency-Key", &key)
                            .json(&user(&email));
                        let answer = status(post).await.map(|(code, ..)| code);
                        seen.push((Instant::now(), answer.clone()));
                        match answer {
                            Ok(201) => break,
                            Ok(503 | 409) => {
                                assert!(first.elapsed() < Duration::from_secs(30), "key {key} never succeeded");
                                tokio::time::sleep(Duration::from_millis(200)).await;
                            }
                            other => panic!("keyed POST answered {other:?}"),
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                seen
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await;
    fleet.kill_redis_primary();
    let killed = Instant::now();
    while fleet.redis_primary_port().await.is_none_or(|p| p == old_primary) {
        assert!(killed.elapsed() < Duration::from_secs(20), "Sentinel never promoted the replica");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let promoted = killed.elapsed();
    tokio::time::sleep(Duration::from_secs(8)).await;
    stop.store(true, Ordering::Relaxed);
    let mut seen = Vec::new();
    for worker in workers {
        seen.extend(worker.await.unwrap());
    }
    let unavailable = seen.iter().filter(|(_, a)| matches!(a, Ok(503))).count();
    let in_flight = seen.iter().filter(|(_, a)| matches!(a, Ok(409))).count();
    let recovered = seen.iter().filter(|(at, a)| *at > killed && matches!(a, Ok(201))).map(|(at, _)| *at).min();
    let recovered = recovered.expect("no keyed POST succeeded after the failover");
    let last_refusal = seen.iter().filter(|(_, a)| !matches!(a, Ok(201))).map(|(at, _)| *at).max();
    println!(
        "    promoted after {:.1} s; first 201 after the kill at {:.1} s; {unavailable} × 503, {in_flight} × 409; last refusal at {:.1} s",
        promoted.as_secs_f64(),
        recovered.duration_since(killed).as_secs_f64(),
        last_refusal.map_or(0.0, |at| at.saturating_duration_since(killed).as_secs_f64()),
    );
    let succeeded_after = seen.iter().filter(|(at, a)| *at > killed + promoted && matches!(a, Ok(201))).count();
    assert!(succeeded_after >= 5, "keyed POSTs did not work again after the failover ({succeeded_after})");
    let stored = users_like(fleet, &prefix).await;
    let distinct: HashSet<&String> = stored.iter().collect();
    assert_eq!(stored.len(), distinct.len(), "a key created its user twice");
    let succeeded = seen.iter().filter(|(_, a)| matches!(a, Ok(201))).count();
    assert_eq!(stored.len(), succeeded, "every key that answered 201 stored exactly one user");
    let now_pids: Vec<_> = fleet.instances.iter().map(|i| i.pid()).collect();
    assert_eq!(pids, now_pids, "an instance was restarted");
}
