//! A migration guide as a client reads it: JSON, markdown, or one self-contained HTML page,
//! chosen by `Accept` (or `format`). The forms a client's owners are handed name the tenant,
//! never the token's subject (often an e-mail address): nothing in them is a name, an address
//! or a token. The form an admin opens from one client's page names both in its title.

use std::fmt::Write;

use poem::{Request, Response};

use crate::encoding::rfc3339_seconds as stamp;
use crate::wire::error::{ApiError, Kind};
use crate::workbench::{
    elements::Used,
    guide::{Guide, GuideRoute, element_named},
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Json,
    Markdown,
    Html,
}

impl Form {
    /// The first form `Accept` names that a guide has (no `Accept`, or `*/*`: JSON); 406 when
    /// it names none.
    pub fn asked(req: &Request) -> Result<Form, ApiError> {
        let Some(accept) = req.header("accept") else { return Ok(Form::Json) };
        let forms = accept.split(',').filter_map(|item| {
            let media = item.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            match media.as_str() {
                "application/json" | "application/*" | "*/*" => Some(Form::Json),
                "text/markdown" => Some(Form::Markdown),
                "text/html" => Some(Form::Html),
                _ => None,
            }
        });
        forms.into_iter().next().ok_or_else(|| ApiError::new(Kind::NotAcceptable))
    }

    /// `format=json|markdown|html`, which wins over `Accept` (a link opens the form it names).
    pub fn named(format: &str) -> Option<Form> {
        match format {
            "json" => Some(Form::Json),
            "markdown" => Some(Form::Markdown),
            "html" => Some(Form::Html),
            _ => None,
        }
    }
}

/// Who a guide's text is written for: a client's owners, or an admin looking at any client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Owners,
    Admin,
}

pub fn respond(guide: &Guide, form: Form, reader: Reader) -> Response {
    let (content_type, body) = match form {
        Form::Json => ("application/json", guide.to_json().to_string()),
        Form::Markdown => ("text/markdown; charset=utf-8", markdown(guide, reader)),
        Form::Html => ("text/html; charset=utf-8", html(guide, reader)),
    };
    Response::builder().content_type(content_type).header("vary", "Accept").body(body)
}

/// `1 request`, `3 requests`.
fn requests(n: u64) -> String {
    if n == 1 { "1 request".into() } else { format!("{n} requests") }
}

fn sunset_line(guide: &Guide) -> String {
    match (guide.sunset_at, guide.days_left) {
        (Some(at), Some(days)) => format!("v{} is turned off at {} ({days} days left).", guide.from, stamp(at)),
        _ => format!("No sunset of v{} is announced yet.", guide.from),
    }
}

fn route_heading(route: &GuideRoute) -> String {
    let successor = route.successor.as_deref().map_or(String::new(), |path| format!(" → {} {path}", route.method));
    format!("{} {}{successor}", route.method, route.called)
}

fn as_is(route: &GuideRoute) -> &'static str {
    if route.must_read.is_empty() {
        "Your requests need no change: call the successor as you call this route."
    } else {
        "Your requests need no change: call the successor as you call this route, and read its answers as below."
    }
}

/// What one deprecated element's line says after its name: its use, its sunset, what to do.
fn element_facts(used: &Used) -> (String, String) {
    let d = &used.deprecation;
    let sunset = match (d.sunset_at, used.days_left) {
        (Some(at), Some(days)) => format!("removed at {} ({days} days left)", stamp(at)),
        _ => "no removal announced yet".to_string(),
    };
    let facts = format!("{}, the last at {}; {sunset}.", requests(used.requests), stamp(used.last_used));
    (facts, format!("Instead: {} {}", d.replacement, d.instruction))
}

/// `Migration guide: v1 to v2`; for an admin, `Migration guide for <tenant> / <subject>: …`.
fn title(guide: &Guide, reader: Reader) -> String {
    match reader {
        Reader::Owners => format!("Migration guide: v{} to v{}", guide.from, guide.to),
        Reader::Admin => {
            format!("Migration guide for {} / {}: v{} to v{}", guide.tenant, guide.subject, guide.from, guide.to)
        }
    }
}

