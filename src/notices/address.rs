//! Where a notice may go (the book's clients/notices.md): only a public address, unless the
//! operator allow-lists its host (`TANDEM_NOTICES_ALLOW_HOSTS`). A URL is checked when it is
//! registered (its host resolved, every address checked), and the address each notice is sent to is
//! checked again as it is dialled: the resolver that connects is the one that checks, so a name
//! that resolves elsewhere later (DNS rebinding) reaches nothing it may not.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::Host;

use crate::core::endpoint_url::EndpointUrl;

/// Hosts the operator allows beyond the public internet (loopback receivers in tests, an
/// internal hook relay), by name or address, as `TANDEM_NOTICES_ALLOW_HOSTS` lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList(Vec<String>);

impl AllowList {
    pub fn parse(raw: Option<&str>) -> Self {
        let hosts = raw.unwrap_or("").split(',').map(|h| h.trim().trim_matches(['[', ']']).to_ascii_lowercase());
        Self(hosts.filter(|h| !h.is_empty()).collect())
    }

    /// Whether `host` (a name, or an address as a URL writes it) is allowed wherever it is.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.trim_matches(['[', ']']).to_ascii_lowercase();
        self.0.contains(&host)
    }
}

/// Why a URL is not taken (one that does not even read as a URL is refused by
/// [`EndpointUrl::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not `https` (and its host not allow-listed).
    NotHttps,
    /// Its host is, or resolves to, an address notices may not reach.
    Internal,
    /// Its host does not resolve.
    Unresolved,
}

/// Whether a notice may never be sent to `ip`: loopback, private, link-local (cloud metadata
/// included), CGNAT, documentation, benchmarking, multicast, reserved and unspecified
/// addresses, and for IPv6 the same, unique-local, NAT64 and IPv4 written inside IPv6.
pub fn refused(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn refused_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    a == 0                                   // "this network"
        || a == 10                           // private
        || (a == 100 && (64..128).contains(&b)) // CGNAT
        || a == 127                          // loopback
        || (a == 169 && b == 254)            // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b)) // private
        || (a == 192 && b == 0 && (c == 0 || c == 2)) // protocol assignments, documentation
        || (a == 192 && b == 168)            // private
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113)  // documentation
        || a >= 224 // multicast, reserved, broadcast
}

fn refused_v6(ip: Ipv6Addr) -> bool {
    // An IPv4 address written inside IPv6 (mapped `::ffff:a.b.c.d`, or the old compatible form)
    // is judged as the IPv4 address it is.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return refused_v4(v4);
    }
    let segments = ip.segments();
    let v4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    if segments[..6] == [0; 6] && !ip.is_unspecified() && !ip.is_loopback() {
        return refused_v4(v4(segments[6], segments[7]));
    }
    // 6to4 (2002::/16) reaches the IPv4 address in its next 32 bits; Teredo (2001::/32) goes
    // through the server in its next 32 to the client in its last 32, inverted (RFC 4380).
    if segments[0] == 0x2002 {
        return refused_v4(v4(segments[1], segments[2]));
    }
    if segments[0] == 0x2001 && segments[1] == 0 {
        return refused_v4(v4(segments[2], segments[3])) || refused_v4(v4(!segments[6], !segments[7]));
    }
    ip.is_unspecified()
        || ip.is_loopback()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local
        || (segments[0] & 0xffc0) == 0xfe80 // link-local
        || (segments[0] & 0xff00) == 0xff00 // multicast
        || (segments[0] == 0x64 && segments[1] == 0xff9b) // NAT64
        || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
}

