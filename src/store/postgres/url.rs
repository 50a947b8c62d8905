//! A PostgreSQL URL as libpq takes it (the book's operators/fleet.md): one or several hosts, tried
//! in order, and `target_session_attrs`, the kind of node to keep. Neither driver takes it whole
//! (sqlx reads one host and ignores the attribute), so it is split here into one single-host URL
//! per host, which both drivers read, and the attribute, which `hosts` enforces.

use std::fmt;

/// Which node a connection may stay on (`target_session_attrs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wants {
    /// Any node that answers (`any`, the default).
    Any,
    /// A node that takes writes (`read-write`, `primary`).
    Writable,
    /// A node that takes no writes (`read-only`).
    ReadOnly,
    /// A node in recovery: a streaming replica (`standby`).
    Standby,
    /// A standby if one answers, else any node (`prefer-standby`).
    PreferStandby,
}

/// What a node said about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// `pg_is_in_recovery()`.
    pub standby: bool,
    /// `transaction_read_only` (a standby, a demoted primary, a database set read-only).
    pub read_only: bool,
}

impl Wants {
    /// Whether a connection may stay on `node`. `PreferStandby` takes any node here; the
    /// preference is in the order hosts are tried (`hosts`).
    pub fn accepts(self, node: Node) -> bool {
        match self {
            Wants::Any | Wants::PreferStandby => true,
            Wants::Writable => !node.read_only,
            Wants::ReadOnly => node.read_only,
            Wants::Standby => node.standby,
        }
    }
}

/// Which URL is read: they take different `target_session_attrs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `TANDEM_DATABASE_URL`: written to.
    Primary,
    /// `TANDEM_DATABASE_REPLICA_URL`: lists read from it.
    Replica,
}

impl Role {
    /// The variable that sets the URL.
    pub fn variable(self) -> &'static str {
        match self {
            Role::Primary => "TANDEM_DATABASE_URL",
            Role::Replica => "TANDEM_DATABASE_REPLICA_URL",
        }
    }
}

/// A URL split into its hosts.
#[derive(Clone)]
pub struct PgUrl {
    /// One URL per host, in the order given, each without `target_session_attrs`.
    pub hosts: Vec<String>,
    pub wants: Wants,
}

/// The parameters both drivers honour as given (`target_session_attrs` is ours). Anything else
/// would be silently ignored by one of them, so it refuses to start.
const PASSED_ON: [&str; 10] = [
    "sslmode",
    "application_name",
    "options",
    "user",
    "password",
    "dbname",
    "host",
    "hostaddr",
    "port",
    "statement-cache-capacity",
];

