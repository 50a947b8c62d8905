//! Maintenance mode: every version's operations answer 503 with `Retry-After`.

use crate::{
    http::Layers,
    wire::error::{ApiError, Kind},
};

pub fn refuse_during(layers: &Layers) -> Result<(), ApiError> {
    match layers.maintenance.active() {
        Some(retry_after) => Err(ApiError::new(Kind::Maintenance).with_header("retry-after", retry_after.to_string())),
        None => Ok(()),
    }
}
