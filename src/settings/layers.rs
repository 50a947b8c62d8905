//! Reading the settings as an operator writes them: defaults, then `tandem.toml` (path in
//! `TANDEM_CONFIG`), then `TANDEM_*` variables, which always win; a secret may come from a file
//! named by its `_FILE` variable. A name the service does not know refuses to start.

use std::{collections::BTreeMap, path::Path, sync::OnceLock};

use figment::{
    Figment, Metadata, Profile, Provider,
    error::Kind,
    providers::{Env, Format, Serialized, Toml},
    value::{Dict, Map, Tag, Value},
};
use secrecy::SecretString;
use serde::de::DeserializeOwned;

use super::{
    DatabaseSettings, DatabaseUrl, HttpSettings, LoggingSettings, NoticeSettings, RedisSettings, Settings,
    TokenSettings, VersionSettings,
    names::{self, PREFIX},
};

/// The names of a declaration's fields, read from the declaration itself (serde lists every field
/// when it meets one it does not know).
pub(super) fn fields<T: DeserializeOwned>() -> &'static [&'static str] {
    let probe = Figment::from(Serialized::defaults(BTreeMap::from([("\u{1}", 0)])));
    match probe.extract::<T>().map_err(|e| e.kind) {
        Err(Kind::UnknownField(_, expected)) => expected,
        _ => unreachable!("a group refuses an unknown name"),
    }
}

/// Each group's name in [`Settings`] and the names of its settings, read from the group's own
/// declaration (serde lists every field when it meets one it does not know).
pub(super) fn groups() -> &'static [(&'static str, &'static [&'static str])] {
    static GROUPS: OnceLock<Vec<(&'static str, &'static [&'static str])>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        vec![
            ("http", fields::<HttpSettings>()),
            ("database", fields::<DatabaseSettings>()),
            ("redis", fields::<RedisSettings>()),
            ("tokens", fields::<TokenSettings>()),
            ("lifecycle", fields::<VersionSettings>()),
            ("notices", fields::<NoticeSettings>()),
            ("logging", fields::<LoggingSettings>()),
        ]
    })
}

/// The group a setting's name belongs to.
fn group_of(name: &str) -> Option<&'static str> {
    groups().iter().find(|(_, fields)| fields.contains(&name)).map(|(group, _)| *group)
}

/// Every setting's name, as `tandem.toml` writes it.
fn all_names() -> impl Iterator<Item = &'static str> {
    groups().iter().flat_map(|(_, fields)| fields.iter().copied())
}

/// `rate_limit` → `http.rate_limit`: where a name the operator writes lives in [`Settings`].
fn grouped(path: &str) -> String {
    let first = path.split('.').next().unwrap_or_default();
    group_of(first).map_or_else(|| path.to_string(), |group| format!("{group}.{path}"))
}

/// The operator's path of a path in [`Settings`]: the group left out.
fn ungrouped(path: &[String]) -> Vec<&str> {
    let skip = usize::from(path.first().is_some_and(|first| groups().iter().any(|(group, _)| group == first)));
    path.iter().skip(skip).map(String::as_str).collect()
}

/// A layer whose flat names (`rate_limit`, `versions`) are moved into their groups; a name no
/// group knows stays at the top, where [`Settings`] refuses it.
struct Grouped<P>(P);

impl<P: Provider> Provider for Grouped<P> {
    fn metadata(&self) -> Metadata {
        self.0.metadata()
    }

    fn data(&self) -> figment::Result<Map<Profile, Dict>> {
        let mut data = self.0.data()?;
        for dict in data.values_mut() {
            for (name, value) in std::mem::take(dict) {
                match group_of(&name) {
                    Some(group) => {
                        let entry =
                            dict.entry(group.to_string()).or_insert_with(|| Value::Dict(Tag::Default, Dict::new()));
                        if let Value::Dict(_, fields) = entry {
                            fields.insert(name, value);
                        }
                    }
                    None => {
                        dict.insert(name, value);
                    }
                }
            }
        }
        Ok(data)
    }
}

/// The variable naming the settings file; it is not a setting itself.
pub const CONFIG_VARIABLE: &str = "TANDEM_CONFIG";

