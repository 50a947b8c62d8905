//! The problem types and field codes, from [`Kind`] and the field rules.

use std::fmt::Write;

use super::{cell, generated};
use crate::wire::error::{
    Kind,
    i18n::{Lang, one_of_each_rule, rule_code, rule_message},
};

pub fn page() -> String {
    let mut out = String::from("# Error codes and problem types\n\n");
    out.push_str(&generated("the error kinds (src/wire/error/)"));
    out.push_str(
        "Every error names a problem type: v2 and the routes outside the versions answer RFC 9457 \
         `application/problem+json` with `type` `/problems/<slug>` (an HTML page at that address explains \
         it), v1 its legacy body with the same status. How a client reads both is in \
         [Errors](../clients/errors.md).\n\n\
         ## Problem types\n\n\
         | Status | `type` | Title | Detail |\n|---|---|---|---|\n",
    );
    let mut kinds = Kind::ALL.to_vec();
    kinds.sort_by_key(|kind| kind.status().as_u16());
    for kind in kinds {
        let _ = writeln!(
            out,
            "| {} | `/problems/{}` | {} | {} |",
            kind.status().as_u16(),
            kind.slug(),
            cell(kind.title(Lang::En)),
            cell(&kind.detail(Lang::En).replace("{}", "…"))
        );
    }
    out.push_str(
        "\n`unsupported-api-version` is 400 when the header or query names the version, 406 when the media \
         type does and 404 when the URI does, each listing the supported versions.\n\
         \n## Field codes\n\n\
         Each item of `errors` names what is wrong with one input (`pointer`, `parameter` or `header`) by a \
         stable `code`, with a localized `message` (English here; the limits are the user's, where a rule has one). An \
         upload's items name the `line` and `column` of the cell instead.\n\n\
         | `code` | Message |\n|---|---|\n",
    );
    let mut seen = Vec::new();
    for rule in one_of_each_rule() {
        let code = rule_code(&rule);
        let message = rule_message(&rule, Lang::En);
        if seen.contains(&(code, message.clone())) {
            continue;
        }
        let _ = writeln!(out, "| `{code}` | {} |", cell(&message));
        seen.push((code, message));
    }
    out
}
