//! The values of a matched route's parameters: poem's router matches no route, so handlers
//! take them from here. The routes outside the versions (matched once by the layers) take them
//! by position, as a [`Param`] or [`Params`], and a value that does not decode to UTF-8 means
//! the route did not match (404). A version's operations take them by name, as a
//! [`RouteParam`] documented as poem-openapi's `Path` is, and such a value is missing (400, as
//! poem-openapi answers).

use std::{ops::Deref, sync::Arc};

use poem::{FromRequest, Request, RequestBody, error::NotFoundError};
use poem_openapi::{
    ApiExtractor, ApiExtractorType, ExtractParamOptions,
    error::ParsePathError,
    registry::{MetaParamIn, MetaSchemaRef, Registry},
    types::ParseFromParameter,
};

/// A matched route's parameter values, percent-decoded, in the order its path names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathParams(pub Vec<String>);

/// The matched route's first parameter (`:slug` of `/problems/:slug`).
pub struct Param(pub String);

impl<'a> FromRequest<'a> for Param {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        let first = req.extensions().get::<PathParams>().and_then(|params| params.0.first());
        first.cloned().map(Param).ok_or_else(|| NotFoundError.into())
    }
}

/// Every parameter of the matched route, in the order its path names them
/// (`:tenant` and `:subject` of `/admin/clients/:tenant/:subject/guide`).
pub struct Params(pub Vec<String>);

impl<'a> FromRequest<'a> for Params {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        let params = req.extensions().get::<PathParams>();
        params.map(|p| Params(p.0.clone())).ok_or_else(|| NotFoundError.into())
    }
}

/// The path parameters of the operation a request is handed to, by name, read from its path at
/// the positions its template names them and percent-decoded; `None` for one that does not
/// decode to UTF-8 (its [`RouteParam`] then answers as poem's `Path` does for a missing one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteValues(Vec<(Arc<str>, Option<String>)>);

impl RouteValues {
    /// `names` in the order of their positions, as a template gives them.
    pub fn read(path: &str, names: &[(usize, Arc<str>)]) -> Self {
        let mut segments = path.split('/').enumerate();
        let mut value = |position: usize| {
            let (_, segment) = segments.find(|(at, _)| *at == position)?;
            percent_encoding::percent_decode_str(segment).decode_utf8().ok().map(|v| v.into_owned())
        };
        Self(names.iter().map(|(position, name)| (name.clone(), value(*position))).collect())
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| **n == *name).and_then(|(_, value)| value.as_deref())
    }
}

/// A path parameter of an operation (`id` of `/users/{id}`): documented as poem-openapi's
/// `Path` documents it, its value read from the route dispatch matched ([`RouteValues`]), not
/// from poem's router, which never sees the request.
pub struct RouteParam<T>(pub T);

impl<T> Deref for RouteParam<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<'a, T: ParseFromParameter> ApiExtractor<'a> for RouteParam<T> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::Parameter];
    const PARAM_IS_REQUIRED: bool = T::IS_REQUIRED;

    type ParamType = T;
    type ParamRawType = T::RawValueType;

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn param_in() -> Option<MetaParamIn> {
        Some(MetaParamIn::Path)
    }

    fn param_schema_ref() -> Option<MetaSchemaRef> {
        Some(T::schema_ref())
    }

    fn param_raw_type(&self) -> Option<&Self::ParamRawType> {
        self.0.as_raw_value()
    }

    async fn from_request(
        request: &'a Request,
        _body: &mut RequestBody,
        options: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        let value = request.extensions().get::<RouteValues>().and_then(|values| values.get(options.name));
        let value = match (value, &options.default_value) {
            (None, Some(default)) => return Ok(Self(default())),
            (value, _) => value,
        };
        ParseFromParameter::parse_from_parameters(value)
            .map(Self)
            .map_err(|err| ParsePathError { name: options.name, reason: err.into_message() }.into())
    }
}
