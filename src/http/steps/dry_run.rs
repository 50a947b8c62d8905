//! `X-API-Dry-Run`: `true` or `false`, nothing else; and only a version's operations run dry.
//! A route outside the versions (an operator's, a client's view, health, a document) refuses a
//! dry run rather than act on it.

use crate::{
    core::fields::{FieldError, Location, Rule},
    wire::{
        context::{DryRun, RequestInfo},
        error::ApiError,
    },
};

const HEADER: &str = "X-API-Dry-Run";

/// Any value but `true` or `false` (or more than one) is 400.
pub fn refuse_bad_value(info: &RequestInfo) -> Result<(), ApiError> {
    match info.dry_run {
        DryRun::Invalid => Err(refusal(Rule::OneOf("true, false".into()))),
        DryRun::No | DryRun::Yes => Ok(()),
    }
}

/// A dry run of a route outside the versions is 400: only `false` is accepted there.
pub fn refuse_outside_versions(info: &RequestInfo) -> Result<(), ApiError> {
    match info.dry_run {
        DryRun::Yes => Err(refusal(Rule::OneOf("false".into()))),
        DryRun::Invalid => refuse_bad_value(info),
        DryRun::No => Ok(()),
    }
}

fn refusal(rule: Rule) -> ApiError {
    ApiError::validation(vec![FieldError { location: Location::Header(HEADER), rule }])
}
