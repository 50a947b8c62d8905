//! CORS for the origins in `TANDEM_CORS_ORIGINS`; off when it is unset. poem's `Cors` turns
//! every error of the layers inside it into poem's own plain-text response, so this lives in
//! the boundary: preflights are answered before authentication, and every response to an
//! allowed origin, errors included, carries the headers a browser needs to read it.

use poem::{
    Request, Response,
    http::{HeaderValue, Method, StatusCode, header},
};

const ALLOW_METHODS: &str = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
const ALLOW_HEADERS: &str = "Authorization, Content-Type, Accept, Accept-Language, Idempotency-Key, If-Match, \
     If-None-Match, X-API-VERSION, X-Tenant-ID, X-Correlation-ID, X-API-Sunset-Rehearsal, X-API-Dry-Run";
const EXPOSE_HEADERS: &str = "Location, ETag, Link, X-Total-Count, X-Correlation-ID, Retry-After, Deprecation, \
     Sunset, API-Version, API-Supported-Versions, API-Deprecated-Versions, Idempotent-Replayed, RateLimit-Limit, \
     RateLimit-Remaining, RateLimit-Reset, Content-Language, X-API-Dry-Run";
/// Browsers may reuse a preflight this long (seconds).
const MAX_AGE: &str = "600";

/// The allowed origins, as `scheme://host[:port]`.
#[derive(Clone, Debug, Default)]
pub struct Cors {
    origins: Vec<String>,
}

impl Cors {
    /// Parses `TANDEM_CORS_ORIGINS` (comma-separated); an entry that is not an origin is an error.
    pub fn parse(setting: Option<&str>) -> anyhow::Result<Self> {
        let mut origins = Vec::new();
        for entry in setting.unwrap_or("").split(',').map(str::trim).filter(|e| !e.is_empty()) {
            anyhow::ensure!(
                is_origin(entry),
                "TANDEM_CORS_ORIGINS: {entry:?} is not an origin (scheme://host[:port], no path)"
            );
            origins.push(entry.to_ascii_lowercase());
        }
        Ok(Self { origins })
    }

    /// The request's `Origin` when it is one of ours.
    pub fn allowed_origin(&self, req: &Request) -> Option<HeaderValue> {
        let origin = req.headers().get(header::ORIGIN)?;
        let text = origin.to_str().ok()?.to_ascii_lowercase();
        self.origins.contains(&text).then(|| origin.clone())
    }

    /// The answer to a preflight from an allowed origin, or `None` if `req` is not one.
    pub fn preflight(&self, req: &Request, origin: &HeaderValue) -> Option<Response> {
        if req.method() != Method::OPTIONS || !req.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD) {
            return None;
        }
        let response = Response::builder()
            .status(StatusCode::NO_CONTENT)
            .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone())
            .header(header::ACCESS_CONTROL_ALLOW_METHODS, ALLOW_METHODS)
            .header(header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOW_HEADERS)
            .header(header::ACCESS_CONTROL_MAX_AGE, MAX_AGE)
            .header(header::VARY, "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
            .finish();
        Some(response)
    }

    /// The headers of an actual response to an allowed origin.
    pub fn decorate(response: &mut Response, origin: HeaderValue) {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSE_HEADERS));
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
}

/// `scheme://host[:port]` with an http(s) scheme and nothing after the authority.
fn is_origin(entry: &str) -> bool {
    let Some((scheme, authority)) = entry.split_once("://") else { return false };
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            if port.parse::<u16>().is_err() {
                return false;
            }
            host
        }
        _ => authority,
    };
    matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https")
        && !host.is_empty()
        && host.chars().all(|c| c.is_ascii_alphanumeric() || "-.[]:".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists are the headers the reference names (`wire::headers`), in its order.
    #[test]
    fn the_lists_are_the_documented_headers() {
        use crate::wire::headers::{REQUEST, RESPONSE, cors_list};
        assert_eq!(ALLOW_HEADERS, cors_list(REQUEST));
        assert_eq!(EXPOSE_HEADERS, cors_list(RESPONSE));
    }

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        for good in ["https://app.example.com", "http://localhost:3000", "HTTPS://App.Example.com"] {
            assert!(is_origin(good), "{good}");
        }
        for bad in ["app.example.com", "https://app.example.com/", "https://a.com/path", "ftp://a.com", "https://", "*"]
        {
            assert!(!is_origin(bad), "{bad}");
        }
        assert!(is_origin("http://[::1]:8080"));
        assert!(!is_origin("https://a.com:notaport"));
    }

    #[test]
    fn an_entry_that_is_not_an_origin_is_refused() {
        let err = Cors::parse(Some("https://ok.example, ok.example")).unwrap_err();
        assert!(err.to_string().contains("\"ok.example\" is not an origin"), "{err}");
        assert_eq!(Cors::parse(Some(" https://A.example , ")).unwrap().origins, ["https://a.example"]);
        assert!(Cors::parse(None).unwrap().origins.is_empty());
    }
}
