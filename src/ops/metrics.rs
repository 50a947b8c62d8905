//! Prometheus metrics, kept in memory with atomic counters. Labels are bounded: `route` is the
//! route template (or `unmatched`), `method` one of the known methods, and deprecated-version
//! clients are capped.

use std::{
    collections::HashMap,
    fmt::Write,
    hash::RandomState,
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use crate::telemetry::metric::{self, Metric};

/// Upper bounds of the latency histogram, in seconds.
const BUCKETS: [f64; 12] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];

/// Distinct clients `tandem_deprecated_requests_total` tracks before folding the rest into `other`.
const MAX_CLIENTS: usize = 1000;

#[derive(Clone, PartialEq, Eq, Hash)]
struct RequestKey {
    version: u16,
    route: Arc<str>,
    method: &'static str,
    status: u16,
    /// A dry run (`X-API-Dry-Run: true`), labelled apart.
    dry_run: bool,
}

#[derive(Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

/// One finished request, as `tandem_http_requests_total` labels it.
pub struct Observed<'a> {
    /// 0 when none resolved.
    pub version: u16,
    pub route: &'a Arc<str>,
    pub method: &'static str,
    pub status: u16,
    pub dry_run: bool,
}

/// Counters (or histograms) by label set, shared by the request path and the scraper.
type Family<K, V, S = RandomState> = RwLock<HashMap<K, Arc<V>, S>>;

/// The hasher of the families every request looks up: their keys are route templates, methods
/// and statuses, none of them a client's choice, so they need no defence against chosen
/// collisions, and SipHash cost about 1,000 instructions a request (bench/RESULTS.md).
type Fast = foldhash::fast::RandomState;

/// One label set's requests, and the latency histogram of its version and route (shared by
/// every label set of that route): a request looks up one entry, not two.
struct Series {
    count: AtomicU64,
    durations: Arc<Histogram>,
}

impl Series {
    fn count(&self, elapsed: Duration) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let histogram = &self.durations;
        let seconds = elapsed.as_secs_f64();
        if let Some(bucket) = BUCKETS.iter().position(|b| seconds <= *b) {
            histogram.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        }
        histogram.count.fetch_add(1, Ordering::Relaxed);
        histogram.sum_micros.fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
    }
}

#[derive(Default)]
pub struct Metrics {
    requests: Family<RequestKey, Series, Fast>,
    durations: Family<(u16, Arc<str>), Histogram, Fast>,
    /// Keyed by the client (tenant and subject, which clients choose: SipHash stays), or
    /// `None` for the clients past the cap. Each entry's label is made once, when it is added.
    deprecated: Family<(u16, Option<Client>), Labelled>,
    /// Requests that used a deprecated element, by version and element id (declared: few).
    deprecated_uses: Family<(u16, Arc<str>), AtomicU64>,
    /// Requests of clients new to a version closed to them, by version.
    new_clients_refused: Family<u16, AtomicU64>,
    /// Attempts to send notices, by type and outcome.
    notices: Family<(&'static str, &'static str), AtomicU64>,
}

type Client = (Arc<str>, Arc<str>);

/// A client's count under its `client` label.
struct Labelled {
    label: String,
    count: AtomicU64,
}

/// The `client` label: the tenant and a short hash of the subject. `/metrics` is public and
/// subjects are often e-mail addresses; `/admin/usage` (admin only) names them in the clear.
fn client_label(client: &Option<Client>) -> String {
    use sha2::Digest;
    let Some((tenant, subject)) = client else { return "other".to_string() };
    let digest = sha2::Sha256::digest(subject.as_bytes());
    format!("{tenant}/{}", crate::encoding::hex(&digest[..6]))
}

/// Finds or adds the entry for `key`: a read lock on the hot path, a write lock once per key.
fn entry<K: Eq + std::hash::Hash + Clone, V: Default, S: std::hash::BuildHasher>(
    map: &Family<K, V, S>,
    key: &K,
) -> Arc<V> {
    if let Some(found) = map.read().expect("metrics lock").get(key) {
        return found.clone();
    }
    map.write().expect("metrics lock").entry(key.clone()).or_default().clone()
}

pub fn method_label(method: &poem::http::Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "OPTIONS" => "OPTIONS",
        "HEAD" => "HEAD",
        _ => "OTHER",
    }
}