/// Where a setting's value came from, as `tandem config` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    /// The settings file, by the path it was read from.
    File(String),
    /// A variable, by its name (`TANDEM_RATE_LIMIT`, `TANDEM_JWT_SECRET_FILE`).
    Variable(String),
}

/// The settings and where each came from.
pub struct Loaded {
    pub settings: Settings,
    layers: Layers,
    /// Secrets read from a file: their key and where the file was named.
    from_files: BTreeMap<&'static str, Source>,
}

impl Loaded {
    /// Where the value at `path` (`rate_limit`, `versions.1.sunset_at`) came from.
    pub fn source(&self, path: &str) -> Source {
        if let Some(source) = self.from_files.get(path) {
            return source.clone();
        }
        match self.layers.merged().find_metadata(&grouped(path)) {
            Some(metadata) if is_environment(metadata) => {
                Source::Variable(names::variable(&path.split('.').collect::<Vec<_>>()))
            }
            Some(_) => Source::File(self.layers.file.clone()),
            None => Source::Default,
        }
    }
}

/// The two layers over the defaults, kept apart so each can be asked what it set.
struct Layers {
    file: String,
    toml: Figment,
    env: Figment,
}

impl Layers {
    fn read() -> Self {
        let file = std::env::var(CONFIG_VARIABLE).unwrap_or_else(|_| "tandem.toml".into());
        let env = Env::prefixed(PREFIX)
            // The suite's own variables, the one naming the file, and those Kubernetes injects
            // for a Service named `tandem` are not settings.
            .filter(|name| !name.starts_with("TEST_") && name != "CONFIG" && !names::is_service_link(name.as_str()))
            .map(|name| names::key_of_variable(name.as_str()).into());
        Self { toml: Figment::from(Grouped(Toml::file(&file))), env: Figment::from(Grouped(env)), file }
    }

    fn merged(&self) -> Figment {
        self.toml.clone().merge(self.env.clone())
    }

    /// Which of the two names a layer sets, and how that layer names them.
    fn sets(&self, key: &str, file_key: &str) -> Option<(bool, bool, Vec<String>)> {
        let in_env = (is_set(&self.env, key), is_set(&self.env, file_key));
        if in_env.0 || in_env.1 {
            let names = [key, file_key].map(|k| names::variable(&[k]));
            return Some((in_env.0, in_env.1, names.to_vec()));
        }
        let in_file = (is_set(&self.toml, key), is_set(&self.toml, file_key));
        (in_file.0 || in_file.1)
            .then(|| (in_file.0, in_file.1, vec![key.into(), format!("{file_key} in {}", self.file)]))
    }
}

impl Settings {
    /// Reads the layered settings from the process environment and refuses what cannot start.
    pub fn load() -> anyhow::Result<Self> {
        Ok(Self::load_sourced()?.settings)
    }

    /// [`Settings::load`], keeping where each value came from.
    pub fn load_sourced() -> anyhow::Result<Loaded> {
        let layers = Layers::read();
        let mut settings: Settings = layers.merged().extract().map_err(|e| explain(e, &layers))?;
        let from_files = read_secret_files(&mut settings, &layers)?;
        settings.empty_means_unset();
        settings.check()?;
        Ok(Loaded { settings, layers, from_files })
    }
}

/// Set, and not to the empty string (which means unset, as for every optional setting).
fn is_set(layer: &Figment, key: &str) -> bool {
    layer.find_value(&grouped(key)).is_ok_and(|value| value.as_str() != Some(""))
}

fn is_environment(metadata: &Metadata) -> bool {
    metadata.name.contains("environment variable")
}

