//! Elements of a live version deprecated one at a time (an operation, a query parameter, a request
//! body field, a response field: the book's operators/elements.md), as declared in the settings and
//! checked at start against the version's served document: an entry that names what the version
//! does not have, repeats an id, or has a bad date refuses to start, naming the entry and the
//! reason.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::lifecycle::instant;
use crate::settings::DeprecationSettings;

/// What of an operation is deprecated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Element {
    Operation,
    /// A query parameter, by name.
    Parameter(String),
    /// A request body field, by JSON pointer.
    Field(String),
    /// A field of the resource answered, by JSON pointer: announced only.
    ResponseField(String),
}

impl Element {
    /// Every kind, as [`Element::kind`] names it.
    pub const KINDS: [&str; 4] = ["operation", "parameter", "field", "responseField"];

    /// As the catalogue names its kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Element::Operation => "operation",
            Element::Parameter(_) => "parameter",
            Element::Field(_) => "field",
            Element::ResponseField(_) => "responseField",
        }
    }

    /// The parameter's name or the field's pointer; `None` for an operation.
    pub fn name(&self) -> Option<&str> {
        match self {
            Element::Operation => None,
            Element::Parameter(name) | Element::Field(name) | Element::ResponseField(name) => Some(name),
        }
    }
}

/// One declared element of one version, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    /// Shared: the counts of every request that uses it name it without copying.
    pub id: std::sync::Arc<str>,
    pub version: u16,
    /// `GET`.
    pub method: String,
    /// As the version's route table names it: `/users/{id}`.
    pub template: String,
    /// As declared: `GET /api/v2/users`.
    pub operation: String,
    pub element: Element,
    pub deprecated_at: DateTime<Utc>,
    pub sunset_at: Option<DateTime<Utc>>,
    pub replacement: String,
    pub instruction: String,
    pub link: Option<String>,
}

/// What a request sends that an element may be: its query and, for an operation with a
/// deprecated field, its JSON body (`json_patch`: an RFC 6902 document).
pub struct Sent<'a> {
    pub query: Option<&'a str>,
    pub body: Option<&'a Value>,
    pub json_patch: bool,
}

impl Deprecation {
    /// Whether a request to this element's operation that sends `sent` uses it: the
    /// operation itself; a parameter present in the query, whatever its value; a field present
    /// in the body, `null` included (a JSON Patch uses it when an operation's `path` or
    /// `from` is the field or lies under it). A response field is never sent.
    pub fn used_by(&self, sent: &Sent<'_>) -> bool {
        match &self.element {
            Element::Operation => true,
            Element::Parameter(name) => sent.query.is_some_and(|query| {
                query.split('&').any(|pair| {
                    let key = pair.split('=').next().unwrap_or_default();
                    percent_encoding::percent_decode_str(key).decode_utf8().is_ok_and(|key| key == name.as_str())
                })
            }),
            Element::Field(pointer) => match sent.body {
                Some(Value::Array(operations)) if sent.json_patch => operations.iter().any(|operation| {
                    ["path", "from"].iter().filter_map(|key| operation[key].as_str()).any(|path| {
                        path == pointer || path.strip_prefix(pointer.as_str()).is_some_and(|r| r.starts_with('/'))
                    })
                }),
                Some(body) => body.pointer(pointer).is_some(),
                None => false,
            },
            Element::ResponseField(_) => false,
        }
    }

    /// Whether its headers are told now: from `deprecatedAt` until `sunsetAt`.
    pub fn told_at(&self, now: DateTime<Utc>) -> bool {
        now >= self.deprecated_at && self.sunset_at.is_none_or(|sunset| now < sunset)
    }

    /// Whether its sunset has come: a request that uses it is refused.
    pub fn removed_at(&self, now: DateTime<Utc>) -> bool {
        self.sunset_at.is_some_and(|sunset| now >= sunset)
    }
}

/// The longest `replacement` and `instruction`, in characters.
const REPLACEMENT_CHARS: usize = 200;
const INSTRUCTION_CHARS: usize = 500;

/// Checks version `version`'s declarations against `spec`, its OpenAPI document as built.
pub fn declared(version: u16, spec: &Value, entries: &[DeprecationSettings]) -> anyhow::Result<Vec<Deprecation>> {
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            check(version, spec, entry).map_err(|why| {
                let named = if entry.id.is_empty() { format!("entry {}", i + 1) } else { format!("`{}`", entry.id) };
                anyhow::anyhow!("TANDEM_V{version}_DEPRECATIONS ([[versions.{version}.deprecations]]) {named}: {why}")
            })
        })
        .collect()
}

