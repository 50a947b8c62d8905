//! How a setting is named where an operator writes it: `rate_limit` in `tandem.toml` is
//! `TANDEM_RATE_LIMIT` in the environment, and `versions.1.sunset_at` is `TANDEM_V1_SUNSET_AT`.

/// The prefix of every setting's variable.
pub const PREFIX: &str = "TANDEM_";

/// The key a variable sets, from its name without the prefix, in any case: `V1_SUNSET_AT` →
/// `versions.1.sunset_at`, `RATE_LIMIT` → `rate_limit`. Every `V<N>_<field>` goes to version N's
/// table, so that a misspelt field is reported against the lifecycle's own fields.
pub fn key_of_variable(name: &str) -> String {
    let key = name.to_ascii_lowercase();
    let lifecycle = key.strip_prefix('v').and_then(|rest| {
        let (number, field) = rest.split_at(rest.find(|c: char| !c.is_ascii_digit())?);
        let field = field.strip_prefix('_')?;
        (!number.is_empty() && !field.is_empty()).then(|| format!("versions.{number}.{field}"))
    });
    lifecycle.unwrap_or(key)
}

/// The variable that sets `path`: the inverse of [`key_of_variable`].
pub fn variable(path: &[&str]) -> String {
    match path {
        ["versions", number, field] => format!("{PREFIX}V{number}_{}", field.to_ascii_uppercase()),
        _ => format!("{PREFIX}{}", path.join("_").to_ascii_uppercase()),
    }
}

/// Whether `name` (past the prefix, any case) is one of the variables Kubernetes injects into
/// every pod beside a Service named `tandem` (service links): `SERVICE_HOST`, `SERVICE_PORT`,
/// `SERVICE_PORT_<NAME>`, `PORT`, `PORT_<N>_<PROTO>` and its `_ADDR`, `_PORT`, `_PROTO`. They
/// are not settings, and must not stop a start.
pub fn is_service_link(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    if ["SERVICE_HOST", "SERVICE_PORT", "PORT"].contains(&name.as_str()) {
        return true;
    }
    if let Some(port_name) = name.strip_prefix("SERVICE_PORT_") {
        return !port_name.is_empty();
    }
    let Some(rest) = name.strip_prefix("PORT_") else { return false };
    let mut parts = rest.splitn(3, '_');
    let (Some(number), Some(protocol), field) = (parts.next(), parts.next(), parts.next()) else { return false };
    number.parse::<u16>().is_ok()
        && ["TCP", "UDP", "SCTP"].contains(&protocol)
        && field.is_none_or(|f| ["ADDR", "PORT", "PROTO"].contains(&f))
}

/// The candidate closest to `name`, if it is close enough to be a typo of it.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    let (distance, best) = candidates
        .into_iter()
        .map(|candidate| (strsim::damerau_levenshtein(&name, &candidate.to_ascii_lowercase()), candidate))
        .min_by_key(|(distance, _)| *distance)?;
    // A third of the name past the prefix may be wrong (a missing `_AT`, a swapped letter), and
    // one letter always.
    let own = name.strip_prefix(&PREFIX.to_ascii_lowercase()).unwrap_or(&name).len();
    (distance <= (own / 3).max(1)).then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_variables_nest_under_their_version_in_any_case() {
        assert_eq!(key_of_variable("V1_DEPRECATED_AT"), "versions.1.deprecated_at");
        assert_eq!(key_of_variable("v12_brownouts"), "versions.12.brownouts");
        assert_eq!(key_of_variable("V1_DEPRECATED"), "versions.1.deprecated");
        assert_eq!(key_of_variable("VENDOR"), "vendor");
        assert_eq!(key_of_variable("V_SUNSET_AT"), "v_sunset_at");
        assert_eq!(key_of_variable("V1"), "v1");
    }

    #[test]
    fn kubernetes_service_links_are_told_from_typos() {
        for link in [
            "SERVICE_HOST",
            "SERVICE_PORT",
            "SERVICE_PORT_HTTP",
            "PORT",
            "PORT_80_TCP",
            "PORT_80_TCP_ADDR",
            "PORT_80_TCP_PORT",
            "port_8080_tcp_proto",
            "PORT_53_UDP",
            "PORT_9_SCTP_ADDR",
        ] {
            assert!(is_service_link(link), "{link}");
        }
        for typo in [
            "SERVICE",
            "SERVICE_PORT_",
            "PORTS",
            "PORT_80",
            "PORT_X_TCP",
            "PORT_80_TCP_HOST",
            "PORT_80_HTTP",
            "LISTEN_PORT",
        ] {
            assert!(!is_service_link(typo), "{typo}");
        }
    }

    #[test]
    fn variables_are_named_back_from_their_keys() {
        for name in ["V1_SUNSET_AT", "V12_BROWNOUTS", "RATE_LIMIT", "JWT_SECRET_FILE"] {
            let key = key_of_variable(name);
            assert_eq!(variable(&key.split('.').collect::<Vec<_>>()), format!("{PREFIX}{name}"));
        }
    }

    #[test]
    fn a_typo_finds_its_setting_and_nonsense_finds_none() {
        let name = |rest: &str| format!("{PREFIX}{rest}");
        let known = [name("V1_DEPRECATED_AT"), name("V1_SUNSET_AT"), name("RATE_LIMIT")];
        let suggest = |typed: &str| closest(typed, known.iter().map(String::as_str)).map(str::to_string);
        assert_eq!(suggest(&name("V1_DEPRECATED")), Some(name("V1_DEPRECATED_AT")));
        assert_eq!(suggest(&name("RATE_LIMT")), Some(name("RATE_LIMIT")));
        assert_eq!(suggest(&name("v1_sunset_at").to_ascii_lowercase()), Some(name("V1_SUNSET_AT")));
        assert_eq!(suggest(&name("SOMETHING_ELSE_ENTIRELY")), None);
        assert_eq!(closest(&name("FOO"), [name("LOG").as_str()]), None);
    }
}