/// A figment error in the operator's words: the variable or the file's key, and for a name
/// the service does not know, the closest one it does.
fn explain(error: figment::Error, layers: &Layers) -> anyhow::Error {
    let path = ungrouped(&error.path);
    let Kind::UnknownField(field, expected) = &error.kind else {
        let from_env = error.metadata.as_ref().is_some_and(is_environment);
        let name = if from_env { names::variable(&path) } else { format!("{} in {}", path.join("."), layers.file) };
        return anyhow::anyhow!("{name}: {}", error.kind);
    };
    // `path` ends at the table the name was found in (figment may or may not include the
    // field itself); the name's full key decides which layer wrote it. At the top, any setting
    // may be the one meant; in a version's table, its lifecycle's fields.
    let table: Vec<&str> = path.iter().copied().take_while(|p| p != field).collect();
    let known: Vec<&str> = if table.is_empty() { all_names().collect() } else { expected.to_vec() };
    let full = |name: &str| [table.as_slice(), &[name]].concat().join(".");
    let variable = |name: &str| names::variable(&full(name).split('.').collect::<Vec<_>>());
    let candidates = known.into_iter().filter(|name| *name != "versions");
    if layers.env.contains(&grouped(&full(field))) || layers.env.contains(&full(field)) {
        let known: Vec<String> = candidates.map(variable).collect();
        let typed = variable(field);
        unknown(&typed, names::closest(&typed, known.iter().map(String::as_str)))
    } else {
        let known: Vec<String> = candidates.map(full).collect();
        let suggestion = names::closest(&full(field), known.iter().map(String::as_str));
        unknown(&format!("{} in {}", full(field), layers.file), suggestion)
    }
}

fn unknown(typed: &str, suggestion: Option<&str>) -> anyhow::Error {
    match suggestion {
        Some(known) => anyhow::anyhow!("{typed} is not a setting; did you mean {known}?"),
        None => anyhow::anyhow!("{typed} is not a setting (the book's settings reference lists them)"),
    }
}

/// The settings whose value may instead be read from a file, as Docker and Kubernetes mount
/// secrets: the key, and the key naming its file.
const SECRET_FILES: [(&str, &str); 5] = [
    ("jwt_secret", "jwt_secret_file"),
    ("database_url", "database_url_file"),
    ("database_replica_url", "database_replica_url_file"),
    ("redis_url", "redis_url_file"),
    ("smtp_url", "smtp_url_file"),
];

/// Replaces each setting whose winning layer names a file with that file's content. Within one
/// layer, the value and its file both set is refused; a higher layer's either wins.
fn read_secret_files(settings: &mut Settings, layers: &Layers) -> anyhow::Result<BTreeMap<&'static str, Source>> {
    let mut from_files = BTreeMap::new();
    for (key, file_key) in SECRET_FILES {
        let path = match key {
            "jwt_secret" => settings.tokens.jwt_secret_file.take(),
            "database_url" => settings.database.database_url_file.take(),
            "database_replica_url" => settings.database.database_replica_url_file.take(),
            "smtp_url" => settings.notices.smtp_url_file.take(),
            _ => settings.redis.redis_url_file.take(),
        };
        let Some((value_set, file_set, names)) = layers.sets(key, file_key) else { continue };
        anyhow::ensure!(!(value_set && file_set), "{} and {} are both set; set one of them", names[0], names[1]);
        if !file_set {
            continue;
        }
        let path = path.filter(|p| !p.as_os_str().is_empty());
        let path = path.ok_or_else(|| anyhow::anyhow!("{} names no file", names[1]))?;
        let value = read_secret(&path).map_err(|why| anyhow::anyhow!("{}: {why}", names[1]))?;
        match key {
            "jwt_secret" => settings.tokens.jwt_secret = Some(SecretString::from(value)),
            "database_url" => settings.database.database_url = DatabaseUrl::new(value),
            "database_replica_url" => settings.database.database_replica_url = Some(DatabaseUrl::new(value)),
            "smtp_url" => settings.notices.smtp_url = Some(DatabaseUrl::new(value)),
            _ => settings.redis.redis_url = Some(DatabaseUrl::new(value)),
        }
        let source = if names[1].starts_with(PREFIX) {
            Source::Variable(names[1].clone())
        } else {
            Source::File(layers.file.clone())
        };
        from_files.insert(key, source);
    }
    Ok(from_files)
}

/// A secret file's content with one trailing newline trimmed. The errors name the file, never
/// what it holds.
fn read_secret(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {}", path.display(), plain(&e)))?;
    let mut text = String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))?;
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    if text.is_empty() {
        return Err(format!("{} is empty", path.display()));
    }
    Ok(text)
}

/// An I/O error's kind in words, without the OS error number.
fn plain(error: &std::io::Error) -> String {
    let text = error.to_string();
    text.split(" (os error").next().unwrap_or(&text).to_string()
}
