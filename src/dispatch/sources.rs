//! Where a request names its API version: the URI, `X-API-VERSION`, the vendor media type in
//! `Accept`, or `?version=`. Parsed without allocating.

use poem::http::{
    HeaderMap, HeaderName, StatusCode,
    header::{ACCEPT, AUTHORIZATION},
};

// Header names as parsed constants: a lookup by `&str` parses and lowercases the name first.
const API_VERSION_HEADER: HeaderName = HeaderName::from_static("x-api-version");
/// The tenant a request names; dispatch reads it first, authentication then checks it.
pub const TENANT_HEADER: HeaderName = HeaderName::from_static("x-tenant-id");

/// One place a version was named, and the raw value (which may be unsupported or junk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Uri,
    Header,
    MediaType,
    Query,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Uri => "URI",
            Source::Header => "X-API-VERSION header",
            Source::MediaType => "Accept media type",
            Source::Query => "version query parameter",
        }
    }

    /// The status for a version this source names that the service does not have.
    pub fn unsupported_status(self) -> StatusCode {
        match self {
            Source::Uri => StatusCode::NOT_FOUND,
            Source::MediaType => StatusCode::NOT_ACCEPTABLE,
            Source::Header | Source::Query => StatusCode::BAD_REQUEST,
        }
    }
}

/// `/api/v2/users/5` → `(Some(2), "/users/5")`; `/api/vx/…` → `(None, …)` (named, but junk).
pub fn from_uri(path: &str) -> Option<(Option<u16>, &str)> {
    let rest = path.strip_prefix("/api/v")?;
    let end = rest.find('/').unwrap_or(rest.len());
    let (number, tail) = rest.split_at(end);
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((number.parse().ok(), tail))
}

pub fn from_header(headers: &HeaderMap) -> Option<Option<u16>> {
    let value = headers.get(API_VERSION_HEADER)?;
    Some(value.to_str().ok().and_then(|v| v.trim().parse().ok()))
}

pub fn from_query(query: Option<&str>) -> Option<Option<u16>> {
    let value = query?.split('&').find_map(|pair| pair.strip_prefix("version="))?;
    Some(value.parse().ok())
}

/// A vendor media type in `Accept`: `application/vnd.<vendor>.<resource>.v<N>+json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VendorType<'a> {
    pub resource: &'a str,
    pub version: Option<u16>,
    /// The media type as the client wrote it, without parameters.
    pub essence: &'a str,
}

pub fn from_accept<'a>(headers: &'a HeaderMap, vendor: &str) -> Option<VendorType<'a>> {
    let accept = headers.get(ACCEPT)?.to_str().ok()?;
    accept.split(',').find_map(|range| {
        let essence = range.split(';').next()?.trim();
        let rest = essence.strip_prefix("application/vnd.")?.strip_prefix(vendor)?.strip_prefix('.')?;
        let rest = rest.strip_suffix("+json")?;
        let (resource, version) = rest.rsplit_once(".v")?;
        Some(VendorType { resource, version: version.parse().ok(), essence })
    })
}

/// The tenant a request acts in, as far as dispatch may know it before authentication: the
/// `X-Tenant-ID` header, else the token's `tenant` claim read without checking the signature.
/// Authentication later refuses what does not hold, so a forged claim picks a version for a
/// request that then gets 401 or 403, nothing more.
pub fn tenant_hint(headers: &HeaderMap) -> Option<String> {
    if let Some(tenant) = headers.get(TENANT_HEADER).and_then(|v| v.to_str().ok()) {
        return Some(tenant.to_string());
    }
    let token = headers.get(AUTHORIZATION)?.to_str().ok()?.strip_prefix("Bearer ")?;
    let payload = crate::encoding::base64url::decode(token.split('.').nth(1)?)?;
    #[derive(serde::Deserialize)]
    struct Claims {
        tenant: Option<String>,
    }
    serde_json::from_slice::<Claims>(&payload).ok()?.tenant
}

/// Whether `Accept` (absent = anything) allows a JSON answer.
pub fn accepts_json(headers: &HeaderMap, vendor_matched: bool) -> bool {
    let Some(accept) = headers.get(ACCEPT).and_then(|v| v.to_str().ok()) else { return true };
    vendor_matched
        || accept.split(',').any(|range| {
            let essence = range.split(';').next().unwrap_or("").trim();
            let refused = range.split(';').skip(1).any(|p| matches!(p.trim(), "q=0" | "q=0.0" | "q=0.00" | "q=0.000"));
            !refused
                && matches!(
                    essence.to_ascii_lowercase().as_str(),
                    "*/*" | "application/*" | "application/json" | "application/problem+json"
                )
        })
}

#[cfg(test)]
mod tests {
    use poem::http::HeaderValue;

    use super::*;

    #[test]
    fn uri_versions() {
        assert_eq!(from_uri("/api/v2/users/5"), Some((Some(2), "/users/5")));
        assert_eq!(from_uri("/api/v1"), Some((Some(1), "")));
        assert_eq!(from_uri("/api/v99999999/users"), Some((None, "/users")));
        assert_eq!(from_uri("/api/customers"), None);
        assert_eq!(from_uri("/users"), None);
    }

    #[test]
    fn query_and_header_versions() {
        assert_eq!(from_query(Some("page=1&version=2")), Some(Some(2)));
        assert_eq!(from_query(Some("version=x")), Some(None));
        assert_eq!(from_query(Some("page=1")), None);
        let mut headers = HeaderMap::new();
        assert_eq!(from_header(&headers), None);
        headers.insert("x-api-version", HeaderValue::from_static(" 2 "));
        assert_eq!(from_header(&headers), Some(Some(2)));
    }

    #[test]
    fn vendor_media_types() {
        let mut headers = HeaderMap::new();
        headers.insert("accept", HeaderValue::from_static("text/html, application/vnd.tandem.users.v2+json; q=0.9"));
        let vendor = from_accept(&headers, "tandem").unwrap();
        assert_eq!((vendor.resource, vendor.version), ("users", Some(2)));
        assert_eq!(vendor.essence, "application/vnd.tandem.users.v2+json");
        assert!(from_accept(&headers, "other").is_none());
        assert!(accepts_json(&headers, true));
        headers.insert("accept", HeaderValue::from_static("application/xml"));
        assert!(!accepts_json(&headers, false));
        headers.insert("accept", HeaderValue::from_static("application/xml, */*;q=0.1"));
        assert!(accepts_json(&headers, false));
    }
}
