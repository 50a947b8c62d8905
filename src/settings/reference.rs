//! The book's settings reference (`docs/src/reference/settings.md`), written from the settings'
//! declarations: every name the groups declare, its variable, its default from
//! `Settings::default()` and its meaning from [`super::help`]. A declared setting without help
//! is an error, so the page cannot miss one.

use std::fmt::Write;

use serde_json::Value;

use super::{CONFIG_VARIABLE, LifecycleSettings, Settings, help, layers, names};

/// The page, as `tandem export-reference` writes it.
pub fn page() -> anyhow::Result<String> {
    let defaults = serde_json::to_value(Settings::default())?;
    let mut out = String::from(
        "# Settings\n\n\
         <!-- Written by `tandem export-reference` from the settings' declarations (src/settings/); do not edit. -->\n\n\
         Every setting the service reads, with its variable, its key in `tandem.toml` and its default. How \
         the layers combine (defaults, `tandem.toml`, the environment), secrets from files and `tandem \
         config` are explained in [Settings](../operators/settings.md). A name not listed here refuses to \
         start. Trace export reads the OpenTelemetry SDK's own `OTEL_*` variables, as strictly: they are \
         listed in [Traces](../operators/traces.md#the-variables).\n\n\
         | Variable, and its key in `tandem.toml` | Default | Meaning |\n|---|---|---|\n",
    );
    for (group, fields) in layers::groups() {
        for field in *fields {
            if *field == "versions" {
                for lifecycle_field in layers::fields::<LifecycleSettings>() {
                    let key = format!("versions.{lifecycle_field}");
                    let variable = format!("{}V<N>_{}", names::PREFIX, lifecycle_field.to_ascii_uppercase());
                    let toml = format!("`{lifecycle_field}` in `[versions.<N>]`");
                    row(&mut out, &variable, &toml, "unset", &key)?;
                }
                continue;
            }
            let default = match defaults[group][field] {
                Value::Null => "unset".to_string(),
                Value::String(ref text) => format!("`{text}`"),
                ref other => format!("`{other}`"),
            };
            row(&mut out, &names::variable(&[field]), &format!("`{field}`"), &default, field)?;
        }
    }
    let config = "the settings file; a missing file is no error";
    writeln!(out, "| `{CONFIG_VARIABLE}`<br>(environment only) | `tandem.toml` | {config} |")?;
    Ok(out)
}

fn row(out: &mut String, variable: &str, toml: &str, default: &str, key: &str) -> anyhow::Result<()> {
    let Some(help) = help::of(key) else { anyhow::bail!("the setting `{key}` has no help in src/settings/help.rs") };
    let default = help.default.unwrap_or(default);
    // A `|` inside a cell would end it early.
    let meaning = help.meaning.replace('|', "\\|");
    writeln!(out, "| `{variable}`<br>{toml} | {default} | {meaning} |")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_declared_setting_has_its_help() {
        let page = super::page().expect("every setting has help");
        assert!(page.contains("| `TANDEM_RATE_LIMIT`<br>`rate_limit` | `50` |"), "{page}");
        assert!(page.contains("| `TANDEM_V<N>_SUNSET_AT`<br>`sunset_at` in `[versions.<N>]` | unset |"), "{page}");
    }
}