/// Whether notices may be sent to `url`: `https` to a public host, or `http(s)` to an
/// allow-listed one. Host forms are read as browsers read them (`https://2130706433/` and
/// `https://0x7f.1/` are 127.0.0.1); a name is resolved, and every address it gives checked.
pub async fn check(url: &EndpointUrl, allow: &AllowList) -> Result<(), Refused> {
    let allowed = allow.allows(url.url().host_str().unwrap_or_default());
    match url.scheme() {
        "https" => {}
        "http" if allowed => {}
        _ => return Err(Refused::NotHttps),
    }
    if allowed {
        return Ok(());
    }
    match url.host() {
        Some(Host::Ipv4(ip)) if refused_v4(ip) => Err(Refused::Internal),
        Some(Host::Ipv6(ip)) if refused_v6(ip) => Err(Refused::Internal),
        Some(Host::Domain(domain)) => {
            let addresses = resolve(domain).await.ok_or(Refused::Unresolved)?;
            if addresses.iter().any(|a| refused(a.ip())) { Err(Refused::Internal) } else { Ok(()) }
        }
        _ => Ok(()),
    }
}

/// The addresses a name resolves to; `None` when it resolves to none.
async fn resolve(domain: &str) -> Option<Vec<SocketAddr>> {
    let found: Vec<SocketAddr> = tokio::net::lookup_host((domain, 443)).await.ok()?.collect();
    (!found.is_empty()).then_some(found)
}

/// The resolver notices are sent through: a name's addresses, less those notices may not
/// reach (unless its host is allow-listed). The connection is made to what it returns.
pub struct CheckedResolver {
    pub allow: AllowList,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let allowed = self.allow.allows(&host);
        Box::pin(async move {
            let found = resolve(&host).await.ok_or("the host does not resolve")?;
            let permitted: Vec<SocketAddr> = found.into_iter().filter(|a| allowed || !refused(a.ip())).collect();
            if permitted.is_empty() {
                return Err("the host resolves to no address notices may reach".into());
            }
            Ok(Box::new(permitted.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether a URL's host, written as an address, may be reached (a name is the resolver's to
/// check): checked again before each notice is sent.
pub fn literal_refused(url: &EndpointUrl, allow: &AllowList) -> bool {
    if allow.allows(url.url().host_str().unwrap_or_default()) {
        return false;
    }
    match url.host() {
        Some(Host::Ipv4(ip)) => refused_v4(ip),
        Some(Host::Ipv6(ip)) => refused_v6(ip),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_refused_and_public_ones_taken() {
        for refused_one in [
            "0.0.0.0",
            "10.1.2.3",
            "100.64.0.1",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "64:ff9b::7f00:1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "2002:7f00:1::",
            "2002:a00:1::1",
            "2002:c0a8:101::",
            "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo to 127.0.0.1
            "2001:0:a00:1:8000:63bf:3fff:fdd2",     // Teredo through 10.0.0.1
        ] {
            assert!(refused(refused_one.parse().unwrap()), "{refused_one}");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "2002:808:808::1",
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo to 8.8.8.8
        ] {
            assert!(!refused(public.parse().unwrap()), "{public}");
        }
    }

    #[tokio::test]
    async fn urls_are_checked_as_browsers_read_their_hosts() {
        let none = AllowList::default();
        for (url, why) in [
            ("http://93.184.216.34/hook", Refused::NotHttps),
            ("https://127.0.0.1/hook", Refused::Internal),
            ("https://2130706433/hook", Refused::Internal),
            ("https://0x7f.1/hook", Refused::Internal),
            ("https://0177.0.0.1/hook", Refused::Internal),
            ("https://[::ffff:127.0.0.1]/hook", Refused::Internal),
            ("https://[::1]:8443/hook", Refused::Internal),
            ("https://169.254.169.254/latest/meta-data", Refused::Internal),
            ("https://localhost/hook", Refused::Internal),
            ("https://[2002:7f00:1::]/hook", Refused::Internal),
        ] {
            let parsed = EndpointUrl::parse(url).unwrap();
            assert_eq!(check(&parsed, &none).await.unwrap_err(), why, "{url}");
        }
        let url = |raw: &str| EndpointUrl::parse(raw).unwrap();
        assert!(check(&url("https://93.184.216.34/hook"), &none).await.is_ok());
        let loopback = AllowList::parse(Some("127.0.0.1, [::1]"));
        assert!(check(&url("http://127.0.0.1:9/hook"), &loopback).await.is_ok());
        assert!(check(&url("https://[::1]/hook"), &loopback).await.is_ok());
    }
}
