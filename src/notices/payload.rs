//! What a notice says (the book's clients/notices.md): each event, the key that makes it once per
//! client and endpoint, and its body, as Standard Webhooks JSON carrying the client's own guide (at
//! most [`MAX_BODY`] bytes, the guide's least-called routes cut to fit) or as a few lines of Slack
//! text.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::email::message;
use crate::{
    core::storage::{Client, Endpoint, Format, Status},
    encoding::rfc3339_seconds as stamp,
    registry::lifecycle::Lifecycle,
};

/// The largest body sent.
pub const MAX_BODY: usize = 64 * 1024;

/// Every type of notice, as `type` and the metrics name them.
pub const KINDS: [&str; 5] =
    ["version.deprecated", "sunset.reminder", "brownout.scheduled", "migration.exposed", "deprecation.used"];

/// What a notice tells a client's owners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The version is deprecated.
    Deprecated,
    /// Fewer than `threshold` days remain before the sunset.
    Reminder { threshold: i64 },
    /// A brownout covering the client was created (`ahead`: it starts within a day).
    Brownout { id: Uuid, start: DateTime<Utc>, end: DateTime<Utc>, ahead: bool },
    /// The client's requests met this change of the successor.
    Exposed { change: String },
    /// The client's requests used an element deprecated inside its version (the book's
    /// operators/elements.md); `entry` is its catalogue entry.
    ElementUsed { id: String, entry: Value },
    /// Fewer than `threshold` days remain before the element's sunset.
    ElementReminder { id: String, entry: Value, threshold: i64 },
}

impl Event {
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Deprecated => KINDS[0],
            Event::Reminder { .. } => KINDS[1],
            Event::Brownout { .. } => KINDS[2],
            Event::Exposed { .. } => KINDS[3],
            Event::ElementUsed { .. } => KINDS[4],
            Event::ElementReminder { .. } => KINDS[1],
        }
    }

    /// Names the notice of this event for `client` on `version`, through `endpoint` as it was
    /// set (a new endpoint is told again): written once, whichever instance sees the event. A
    /// reminder names the sunset it counts down to, so a moved sunset is counted down again.
    pub fn key(&self, version: u16, sunset_at: Option<DateTime<Utc>>, client: &Client, endpoint: &Endpoint) -> String {
        let what = match self {
            Event::Deprecated => String::new(),
            Event::Reminder { threshold } => format!("{threshold}@{}", sunset_at.map(stamp).unwrap_or_default()),
            Event::Brownout { id, ahead, .. } => format!("{id}{}", if *ahead { "/day-before" } else { "" }),
            Event::Exposed { change } => change.clone(),
            Event::ElementUsed { id, .. } => id.clone(),
            Event::ElementReminder { id, threshold, .. } => {
                format!("{id}/{threshold}@{}", sunset_at.map(stamp).unwrap_or_default())
            }
        };
        let set_at = endpoint.created_at.timestamp_micros().to_string();
        // A JSON array: no tenant, subject or change can make two keys the same.
        json!([self.kind(), version, what, client.tenant, client.subject, endpoint.tenant, endpoint.subject, set_at])
            .to_string()
    }
}

/// What every notice says of the client and its version.
pub struct Facts<'a> {
    pub client: &'a Client,
    pub version: u16,
    pub successor: u16,
    pub lifecycle: &'a Lifecycle,
    pub status: Status,
    /// The client's guide as `GET /api/migration/guide` answers it.
    pub guide: Value,
    /// Its markdown and HTML forms, for an e-mail (`None` for any other format).
    pub pages: Option<(String, String)>,
    pub now: DateTime<Utc>,
}

/// The body of `event`'s notice in `format`.
pub fn body(event: &Event, facts: Facts<'_>, format: Format) -> String {
    match format {
        Format::Standard => standard(event, facts),
        Format::Slack => json!({"text": slack_text(event, &facts)}).to_string(),
        Format::Email => email(event, &facts),
    }
}

/// A day as a subject names it: `2027-02-15`.
fn day(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d").to_string()
}