pub fn markdown(guide: &Guide, reader: Reader) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", title(guide, reader));
    let _ = writeln!(out, "Tenant `{}`. Status: **{}**. {}\n", guide.tenant, guide.status.name(), sunset_line(guide));
    let _ = writeln!(out, "**Next step:** {}\n", guide.next_step);
    if guide.routes.is_empty() {
        let _ = writeln!(out, "No request of this client to v{} is on record.", guide.from);
    }
    for route in &guide.routes {
        let _ = writeln!(out, "## {}\n", route_heading(route));
        let _ = writeln!(out, "{}.\n", requests(route.requests));
        if route.must_change.is_empty() {
            let _ = writeln!(out, "{}\n", as_is(route));
        } else {
            let _ = writeln!(out, "### Change\n");
            for m in &route.must_change {
                let _ = writeln!(
                    out,
                    "- **{}** (`{}`, met by {}): {}",
                    m.change.title,
                    m.change.id,
                    requests(m.requests),
                    m.change.instruction
                );
                for (detail, n, _) in &m.details {
                    let _ = writeln!(out, "  - `{detail}`: {}", requests(*n));
                }
            }
            out.push('\n');
        }
        if !route.must_read.is_empty() {
            let _ = writeln!(out, "### Read differently\n");
            for c in &route.must_read {
                let _ = writeln!(out, "- **{}** (`{}`): {}", c.title, c.id, c.instruction);
            }
            out.push('\n');
        }
    }
    if !guide.deprecations.is_empty() {
        let _ = writeln!(out, "## Deprecated elements you use\n");
        for used in &guide.deprecations {
            let (facts, instead) = element_facts(used);
            let named = element_named(&used.deprecation);
            let _ = writeln!(out, "- **{named}** (`{}`): {facts} {instead}", used.deprecation.id);
        }
        out.push('\n');
    }
    out
}

fn escape(text: &str) -> String {
    crate::encoding::html_escaped(text)
}

/// One page, its style inline: no script, no font, nothing fetched.
pub fn html(guide: &Guide, reader: Reader) -> String {
    let mut out = String::new();
    let title = escape(&title(guide, reader));
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <style>body{{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}}\
         h2{{border-top:1px solid #ddd;padding-top:1rem;font-size:1.1rem}}code{{background:#f3f3f3;padding:0 .2rem}}\
         .next{{background:#eef6ee;padding:.6rem .8rem;border-left:4px solid #3a3}}</style></head><body>\n\
         <h1>{title}</h1>\n<p>Tenant <code>{}</code>. Status: <strong>{}</strong>. {}</p>\n\
         <p class=\"next\"><strong>Next step:</strong> {}</p>\n",
        escape(&guide.tenant),
        guide.status.name(),
        escape(&sunset_line(guide)),
        escape(&guide.next_step)
    );
    if guide.routes.is_empty() {
        let _ = writeln!(out, "<p>No request of this client to v{} is on record.</p>", guide.from);
    }
    for route in &guide.routes {
        let _ = writeln!(out, "<h2>{}</h2>\n<p>{}.</p>", escape(&route_heading(route)), requests(route.requests));
        if route.must_change.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", as_is(route));
        } else {
            out.push_str("<h3>Change</h3>\n<ul>\n");
            for m in &route.must_change {
                let _ = write!(
                    out,
                    "<li><strong>{}</strong> (<code>{}</code>, met by {}): {}",
                    escape(m.change.title),
                    m.change.id,
                    requests(m.requests),
                    escape(m.change.instruction)
                );
                if !m.details.is_empty() {
                    out.push_str("<ul>");
                    for (detail, n, _) in &m.details {
                        let _ = write!(out, "<li><code>{}</code>: {}</li>", escape(detail), requests(*n));
                    }
                    out.push_str("</ul>");
                }
                out.push_str("</li>\n");
            }
            out.push_str("</ul>\n");
        }
        if !route.must_read.is_empty() {
            out.push_str("<h3>Read differently</h3>\n<ul>\n");
            for c in &route.must_read {
                let _ = writeln!(
                    out,
                    "<li><strong>{}</strong> (<code>{}</code>): {}</li>",
                    escape(c.title),
                    c.id,
                    escape(c.instruction)
                );
            }
            out.push_str("</ul>\n");
        }
    }
    if !guide.deprecations.is_empty() {
        out.push_str("<h2>Deprecated elements you use</h2>\n<ul>\n");
        for used in &guide.deprecations {
            let (facts, instead) = element_facts(used);
            let d = &used.deprecation;
            let _ = writeln!(
                out,
                "<li id=\"{id}\"><strong>{}</strong> (<code>{id}</code>): {} {}</li>",
                escape(&element_named(d)),
                escape(&facts),
                escape(&instead),
                id = escape(&d.id),
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body></html>\n");
    out
}
