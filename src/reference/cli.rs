//! The `tandem` command and its subcommands, from the CLI's parser.

use std::fmt::Write;

use super::generated;

pub fn page(mut command: clap::Command) -> String {
    command.build();
    let mut out = String::from("# The `tandem` command\n\n");
    out.push_str(&generated("the command's parser (src/cli.rs)"));
    out.push_str(
        "`tandem` with no subcommand is `tandem serve`. Every subcommand reads the same settings \
                  ([Settings](settings.md)).\n\n```text\n",
    );
    let _ = write!(out, "{}", command.render_long_help());
    out.push_str("```\n");
    for sub in command.get_subcommands().filter(|sub| sub.get_name() != "help") {
        let name = sub.get_name().to_string();
        let mut sub = sub.clone().bin_name(format!("tandem {name}"));
        let _ = write!(out, "\n## tandem {name}\n\n```text\n{}```\n", sub.render_long_help());
    }
    out
}
