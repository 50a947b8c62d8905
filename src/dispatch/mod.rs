//! Version dispatch: which version serves a request (URI, header, media type or query, else
//! the tenant's pin or the default), which route template it hits, and the rewrite of legacy
//! paths such as `/users` to `/api/v<N>/users`. What it knows of each version it reads from the
//! [`Registry`]; the route it matched travels with the request (its template in
//! [`RequestInfo`], its entry and operation in the [`Target`]), so no later step matches it
//! again: the operation is called directly.

pub mod pins;
pub mod sources;

use std::sync::Arc;

use poem::{
    Request,
    http::{Method, StatusCode, Uri},
};

use self::{pins::Pins, sources::Source};
use crate::{
    registry::{Registry, Version},
    routing::{endpoint::SharedEndpoint, table::RouteEntry},
    settings::VersionSettings,
    wire::{
        context::{RequestInfo, Resolved},
        error::{ApiError, Kind},
    },
};

pub struct Dispatch {
    registry: Arc<Registry>,
    vendor: String,
    /// Tenants pinned to a default version other than the registry's default, which the
    /// workbench's steering refresh writes.
    pins: Arc<Pins>,
}

/// Where dispatch sends a request.
pub enum Resolution<'a> {
    /// Not an API path (health, docs, problems) or unknown: the router decides.
    PassThrough,
    /// A version's OpenAPI document: public, but stamped with its version.
    Document {
        version: u16,
        rewritten: Option<Uri>,
    },
    Api(Target<'a>),
}

pub struct Target<'a> {
    pub version: u16,
    pub route: &'a RouteEntry,
    pub legacy: bool,
    /// The matched route's operation for the request's method, and the URI it answers: the
    /// path under `/api/v<N>` (a legacy path rewritten, a trailing slash trimmed), with the
    /// client's query.
    pub operation: &'a SharedEndpoint,
    pub relative: Uri,
    /// The vendor media type the client asked for, echoed as the response's Content-Type.
    pub vendor_type: Option<String>,
}

impl Dispatch {
    /// The registry of `versions` (oldest first) with their lifecycles from the settings, and
    /// dispatch over it.
    pub fn new(versions: &[Version], settings: &VersionSettings) -> anyhow::Result<Self> {
        Ok(Self::over(Arc::new(Registry::new(versions, settings)?), settings))
    }

    pub fn over(registry: Arc<Registry>, settings: &VersionSettings) -> Self {
        Self { registry, vendor: settings.vendor.clone(), pins: Arc::default() }
    }

    /// The pins dispatch consults, for the workbench to write.
    pub fn pins(&self) -> &Arc<Pins> {
        &self.pins
    }

    /// The version a request that names none gets: its tenant's pin, else the default.
    fn default_for(&self, req: &Request) -> u16 {
        let default = self.registry.default_version();
        self.pins.version_for(|| sources::tenant_hint(req.headers())).unwrap_or(default)
    }

    /// The version a path names by itself, no header read: `/api/v<N>/…`, or for a legacy path
    /// the oldest version that serves it.
    pub fn named_by_path(&self, path: &str) -> Option<u16> {
        if let Some((version, _)) = sources::from_uri(path) {
            return version;
        }
        self.registry.entries().find(|v| v.legacy.serves(path)).map(|v| v.number)
    }

    /// Resolves the request, recording in `info` what it learns as soon as it learns it, so
    /// that even an error names the version that answered.
    pub fn resolve(&self, req: &Request, info: &RequestInfo) -> Result<Resolution<'_>, ApiError> {
        let path = req.uri().path();
        let from_uri = sources::from_uri(path);
        if from_uri.is_none() && !self.registry.is_legacy_path(path) {
            return Ok(Resolution::PassThrough);
        }
        let resources = self.registry.resources();
        let vendor = sources::from_accept(req.headers(), &self.vendor);
        if vendor.is_some_and(|v| !resources.contains(&v.resource)) {
            return Err(ApiError::new(Kind::NotAcceptable).with_detail(format!(
                "application/vnd.{}.<{}>.v<N>+json",
                self.vendor,
                resources.join("|")
            )));
        }
        let named = [
            (Source::Uri, from_uri.map(|(v, _)| v)),
            (Source::Header, sources::from_header(req.headers())),
            (Source::MediaType, vendor.map(|v| v.version)),
            (Source::Query, sources::from_query(req.uri().query())),
        ];
        let version = self.agree(&named)?.unwrap_or_else(|| self.default_for(req));
        let entry = self.registry.entry(version).expect("agree returns supported versions");
        // Written once, as soon as dispatch has decided, so that even an error names the version.
        let decided = |legacy: bool, route: Option<&RouteEntry>| {
            let _ = info.resolved.set(Resolved { version, route: route.map(|r| r.template.clone()), legacy });
        };