/// Why a URL cannot be used, in words that name the parameter (the caller names the variable).
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PgUrl {
    pub fn parse(url: &str, role: Role) -> Result<PgUrl, Refused> {
        fn refuse<T>(why: String) -> Result<T, Refused> {
            Err(Refused(why))
        }
        let Some((scheme, rest)) = url.split_once("://") else { return refuse("is not a postgres:// URL".into()) };
        let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = before_query.find('/').map_or((before_query, ""), |i| before_query.split_at(i));
        let (userinfo, hostlist) = match authority.rfind('@') {
            Some(at) => (&authority[..=at], &authority[at + 1..]),
            None => ("", authority),
        };
        let mut wants = Wants::Any;
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if name == "target_session_attrs" {
                wants = match (role, value) {
                    (_, "any") => Wants::Any,
                    (Role::Primary, "read-write" | "primary") => Wants::Writable,
                    (Role::Replica, "read-only") => Wants::ReadOnly,
                    (Role::Replica, "standby") => Wants::Standby,
                    (Role::Replica, "prefer-standby") => Wants::PreferStandby,
                    (Role::Primary, _) => {
                        return refuse(format!(
                            "target_session_attrs={value} is not taken here (any, read-write or primary)"
                        ));
                    }
                    (Role::Replica, _) => {
                        return refuse(format!(
                            "target_session_attrs={value} is not taken here (any, read-only, standby or prefer-standby)"
                        ));
                    }
                };
                continue;
            }
            if !PASSED_ON.contains(&name) {
                return refuse(format!(
                    "the parameter {name} is not one Tandem honours (it takes target_session_attrs, {})",
                    PASSED_ON.join(", ")
                ));
            }
            if name == "sslmode" && !matches!(value, "disable" | "allow" | "prefer") {
                return refuse(format!("sslmode={value} needs TLS, which this build does not connect with"));
            }
            if matches!(name, "host" | "hostaddr" | "port") && value.contains(',') {
                return refuse(format!("{name}={value}: write several hosts in the URL itself (a:5432,b:5432)"));
            }
            kept.push(pair);
        }
        let query = if kept.is_empty() { String::new() } else { format!("?{}", kept.join("&")) };
        let hosts = hostlist
            .split(',')
            .map(|host| {
                if host.is_empty() && hostlist.contains(',') {
                    return refuse("names an empty host in its host list".into());
                }
                Ok(format!("{scheme}://{userinfo}{host}{path}{query}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PgUrl { hosts, wants })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> PgUrl {
        PgUrl::parse(url, Role::Primary).unwrap()
    }

    #[test]
    fn several_hosts_become_one_url_each_in_order() {
        let url =
            parse("postgres://app:s%40cret@db-a:5432,db-b:6432/tandem?target_session_attrs=read-write&sslmode=prefer");
        assert_eq!(
            url.hosts,
            [
                "postgres://app:s%40cret@db-a:5432/tandem?sslmode=prefer",
                "postgres://app:s%40cret@db-b:6432/tandem?sslmode=prefer"
            ]
        );
        assert_eq!(url.wants, Wants::Writable);
        assert_eq!(parse("postgresql://[::1]:5432,db/x").hosts, ["postgresql://[::1]:5432/x", "postgresql://db/x"]);
    }

    #[test]
    fn one_host_and_socket_forms_pass_as_they_are() {
        assert_eq!(parse("postgres://app@db/tandem").hosts, ["postgres://app@db/tandem"]);
        assert_eq!(parse("postgres://app@db").hosts, ["postgres://app@db"]);
        assert_eq!(parse("postgres:///tandem?host=/run/postgresql").hosts, ["postgres:///tandem?host=/run/postgresql"]);
        assert_eq!(parse("postgres://db/x?target_session_attrs=primary").wants, Wants::Writable);
        assert_eq!(parse("postgres://db/x?target_session_attrs=any").wants, Wants::Any);
    }

    #[test]
    fn each_url_takes_its_own_attributes() {
        let replica =
            |attrs: &str| PgUrl::parse(&format!("postgres://r/x?target_session_attrs={attrs}"), Role::Replica);
        assert_eq!(replica("standby").unwrap().wants, Wants::Standby);
        assert_eq!(replica("read-only").unwrap().wants, Wants::ReadOnly);
        assert_eq!(replica("prefer-standby").unwrap().wants, Wants::PreferStandby);
        assert!(replica("read-write").err().unwrap().0.contains("target_session_attrs=read-write is not taken"));
        let primary = PgUrl::parse("postgres://p/x?target_session_attrs=standby", Role::Primary).err().unwrap();
        assert!(primary.0.contains("target_session_attrs=standby is not taken here (any, read-write or primary)"));
    }

    #[test]
    fn what_the_drivers_would_ignore_is_refused_by_name() {
        let refused = |url: &str| PgUrl::parse(url, Role::Primary).err().unwrap().0;
        assert!(refused("postgres://db/x?connect_timeout=3").starts_with("the parameter connect_timeout is not one"));
        assert!(refused("postgres://db/x?sslmode=require").starts_with("sslmode=require needs TLS"));
        assert!(refused("postgres://db/x?host=a,b").contains("several hosts"));
        assert!(refused("postgres://a,,b/x").contains("empty host"));
        assert!(refused("db:5432").contains("not a postgres:// URL"));
    }

    #[test]
    fn a_node_is_kept_when_it_is_what_the_url_asks_for() {
        let primary = Node { standby: false, read_only: false };
        let demoted = Node { standby: false, read_only: true };
        let standby = Node { standby: true, read_only: true };
        assert!(Wants::Writable.accepts(primary) && !Wants::Writable.accepts(demoted));
        assert!(!Wants::Writable.accepts(standby));
        assert!(Wants::Standby.accepts(standby) && !Wants::Standby.accepts(demoted));
        assert!(Wants::ReadOnly.accepts(demoted) && !Wants::ReadOnly.accepts(primary));
        assert!(Wants::Any.accepts(demoted) && Wants::PreferStandby.accepts(primary));
    }
}
