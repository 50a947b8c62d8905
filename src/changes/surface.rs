//! An older version's declared surface: its operations as poem-openapi declarations, for its
//! OpenAPI document and for its own parameter rules, each answered by the newer version through
//! the changes ([`Onward`]). Only the wire shapes that differ are the older version's own.

use std::{marker::PhantomData, sync::Arc};

use poem::{FromRequest, IntoResponse, Request, RequestBody, Response};
use poem_openapi::{
    ApiExtractor, ApiExtractorType, ApiResponse, ExtractParamOptions,
    registry::{MetaRequest, MetaResponses, Registry},
};

use super::through::Through;

/// The request, on its way to the newer version: a declared operation's whole body.
pub struct Onward {
    request: Request,
    through: Arc<Through>,
}

impl<'a> FromRequest<'a> for Onward {
    async fn from_request(req: &'a Request, body: &mut RequestBody) -> poem::Result<Self> {
        let through =
            req.extensions().get::<Arc<Through>>().cloned().expect("an older surface is served with its Through");
        let mut request =
            Request::builder().method(req.method().clone()).uri(req.uri().clone()).version(req.version()).finish();
        *request.headers_mut() = req.headers().clone();
        *request.extensions_mut() = req.extensions().clone();
        request.set_body(body.take()?);
        Ok(Self { request, through })
    }
}

impl Onward {
    /// The newer version's answer, as the older version gives it.
    pub async fn answer<R>(self) -> poem::Result<Answer<R>> {
        let response = self.through.forward(self.request).await?;
        Ok(Answer { response, _shape: PhantomData })
    }
}

/// An answer documented as `R`, the older version's wire shape.
pub struct Answer<R> {
    response: Response,
    _shape: PhantomData<R>,
}

impl<R: ApiResponse> ApiResponse for Answer<R> {
    fn meta() -> MetaResponses {
        R::meta()
    }

    fn register(registry: &mut Registry) {
        R::register(registry);
    }
}

impl<R: Send> IntoResponse for Answer<R> {
    fn into_response(self) -> Response {
        self.response
    }
}

/// Words an older version's document uses for a `Location` header.
pub trait LocationWords: Send {
    const LOCATION: &'static str;
}

/// A newer version's answer `R`, documented with the older version's words `W` for its
/// `Location`: the same answer, in the client's URI space.
pub struct Relocated<R, W>(PhantomData<(R, W)>);

impl<R: ApiResponse, W: LocationWords> ApiResponse for Relocated<R, W> {
    fn meta() -> MetaResponses {
        let mut meta = R::meta();
        for header in
            meta.responses.iter_mut().flat_map(|r| &mut r.headers).filter(|h| h.name.eq_ignore_ascii_case("location"))
        {
            header.description = Some(W::LOCATION.to_string());
        }
        meta
    }

    fn register(registry: &mut Registry) {
        R::register(registry);
    }
}

/// A request body declared for the document; [`Onward`] carries the body itself.
pub struct Declared<T>(PhantomData<T>);

impl<'a, T: ApiExtractor<'a>> ApiExtractor<'a> for Declared<T> {
    const TYPES: &'static [ApiExtractorType] = T::TYPES;
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        T::request_meta()
    }

    async fn from_request(
        _request: &'a Request,
        _body: &mut RequestBody,
        _options: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        Ok(Self(PhantomData))
    }
}