        let (relative, legacy) = match from_uri {
            Some((_, rest)) => (rest.to_string(), false),
            None => match entry.legacy.relative(path) {
                Some(relative) => (relative, true),
                None => {
                    decided(false, None);
                    return Err(ApiError::new(Kind::NotFound));
                }
            },
        };
        // The spec writes `/api/customers/branch/`; the router knows paths without the slash.
        let trimmed = relative.len() > 1 && relative.ends_with('/');
        let relative = if trimmed { relative[..relative.len() - 1].to_string() } else { relative };
        // Public documents of a version: its OpenAPI description, its change catalogue and the
        // catalogue of its deprecated elements.
        let listed = relative == "/deprecations" || relative.starts_with("/deprecations/");
        if relative == "/openapi.json" || (relative == "/changes" && entry.catalogue.is_some()) || listed {
            decided(legacy, None);
            let rewritten = (legacy || trimmed).then(|| rewrite(req.uri(), version, &relative));
            return Ok(Resolution::Document { version, rewritten });
        }
        let route = entry.routes.find(&relative);
        decided(legacy, route);
        let route = route.ok_or_else(|| ApiError::new(Kind::NotFound))?;
        let Some(operation) = route.operation(req.method()) else {
            let err =
                ApiError::new(Kind::MethodNotAllowed).with_detail(&route.allow).with_header("allow", &route.allow);
            return Err(err);
        };
        if !sources::accepts_json(req.headers(), vendor.is_some()) {
            return Err(ApiError::new(Kind::NotAcceptable)
                .with_detail(format!("application/json, application/vnd.{}.<resource>.v<N>+json", self.vendor)));
        }
        let vendor_type = vendor.filter(|_| *req.method() != Method::DELETE).map(|v| v.essence.to_string());
        let relative = with_query(&relative, req.uri());
        Ok(Resolution::Api(Target { version, route, legacy, operation: operation.endpoint(), relative, vendor_type }))
    }

    /// The one version every source agrees on; `None` when none names one.
    fn agree(&self, named: &[(Source, Option<Option<u16>>)]) -> Result<Option<u16>, ApiError> {
        let mut chosen: Option<(Source, u16)> = None;
        for (source, value) in named {
            let Some(value) = value else { continue };
            let supported = value.filter(|v| self.registry.entry(*v).is_some());
            let Some(version) = supported else {
                return Err(ApiError::new(Kind::UnsupportedApiVersion)
                    .with_status(source.unsupported_status())
                    .with_detail(self.registry.supported.clone()));
            };
            match chosen {
                Some((first, v)) if v != version => {
                    return Err(ApiError::new(Kind::AmbiguousApiVersion)
                        .with_status(StatusCode::BAD_REQUEST)
                        .with_detail(format!("{} says {v}, {} says {version}", first.name(), source.name())));
                }
                _ => chosen = Some((*source, version)),
            }
        }
        Ok(chosen.map(|(_, v)| v))
    }
}

/// `relative` with `uri`'s query.
fn with_query(relative: &str, uri: &Uri) -> Uri {
    let target = match uri.query() {
        Some(query) => Uri::try_from(format!("{relative}?{query}")),
        None => Uri::try_from(relative),
    };
    target.unwrap_or_else(|_| uri.clone())
}

fn rewrite(uri: &Uri, version: u16, relative: &str) -> Uri {
    let target = match uri.query() {
        Some(query) => format!("/api/v{version}{relative}?{query}"),
        None => format!("/api/v{version}{relative}"),
    };
    target.parse().unwrap_or_else(|_| uri.clone())
}