/// The e-mail's subject: what happened, to whom, and by when.
fn email_subject(event: &Event, facts: &Facts<'_>) -> String {
    let Facts { client, version, successor, lifecycle, .. } = facts;
    let who = message::who(&client.tenant, &client.subject);
    let by = lifecycle.sunset_at.map(|s| format!(" by {}", day(s))).unwrap_or_default();
    match event {
        Event::Deprecated => format!("v{version} is deprecated: {who} must move to v{successor}{by}"),
        Event::Reminder { threshold } => {
            format!("Fewer than {threshold} days left: {who} must move from v{version} to v{successor}{by}")
        }
        Event::Brownout { start, .. } => {
            format!("A brownout of v{version} on {} refuses {who}'s requests: move to v{successor}{by}", day(*start))
        }
        Event::Exposed { change } => format!("{who} meets change {change} of v{successor}: read what to change{by}"),
        Event::ElementUsed { entry, .. } => {
            format!("{who} uses {} deprecated in v{version}{}", element_words(entry), element_by(entry))
        }
        Event::ElementReminder { entry, threshold, .. } => {
            format!(
                "Fewer than {threshold} days left: {who} must stop using {}{}",
                element_words(entry),
                element_by(entry)
            )
        }
    }
}

fn element_by(entry: &Value) -> String {
    let sunset = entry["sunsetAt"].as_str().and_then(|s| s.parse::<DateTime<Utc>>().ok());
    sunset.map(|s| format!(": remove it by {}", day(s))).unwrap_or_default()
}

/// An e-mail: its subject, and the guide's text and HTML, each led by what happened and what
/// to do (the same words as the Slack text, without its markup).
fn email(event: &Event, facts: &Facts<'_>) -> String {
    let lead = slack_text(event, facts).replace(['*', '`'], "");
    let (text, html) = facts.pages.clone().unwrap_or_default();
    let lead_html = lead.lines().map(|l| format!("<p>{}</p>\n", crate::encoding::html_escaped(l))).collect::<String>();
    let lead_html = format!(
        "<div style=\"background:#fff6e5;border-left:4px solid #e0a100;padding:.4rem .8rem\">\n{lead_html}</div>\n"
    );
    let html = match html.find("<body>\n") {
        Some(at) => format!("{}{lead_html}{}", &html[..at + 7], &html[at + 7..]),
        None => format!("{lead_html}{html}"),
    };
    let content = message::Content { subject: email_subject(event, facts), text: format!("{lead}\n\n{text}"), html };
    serde_json::to_string(&content).expect("strings serialize")
}

fn standard(event: &Event, facts: Facts<'_>) -> String {
    let Facts { client, version, successor, lifecycle, status, mut guide, now, .. } = facts;
    let mut data = Map::new();
    data.insert("tenant".into(), json!(client.tenant));
    data.insert("subject".into(), json!(client.subject));
    data.insert("version".into(), json!(version));
    data.insert("successor".into(), json!(successor));
    data.insert("deprecatedAt".into(), json!(lifecycle.deprecated_at.map(stamp)));
    data.insert("sunsetAt".into(), json!(lifecycle.sunset_at.map(stamp)));
    data.insert("daysLeft".into(), json!(lifecycle.days_left(now)));
    data.insert("status".into(), json!(status.name()));
    match event {
        Event::Deprecated => {}
        Event::Reminder { threshold } => {
            data.insert("threshold".into(), json!(threshold));
        }
        Event::Brownout { id, start, end, .. } => {
            data.insert("brownout".into(), json!(id));
            data.insert("start".into(), json!(stamp(*start)));
            data.insert("end".into(), json!(stamp(*end)));
        }
        Event::Exposed { change } => {
            data.insert("change".into(), json!(change));
        }
        Event::ElementUsed { entry, .. } => {
            data.insert("deprecation".into(), entry.clone());
        }
        Event::ElementReminder { entry, threshold, .. } => {
            data.insert("threshold".into(), json!(threshold));
            data.insert("deprecation".into(), entry.clone());
        }
    }
    let write = |guide: &Value, data: &Map<String, Value>| {
        let mut data = data.clone();
        data.insert("guide".into(), guide.clone());
        json!({"type": event.kind(), "timestamp": stamp(now), "data": data}).to_string()
    };
    let mut body = write(&guide, &data);
    // The guide lists routes most called first: the least called go first when it must shrink.
    let mut cut = 0;
    while body.len() > MAX_BODY {
        let Some(routes) = guide.get_mut("routes").and_then(Value::as_array_mut).filter(|r| !r.is_empty()) else {
            break;
        };
        let drop = routes.len().div_ceil(8).max(1);
        routes.truncate(routes.len() - drop);
        cut += drop;
        guide["routesCut"] = json!(cut);
        body = write(&guide, &data);
    }
    body
}

