//! One notice as an e-mail (the book's clients/email.md): `From` the operator's sender, `To` the
//! endpoint's one address, `Message-ID` the notice's id (the same on every attempt), a subject
//! saying what happened to whom and by when, and `multipart/alternative` with the text and the HTML
//! of the client's guide (its style inline, nothing loaded from outside). `List-Id` and RFC 8058's
//! one-click `List-Unsubscribe` let a mail reader offer to leave. No header carries text a client
//! chose, except its tenant and subject in `Subject`, cleaned of control characters and encoded
//! (RFC 2047) by lettre.

use std::time::SystemTime;

use lettre::{
    Message,
    message::{
        Mailbox as Address, MultiPart, SinglePart,
        header::{ContentType, HeaderName, HeaderValue},
    },
};
use serde::{Deserialize, Serialize};

use super::{
    links::{self, Purpose},
    relay::Relay,
};
use crate::{
    core::{mailbox::Mailbox, storage::Endpoint},
    encoding::html_escaped,
};

/// The type of the notice that asks a person to confirm an address.
pub const CONFIRMATION: &str = "endpoint.confirmation";

/// What the outbox holds for an e-mail: written when the event is found; the links, which
/// depend on the endpoint and the public URL, are added as it is sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Content {
    pub subject: String,
    pub text: String,
    /// A whole HTML page (`<body>\n` … `</body>`), as the guide's HTML form is.
    pub html: String,
}

/// Text a client chose, fit for a header: control characters dropped, at most `max` characters.
pub fn header_safe(text: &str, max: usize) -> String {
    text.chars().filter(|c| !c.is_control()).take(max).collect()
}

/// `acme/ci-bot` (a tenant's endpoint: `acme`), fit for a subject.
pub fn who(tenant: &str, subject: &str) -> String {
    match subject {
        "" => header_safe(tenant, 64),
        _ => format!("{}/{}", header_safe(tenant, 64), header_safe(subject, 64)),
    }
}

/// The message asking a person to confirm `endpoint`'s address.
fn confirmation(relay: &Relay, endpoint: &Endpoint) -> Content {
    let link = links::link(&relay.public, Purpose::Confirm, endpoint);
    let about = match endpoint.subject.as_str() {
        "" => format!("every client of the tenant {}", endpoint.tenant),
        _ => format!("the client {} of the tenant {}", endpoint.subject, endpoint.tenant),
    };
    let days = links::CONFIRM_WITHIN.num_days();
    let text = format!(
        "This address was given to receive notices about {about}: when an API version it calls is \
         deprecated, reminders before its sunset, brownouts, and what it must change.\n\n\
         To receive them, open this link and press the button \"Confirm\" (the link works for {days} days):\n\n\
         {link}\n\nIf you did not expect this, ignore it: nothing more is sent to this address."
    );
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Confirm notices</title></head>\
         <body style=\"font:15px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222\">\n\
         <h1 style=\"font-size:1.3rem\">Confirm notices to this address</h1>\n\
         <p>This address was given to receive notices about {}: when an API version it calls is deprecated, \
         reminders before its sunset, brownouts, and what it must change.</p>\n\
         <p><a href=\"{}\" style=\"display:inline-block;background:#2a5bd7;color:#fff;padding:.5rem 1rem;\
         border-radius:4px;text-decoration:none\">Open the confirmation page</a> (the link works for {days} days)</p>\n\
         <p>If you did not expect this, ignore it: nothing more is sent to this address.</p>\n</body></html>\n",
        html_escaped(&about),
        html_escaped(&link)
    );
    Content { subject: format!("Confirm notices about {}", who(&endpoint.tenant, &endpoint.subject)), text, html }
}

/// The lines that end every message: why it came and how to leave.
fn footers(relay: &Relay, endpoint: &Endpoint) -> (String, String) {
    let leave = links::link(&relay.public, Purpose::Unsubscribe, endpoint);
    let text = format!(
        "\n\n--\nYou receive this because this address was set to receive Tandem's notices about {}. \
         To receive no more, open {leave}",
        who(&endpoint.tenant, &endpoint.subject)
    );
    let html = format!(
        "<hr style=\"border:0;border-top:1px solid #ddd;margin-top:2rem\"><p style=\"color:#666;font-size:13px\">\
         You receive this because this address was set to receive Tandem's notices about {}. \
         <a href=\"{}\">Receive no more</a>.</p>\n",
        html_escaped(&who(&endpoint.tenant, &endpoint.subject)),
        html_escaped(&leave)
    );
    (text, html)
}

/// The message for notice `id` of type `kind`, whose stored body is `body`, to `endpoint`.
pub fn build(relay: &Relay, id: &str, kind: &str, body: &str, endpoint: &Endpoint) -> Result<Message, String> {
    let to = endpoint.url.mailbox().ok_or("the endpoint is not an address")?;
    let content = match kind {
        CONFIRMATION => confirmation(relay, endpoint),
        _ => serde_json::from_str(body).map_err(|e| format!("an e-mail notice's body does not read: {e}"))?,
    };
    let (text_footer, html_footer) = footers(relay, endpoint);
    let html = match content.html.rfind("</body>") {
        Some(end) => format!("{}{html_footer}{}", &content.html[..end], &content.html[end..]),
        None => format!("{}{html_footer}", content.html),
    };
    let address = |m: &Mailbox| m.as_str().parse().map_err(|e| format!("{e}"));
    let leave = links::link(&relay.public, Purpose::Unsubscribe, endpoint);
    let header = |name: &'static str, value: String| HeaderValue::new(HeaderName::new_from_ascii_str(name), value);
    Message::builder()
        .from(Address::new(Some("Tandem notices".into()), address(&relay.from)?))
        .to(Address::new(None, address(&to)?))
        .date(SystemTime::now())
        .message_id(Some(format!("<{id}@{}>", relay.domain)))
        .subject(header_safe(&content.subject, 200))
        .raw_header(header("List-Id", format!("Tandem notices <notices.{}>", relay.domain)))
        .raw_header(header("List-Unsubscribe", format!("<{leave}>")))
        .raw_header(header("List-Unsubscribe-Post", "List-Unsubscribe=One-Click".into()))
        .multipart(
            MultiPart::alternative()
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_PLAIN)
                        .body(format!("{}{text_footer}\n", content.text)),
                )
                .singlepart(SinglePart::builder().header(ContentType::TEXT_HTML).body(html)),
        )
        .map_err(|e| format!("the message does not build: {e}"))
}