/// Refuses a second element under an id another one (of any version) has.
pub fn refuse_duplicates<'a>(all: impl IntoIterator<Item = &'a Deprecation>) -> anyhow::Result<()> {
    let mut seen: Vec<&Deprecation> = Vec::new();
    for deprecation in all {
        if let Some(first) = seen.iter().find(|d| d.id == deprecation.id) {
            anyhow::bail!(
                "TANDEM_V{}_DEPRECATIONS: the id `{}` is declared twice (also for version {})",
                deprecation.version,
                deprecation.id,
                first.version
            );
        }
        seen.push(deprecation);
    }
    Ok(())
}

fn check(version: u16, spec: &Value, entry: &DeprecationSettings) -> anyhow::Result<Deprecation> {
    let id_ok = (1..=64).contains(&entry.id.len())
        && entry.id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    anyhow::ensure!(id_ok, "the id must be 1 to 64 of a-z, 0-9 and -");
    let (method, path) = entry
        .operation
        .split_once(' ')
        .ok_or_else(|| anyhow::anyhow!("operation {:?} is not \"METHOD /path\"", entry.operation))?;
    let server = spec["servers"][0]["url"].as_str().unwrap_or("");
    let template = path.strip_prefix(server).filter(|t| t.starts_with('/'));
    let operation = template.and_then(|t| spec["paths"][t].get(method.to_ascii_lowercase()));
    let (Some(template), Some(_), true) = (template, operation, method == method.to_ascii_uppercase()) else {
        anyhow::bail!("version {version} has no operation {:?}", entry.operation);
    };
    let element = element(entry)?;
    if super::announce::places(spec, method, template, &element).is_empty() {
        match &element {
            Element::Operation => unreachable!("the operation was found above"),
            Element::Parameter(name) => anyhow::bail!("{name:?} is not a query parameter of {}", entry.operation),
            Element::Field(pointer) => {
                anyhow::bail!("{pointer:?} is not a field of {}'s request body", entry.operation)
            }
            Element::ResponseField(pointer) => {
                anyhow::bail!("{pointer:?} is not a field of what {} answers", entry.operation)
            }
        }
    }
    let deprecated_at = instant("deprecatedAt", &entry.deprecated_at)?;
    let sunset_at = entry.sunset_at.as_deref().map(|raw| instant("sunsetAt", raw)).transpose()?;
    if let Some(sunset) = sunset_at {
        anyhow::ensure!(sunset > deprecated_at, "sunsetAt must be later than deprecatedAt");
    }
    anyhow::ensure!(
        entry.replacement.chars().count() <= REPLACEMENT_CHARS,
        "replacement is longer than {REPLACEMENT_CHARS} characters"
    );
    anyhow::ensure!(
        entry.instruction.chars().count() <= INSTRUCTION_CHARS,
        "instruction is longer than {INSTRUCTION_CHARS} characters"
    );
    if let Some(link) = &entry.link {
        let https = url::Url::parse(link).is_ok_and(|u| u.scheme() == "https" && u.host().is_some());
        anyhow::ensure!(https, "link {link:?} is not an https URL");
    }
    Ok(Deprecation {
        id: entry.id.as_str().into(),
        version,
        method: method.to_string(),
        template: template.to_string(),
        operation: entry.operation.clone(),
        element,
        deprecated_at,
        sunset_at,
        replacement: entry.replacement.clone(),
        instruction: entry.instruction.clone(),
        link: entry.link.clone(),
    })
}