/// A few lines saying the same, with the guide's next step.
fn slack_text(event: &Event, facts: &Facts<'_>) -> String {
    let Facts { client, version, successor, lifecycle, status, guide, now, .. } = facts;
    let who = format!("{}/{}", client.tenant, client.subject);
    let sunset = lifecycle
        .sunset_at
        .map(|s| format!(" It is switched off on {} ({} days left).", stamp(s), lifecycle.days_left(*now).unwrap_or(0)))
        .unwrap_or_default();
    let headline = match event {
        Event::Deprecated => format!("*v{version} of the API is deprecated*: move {who} to v{successor}.{sunset}"),
        Event::Reminder { threshold } => {
            format!("*Fewer than {threshold} days left* before v{version} is switched off for {who}.{sunset}")
        }
        Event::Brownout { start, end, .. } => format!(
            "*A brownout of v{version}* refuses {who}'s requests from {} to {}, a rehearsal of the sunset.{sunset}",
            stamp(*start),
            stamp(*end)
        ),
        Event::Exposed { change } => {
            format!("*{who}'s requests to v{version} met change `{change}`*, which v{successor} makes.{sunset}")
        }
        Event::ElementUsed { entry, .. } => format!(
            "*{who} uses {}*, deprecated in v{version}: {}.{}",
            element_words(entry),
            entry["replacement"].as_str().unwrap_or_default(),
            element_sunset(entry)
        ),
        Event::ElementReminder { entry, threshold, .. } => format!(
            "*Fewer than {threshold} days left* before {} is removed for {who}.{}",
            element_words(entry),
            element_sunset(entry)
        ),
    };
    let next = guide.get("nextStep").and_then(Value::as_str).unwrap_or_default();
    format!(
        "{headline}\nStatus: {}. Next step: {next}\nYour guide: GET /api/migration/guide?version={version}",
        status.name()
    )
}

/// "the parameter `page` of GET /api/v2/users", from a catalogue entry.
fn element_words(entry: &Value) -> String {
    let operation = entry["operation"].as_str().unwrap_or_default();
    match (entry["element"]["kind"].as_str(), entry["element"]["name"].as_str()) {
        (Some(kind), Some(name)) => format!("the {kind} `{name}` of {operation}"),
        _ => format!("the operation {operation}"),
    }
}

