//! The headers a client sends and reads, from their catalogue.

use std::fmt::Write;

use super::{cell, generated};
use crate::wire::headers::{Header, REQUEST, RESPONSE};

pub fn page() -> String {
    let mut out = String::from("# Headers\n\n");
    out.push_str(&generated("the headers' catalogue (src/wire/headers.rs)"));
    out.push_str(
        "The headers that are the service's own business. A browser on an origin of \
         `TANDEM_CORS_ORIGINS` may send and read each one marked CORS.\n\n## Sent by a client\n\n",
    );
    table(&mut out, REQUEST);
    out.push_str("\n## Read by a client\n\n");
    table(&mut out, RESPONSE);
    out
}

fn table(out: &mut String, headers: &[Header]) {
    out.push_str("| Header | Meaning | CORS |\n|---|---|---|\n");
    for header in headers {
        let cors = if header.cors { "yes" } else { "no" };
        let _ = writeln!(out, "| `{}` | {} | {cors} |", header.name, cell(header.meaning));
    }
}