/// At most one of `parameter`, `field` and `responseField`; none: the operation.
fn element(entry: &DeprecationSettings) -> anyhow::Result<Element> {
    let named = [
        entry.parameter.clone().map(Element::Parameter),
        entry.field.clone().map(Element::Field),
        entry.response_field.clone().map(Element::ResponseField),
    ];
    let mut named = named.into_iter().flatten();
    let element = named.next().unwrap_or(Element::Operation);
    anyhow::ensure!(named.next().is_none(), "name at most one of parameter, field and responseField");
    if let Element::Field(pointer) | Element::ResponseField(pointer) = &element {
        anyhow::ensure!(pointer.starts_with('/') && pointer.len() > 1, "{pointer:?} is not a JSON pointer (\"/age\")");
    }
    Ok(element)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_listed_as_it_is_named() {
        let one = || "x".to_string();
        let elements =
            [Element::Operation, Element::Parameter(one()), Element::Field(one()), Element::ResponseField(one())];
        assert_eq!(elements.map(|e| e.kind()), Element::KINDS);
    }

    fn spec() -> Value {
        serde_json::from_str(&crate::versions::all().into_iter().find(|v| v.number == 2).unwrap().document).unwrap()
    }

    fn entry(operation: &str) -> DeprecationSettings {
        DeprecationSettings {
            id: "offset-paging".into(),
            operation: operation.into(),
            deprecated_at: "2026-01-01T00:00:00Z".into(),
            replacement: "cursor".into(),
            instruction: "Page with cursor.".into(),
            ..Default::default()
        }
    }

    fn refused(entry: DeprecationSettings) -> String {
        format!("{:#}", declared(2, &spec(), &[entry]).unwrap_err())
    }

    #[test]
    fn each_kind_of_element_is_found_in_the_document() {
        let page = DeprecationSettings { parameter: Some("page".into()), ..entry("GET /api/v2/users") };
        let age = DeprecationSettings { id: "age".into(), field: Some("/age".into()), ..entry("POST /api/v2/users") };
        let shown = DeprecationSettings {
            id: "shown".into(),
            response_field: Some("/age".into()),
            ..entry("GET /api/v2/users")
        };
        let whole = DeprecationSettings { id: "whole".into(), ..entry("DELETE /api/v2/users/{id}") };
        let checked = declared(2, &spec(), &[page, age, shown, whole]).unwrap();
        let kinds: Vec<_> = checked.iter().map(|d| (d.element.kind(), d.element.name(), d.template.as_str())).collect();
        assert_eq!(
            kinds,
            [
                ("parameter", Some("page"), "/users"),
                ("field", Some("/age"), "/users"),
                ("responseField", Some("/age"), "/users"),
                ("operation", None, "/users/{id}"),
            ]
        );
    }

    #[test]
    fn a_bad_entry_is_refused_naming_it_and_why() {
        let unknown = refused(entry("GET /api/v2/nothing"));
        assert!(unknown.contains("`offset-paging`: version 2 has no operation \"GET /api/v2/nothing\""), "{unknown}");
        let parameter = refused(DeprecationSettings { parameter: Some("pag".into()), ..entry("GET /api/v2/users") });
        assert!(parameter.contains("\"pag\" is not a query parameter of GET /api/v2/users"), "{parameter}");
        let field = refused(DeprecationSettings { field: Some("/agee".into()), ..entry("POST /api/v2/users") });
        assert!(field.contains("\"/agee\" is not a field of POST /api/v2/users's request body"), "{field}");
        let date = refused(DeprecationSettings { deprecated_at: "soon".into(), ..entry("GET /api/v2/users") });
        assert!(date.contains("deprecatedAt=\"soon\" is not an RFC 3339 instant"), "{date}");
        let early = refused(DeprecationSettings {
            sunset_at: Some("2025-01-01T00:00:00Z".into()),
            ..entry("GET /api/v2/users")
        });
        assert!(early.contains("sunsetAt must be later than deprecatedAt"), "{early}");
        let two = refused(DeprecationSettings {
            parameter: Some("page".into()),
            field: Some("/age".into()),
            ..entry("GET /api/v2/users")
        });
        assert!(two.contains("at most one of"), "{two}");
        let id = refused(DeprecationSettings { id: "Offset Paging".into(), ..entry("GET /api/v2/users") });
        assert!(id.contains("the id must be"), "{id}");
        let link =
            refused(DeprecationSettings { link: Some("http://example.com".into()), ..entry("GET /api/v2/users") });
        assert!(link.contains("is not an https URL"), "{link}");
    }

    #[test]
    fn an_id_is_declared_once_across_versions() {
        let one = declared(2, &spec(), &[entry("GET /api/v2/users")]).unwrap();
        let again = declared(2, &spec(), &[entry("POST /api/v2/users")]).unwrap();
        let refused = refuse_duplicates(one.iter().chain(&again)).unwrap_err().to_string();
        assert!(refused.contains("the id `offset-paging` is declared twice"), "{refused}");
    }
}