fn element_sunset(entry: &Value) -> String {
    entry["sunsetAt"].as_str().map(|s| format!(" It is removed on {s}.")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(client: &'a Client, lifecycle: &'a Lifecycle, guide: Value, now: DateTime<Utc>) -> Facts<'a> {
        Facts { client, version: 1, successor: 2, lifecycle, status: Status::NotStarted, guide, pages: None, now }
    }

    fn at(raw: &str) -> DateTime<Utc> {
        raw.parse().unwrap()
    }

    #[test]
    fn a_big_guide_is_cut_to_fit_from_its_least_called_routes() {
        let client = Client::new("acme", "bot");
        let lifecycle = Lifecycle { sunset_at: Some(at("2027-03-01T00:00:00Z")), ..Default::default() };
        let routes: Vec<Value> = (0..2000)
            .map(|i| json!({"route": format!("/r{i}"), "requests": 2000 - i, "pad": "x".repeat(40)}))
            .collect();
        let guide = json!({"nextStep": "Go.", "routes": routes});
        let now = at("2026-12-01T12:00:00Z");
        let body = body(&Event::Deprecated, facts(&client, &lifecycle, guide, now), Format::Standard);
        assert!(body.len() <= MAX_BODY, "{}", body.len());
        let parsed: Value = serde_json::from_str(&body).unwrap();
        let kept = parsed["data"]["guide"]["routes"].as_array().unwrap();
        assert!(kept.len() > 100 && kept.len() < 2000);
        assert_eq!(kept[0]["route"], "/r0");
        assert_eq!(parsed["data"]["guide"]["routesCut"], 2000 - kept.len());
        // 89 days and 12 hours: 89 whole days.
        assert_eq!(parsed["data"]["daysLeft"], 89);
    }

    #[test]
    fn every_event_is_one_e_mail_whose_subject_says_what_to_whom_by_when() {
        let client = Client::new("acme", "ci-bot");
        let lifecycle = Lifecycle { sunset_at: Some(at("2026-07-01T00:00:00Z")), ..Default::default() };
        let entry = json!({"operation": "GET /api/v1/users", "element": {"kind": "parameter", "name": "page"},
                           "replacement": "Use cursor.", "sunsetAt": "2026-08-01T00:00:00Z"});
        let brownout = Event::Brownout {
            id: Uuid::nil(),
            start: at("2026-06-20T09:00:00Z"),
            end: at("2026-06-20T10:00:00Z"),
            ahead: false,
        };
        for (event, subject) in [
            (Event::Deprecated, "v1 is deprecated: acme/ci-bot must move to v2 by 2026-07-01"),
            (
                Event::Reminder { threshold: 7 },
                "Fewer than 7 days left: acme/ci-bot must move from v1 to v2 by 2026-07-01",
            ),
            (brownout, "A brownout of v1 on 2026-06-20 refuses acme/ci-bot's requests: move to v2 by 2026-07-01"),
            (
                Event::Exposed { change: "customers-sort".into() },
                "acme/ci-bot meets change customers-sort of v2: read what to change by 2026-07-01",
            ),
            (
                Event::ElementUsed { id: "page".into(), entry: entry.clone() },
                "acme/ci-bot uses the parameter `page` of GET /api/v1/users deprecated in v1: remove it by 2026-08-01",
            ),
            (
                Event::ElementReminder { id: "page".into(), entry: entry.clone(), threshold: 30 },
                "Fewer than 30 days left: acme/ci-bot must stop using the parameter `page` of GET /api/v1/users: remove it by 2026-08-01",
            ),
        ] {
            let pages = Some(("# Guide\n".to_string(), "<html><body>\n<h1>Guide</h1>\n</body></html>\n".to_string()));
            let facts =
                Facts { pages, ..facts(&client, &lifecycle, json!({"nextStep": "Go."}), at("2026-06-09T12:00:00Z")) };
            let written: message::Content = serde_json::from_str(&body(&event, facts, Format::Email)).unwrap();
            assert_eq!(written.subject, subject);
            assert!(written.text.ends_with("\n\n# Guide\n") && !written.text.contains('*'), "{}", written.text);
            assert!(written.html.starts_with("<html><body>\n<div "), "the event first: {}", written.html);
            assert!(written.html.ends_with("<h1>Guide</h1>\n</body></html>\n"), "{}", written.html);
        }
    }

    #[test]
    fn keys_differ_by_endpoint_and_sunset_and_never_collide() {
        let client = Client::new("acme", "a:b");
        let endpoint = Endpoint {
            tenant: "acme".into(),
            subject: String::new(),
            url: crate::core::endpoint_url::EndpointUrl::parse("https://hooks.example/x").unwrap(),
            format: Format::Standard,
            secret: "whsec_x".into(),
            created_at: at("2026-12-01T00:00:00Z"),
            disabled_at: None,
            confirmed_at: None,
        };
        let reminder = Event::Reminder { threshold: 30 };
        let a = reminder.key(1, Some(at("2027-01-01T00:00:00Z")), &client, &endpoint);
        let b = reminder.key(1, Some(at("2027-02-01T00:00:00Z")), &client, &endpoint);
        assert_ne!(a, b);
        let other = Client::new("acme:a", "b");
        assert_ne!(
            Event::Deprecated.key(1, None, &client, &endpoint),
            Event::Deprecated.key(1, None, &other, &endpoint)
        );
    }
}