impl Metrics {
    /// One finished request. `version` 0 means none resolved.
    pub fn observe(&self, request: Observed<'_>, elapsed: Duration) {
        let Observed { version, route, method, status, dry_run } = request;
        let key = RequestKey { version, route: route.clone(), method, status, dry_run };
        if let Some(series) = self.requests.read().expect("metrics lock").get(&key) {
            series.count(elapsed);
            return;
        }
        let durations = entry(&self.durations, &(version, route.clone()));
        let new = Arc::new(Series { count: AtomicU64::new(0), durations });
        self.requests.write().expect("metrics lock").entry(key).or_insert(new).count(elapsed);
    }

    /// One request served by a deprecated version, by client (tenant and subject).
    pub fn deprecated(&self, version: u16, tenant: &Arc<str>, subject: &Arc<str>) {
        let key = (version, Some((tenant.clone(), subject.clone())));
        if let Some(found) = self.deprecated.read().expect("metrics lock").get(&key) {
            found.count.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut clients = self.deprecated.write().expect("metrics lock");
        let key = if clients.contains_key(&key) || clients.len() < MAX_CLIENTS { key } else { (version, None) };
        let label = || Labelled { label: client_label(&key.1), count: AtomicU64::new(0) };
        let found = clients.entry(key.clone()).or_insert_with(|| Arc::new(label()));
        found.count.fetch_add(1, Ordering::Relaxed);
    }

    /// One request that used the deprecated element `id` of `version`.
    pub fn deprecated_use(&self, version: u16, id: &Arc<str>) {
        entry(&self.deprecated_uses, &(version, id.clone())).fetch_add(1, Ordering::Relaxed);
    }

    /// A new client refused by a version closed to new clients.
    pub fn new_client_refused(&self, version: u16) {
        entry(&self.new_clients_refused, &version).fetch_add(1, Ordering::Relaxed);
    }

    /// An attempt to send a notice of type `kind` (one of the notices' kinds, so the labels
    /// stay few), and what it came to (`delivered`, `retried`, `failed` or `disabled`).
    pub fn notice(&self, kind: &'static str, outcome: &'static str) {
        entry(&self.notices, &(kind, outcome)).fetch_add(1, Ordering::Relaxed);
    }

    /// The Prometheus text exposition, with `gauges` (a family and its value) appended.
    pub fn render(&self, gauges: &[(&Metric, f64)]) -> String {
        let mut out = String::new();
        metric::HTTP_REQUESTS.header(&mut out);
        let mut requests: Vec<_> = self
            .requests
            .read()
            .expect("metrics lock")
            .iter()
            .map(|(k, v)| (k.clone(), v.count.load(Ordering::Relaxed)))
            .collect();
        requests.sort_by(|a, b| {
            let key = |k: &RequestKey| (k.version, k.route.clone(), k.method, k.status, k.dry_run);
            key(&a.0).cmp(&key(&b.0))
        });
        for (k, n) in requests {
            // Only dry runs carry the label: the series of real requests stay as they were.
            let dry_run = if k.dry_run { ",dry_run=\"true\"" } else { "" };
            let _ = writeln!(
                out,
                "tandem_http_requests_total{{version=\"{}\",route=\"{}\",method=\"{}\",status=\"{}\"{dry_run}}} {n}",
                k.version,
                escape(&k.route),
                k.method,
                k.status
            );
        }
        metric::HTTP_REQUEST_DURATION.header(&mut out);
        let mut durations: Vec<_> =
            self.durations.read().expect("metrics lock").iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        durations.sort_by(|a, b| a.0.cmp(&b.0));
        for ((version, route), h) in durations {
            let labels = format!("version=\"{version}\",route=\"{}\"", escape(&route));
            let mut cumulative = 0;
            for (bound, bucket) in BUCKETS.iter().zip(&h.buckets) {
                cumulative += bucket.load(Ordering::Relaxed);
                let _ = writeln!(
                    out,
                    "tandem_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            let count = h.count.load(Ordering::Relaxed);
            let _ = writeln!(out, "tandem_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {count}");
            let sum = h.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
            let _ = writeln!(out, "tandem_http_request_duration_seconds_sum{{{labels}}} {sum}");
            let _ = writeln!(out, "tandem_http_request_duration_seconds_count{{{labels}}} {count}");
        }
        metric::DEPRECATED_REQUESTS.header(&mut out);
        // Two subjects whose hashes share 12 digits share a series.
        let mut deprecated: std::collections::BTreeMap<(u16, String), u64> = Default::default();
        for ((version, _), client) in self.deprecated.read().expect("metrics lock").iter() {
            *deprecated.entry((*version, client.label.clone())).or_default() += client.count.load(Ordering::Relaxed);
        }
        for ((version, client), n) in deprecated {
            let _ = writeln!(
                out,
                "tandem_deprecated_requests_total{{version=\"{version}\",client=\"{}\"}} {n}",
                escape(&client)
            );
        }
        metric::DEPRECATED_USE.header(&mut out);
        let mut uses: Vec<_> = self
            .deprecated_uses
            .read()
            .expect("metrics lock")
            .iter()
            .map(|((version, id), n)| (*version, id.clone(), n.load(Ordering::Relaxed)))
            .collect();
        uses.sort();
        for (version, id, n) in uses {
            let _ = writeln!(
                out,
                "tandem_deprecated_use_total{{version=\"{version}\",deprecation=\"{}\"}} {n}",
                escape(&id)
            );
        }
        metric::NEW_CLIENTS_REFUSED.header(&mut out);
        let mut refused: Vec<_> = self
            .new_clients_refused
            .read()
            .expect("metrics lock")
            .iter()
            .map(|(version, n)| (*version, n.load(Ordering::Relaxed)))
            .collect();
        refused.sort();
        for (version, n) in refused {
            let _ = writeln!(out, "tandem_new_clients_refused_total{{version=\"{version}\"}} {n}");
        }
        metric::NOTICES.header(&mut out);
        let mut notices: Vec<_> = self
            .notices
            .read()
            .expect("metrics lock")
            .iter()
            .map(|(key, n)| (*key, n.load(Ordering::Relaxed)))
            .collect();
        notices.sort();
        for ((kind, outcome), n) in notices {
            let _ = writeln!(out, "tandem_notices_total{{type=\"{kind}\",outcome=\"{outcome}\"}} {n}");
        }
        for (family, value) in gauges {
            family.sample(&mut out, *value);
        }
        out
    }
}

/// Label values escape `\`, `"` and newlines.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use sha2::Digest;

    use super::*;

    #[test]
    fn counts_histograms_and_capped_clients() {
        let metrics = Metrics::default();
        let route: Arc<str> = Arc::from("/users/{id}");
        let get = |dry_run| Observed { version: 2, route: &route, method: "GET", status: 200, dry_run };
        metrics.observe(get(false), Duration::from_micros(700));
        metrics.observe(get(false), Duration::from_millis(30));
        let client = |tenant: &str, subject: &str| (Arc::from(tenant), Arc::from(subject));
        let (acme, bot) = client("acme", "ci-bot");
        metrics.deprecated(1, &acme, &bot);
        let bot_label = format!("acme/{}", crate::encoding::hex(&sha2::Sha256::digest(b"ci-bot")[..6]));
        let text = metrics.render(&[(&metric::DB_POOL_CONNECTIONS, 3.0)]);
        assert!(
            text.contains(
                "tandem_http_requests_total{version=\"2\",route=\"/users/{id}\",method=\"GET\",status=\"200\"} 2"
            ),
            "{text}"
        );
        assert!(text.contains(
            "tandem_http_request_duration_seconds_bucket{version=\"2\",route=\"/users/{id}\",le=\"0.001\"} 1"
        ));
        assert!(text.contains(
            "tandem_http_request_duration_seconds_bucket{version=\"2\",route=\"/users/{id}\",le=\"0.05\"} 2"
        ));
        assert!(text.contains("tandem_http_request_duration_seconds_count{version=\"2\",route=\"/users/{id}\"} 2"));
        assert!(text.contains(&format!("tandem_deprecated_requests_total{{version=\"1\",client=\"{bot_label}\"}} 1")));
        assert!(!text.contains("ci-bot"), "no subject in the clear: {text}");
        assert!(text.contains("tandem_db_pool_connections 3"));
        metrics.observe(get(true), Duration::from_millis(1));
        let series = "tandem_http_requests_total{version=\"2\",route=\"/users/{id}\",method=\"GET\",status=\"200\"";
        let text = metrics.render(&[]);
        assert!(text.contains(&format!("{series},dry_run=\"true\"}} 1")), "{text}");
        assert!(text.contains(&format!("{series}}} 2")), "a dry run is counted apart: {text}");
        for i in 0..MAX_CLIENTS + 5 {
            let (tenant, subject) = client("t", &i.to_string());
            metrics.deprecated(1, &tenant, &subject);
        }
        metrics.deprecated(1, &acme, &bot);
        let text = metrics.render(&[]);
        assert!(text.contains("client=\"other\"} 6"), "1 known + 999 new fill the cap; 6 fold: {text}");
        assert!(text.contains(&format!("client=\"{bot_label}\"}} 2")), "a known client still counts past the cap");
    }
}
