//! The values of a matched route's parameters, for routes matched outside poem's router (the
//! routes outside the versions, matched once by the layers): the handler takes them as a
//! [`Param`], as it would take poem's `Path`.

use poem::{FromRequest, Request, RequestBody, error::NotFoundError};

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
