//! Readiness of one deprecated element (`GET /admin/deprecations/<id>/readiness`, `tandem
//! sunset-check --deprecation`): the clients that used it within the window block its
//! removal, the busiest first; its uses per day and the day they reach zero. From the uses
//! every instance wrote, with this instance's not yet written (none for a command).

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Duration, NaiveDate, Utc};
use poem_openapi::Object;

use super::{ClientTotals, MAX_WINDOW, Unanswerable, projected_last_day};
use crate::{
    core::{
        CoreError,
        storage::{Client, Store, Window, Windowed},
    },
    registry::{Registry, lifecycle::whole_days_left},
    wire::documented::{Documented, Nullable},
    workbench::{
        answers::{Day, DayRequests, Stamp, stamp},
        counting::Counting,
    },
};

pub struct Question<'q> {
    pub deprecation: &'q str,
    pub window: u32,
    /// Blocking clients listed, at most (all are counted).
    pub limit: usize,
    pub now: DateTime<Utc>,
}

/// Whether the element can be removed, and who would break.
#[derive(Debug, Object)]
#[oai(rename = "ElementReadiness", rename_all = "camelCase")]
pub struct Answer {
    pub deprecation: String,
    pub sunset_at: Nullable<Stamp>,
    pub days_left: Nullable<i64>,
    /// Days looked back over, today included.
    pub window: u32,
    pub ready: bool,
    /// The busiest first, at most `limit`.
    pub blocking: Vec<BlockingClient>,
    pub clients: ClientTotals,
    pub requests_per_day: Vec<DayRequests>,
    /// The day the uses reach zero at their pace; null when they do not fall.
    pub projected_last_day: Nullable<Day>,
}

#[derive(Debug, Object)]
#[oai(rename = "ElementBlockingClient", rename_all = "camelCase")]
pub struct BlockingClient {
    pub tenant: String,
    pub subject: String,
    pub requests: u64,
    pub last_used: Stamp,
    /// Whether it acknowledged the sunset in force.
    pub acknowledged: bool,
}

/// The element's readiness over the last `window` UTC days, today included.
pub async fn answer(
    store: &dyn Store,
    counting: Option<&Counting>,
    registry: &Registry,
    question: Question<'_>,
) -> Result<Result<Answer, Unanswerable>, CoreError> {
    let Question { deprecation: id, window, limit, now } = question;
    if !(1..=MAX_WINDOW).contains(&window) {
        return Ok(Err(Unanswerable::Window));
    }
    let Some(deprecation) = registry.deprecation(id) else { return Ok(Err(Unanswerable::UnknownDeprecation)) };
    let today = now.date_naive();
    let days = Window { first: today - Duration::days(i64::from(window) - 1), today };
    // Acknowledgements count for the sunset in force: one given for an earlier date is void.
    let accepted: HashSet<Client> = match deprecation.sunset_at {
        Some(sunset_at) => store.element_acknowledgements(id, sunset_at).await?.into_iter().collect(),
        None => HashSet::new(),
    };
    let held = counting.map(|c| c.held(|b| b.clients_using_elements().map(|(k, c)| (k, c.clone())).collect()));
    let mut snapshot = store.snapshot().await?;
    let unwritten = match held {
        Some(held) => held.unwritten(&mut *snapshot).await?,
        None => HashMap::new(),
    };
    // This instance's uses within the window, per client and per day.
    let mut held_uses: BTreeMap<Client, (u64, DateTime<Utc>)> = BTreeMap::new();
    let mut per_day: BTreeMap<NaiveDate, u64> = BTreeMap::new();
    for (client, counts) in &unwritten {
        if let Some((requests, _, last)) = counts.uses_of(id, days.first) {
            held_uses.insert(client.clone(), (requests, last));
            for (day, n) in counts.uses_by_day(id, days.first) {
                *per_day.entry(day).or_default() += n;
            }
        }
    }
    let busiest = snapshot.element_busiest(id, days, limit).await?;
    let mut clients = snapshot.element_window_clients(id, days).await?;
    for (day, n) in snapshot.element_day_totals(id, days).await? {
        *per_day.entry(day).or_default() += n;
    }
    let held_clients: Vec<Client> = held_uses.keys().cloned().collect();
    let stored_of_held: HashMap<Client, Windowed> = match held_clients.is_empty() {
        true => HashMap::new(),
        false => snapshot
            .element_windowed(id, days, &held_clients)
            .await?
            .into_iter()
            .map(|w| (w.client.clone(), w))
            .collect(),
    };
    let accepted_list: Vec<Client> = accepted.iter().cloned().collect();
    let accepted_stored: HashSet<Client> = match accepted_list.is_empty() {
        true => HashSet::new(),
        false => snapshot.element_windowed(id, days, &accepted_list).await?.into_iter().map(|w| w.client).collect(),
    };
    snapshot.finish().await?;
    clients += held_clients.iter().filter(|c| !stored_of_held.contains_key(*c)).count() as u64;
    // Each client once: the held ones with what the store has of them added.
    let mut ranked: HashMap<Client, (u64, DateTime<Utc>)> =
        busiest.into_iter().map(|w| (w.client, (w.requests, w.last_at))).collect();
    for (client, (requests, last)) in &held_uses {
        let stored = stored_of_held.get(client).map_or((0, *last), |w| (w.requests, w.last_at));
        ranked.insert(client.clone(), (stored.0 + requests, stored.1.max(*last)));
    }
    let mut ranked: Vec<(Client, (u64, DateTime<Utc>))> = ranked.into_iter().collect();
    ranked.sort_by(|(a, (ra, _)), (b, (rb, _))| rb.cmp(ra).then_with(|| a.cmp(b)));
    ranked.truncate(limit);
    let acknowledged_clients =
        accepted.iter().filter(|c| accepted_stored.contains(*c) || held_uses.contains_key(*c)).count() as u64;
    let per_day: Vec<(NaiveDate, u64)> = (0..window)
        .map(|i| days.first + Duration::days(i64::from(i)))
        .map(|day| (day, per_day.get(&day).copied().unwrap_or(0)))
        .collect();
    Ok(Ok(Answer {
        deprecation: id.to_string(),
        sunset_at: Nullable(deprecation.sunset_at.map(stamp)),
        days_left: Nullable(deprecation.sunset_at.map(|s| whole_days_left(s, now))),
        window,
        ready: clients == 0,
        blocking: ranked
            .into_iter()
            .map(|(client, (requests, last))| BlockingClient {
                acknowledged: accepted.contains(&client),
                tenant: client.tenant.to_string(),
                subject: client.subject.to_string(),
                requests,
                last_used: stamp(last),
            })
            .collect(),
        clients: ClientTotals { seen: clients, blocking: clients, acknowledged: acknowledged_clients },
        projected_last_day: Nullable(projected_last_day(&per_day).map(|d| Documented::new(d.to_string()))),
        requests_per_day: per_day
            .into_iter()
            .map(|(day, n)| DayRequests { day: Documented::new(day.to_string()), requests: n })
            .collect(),
    }))
}
