//! A client's migration guide as JSON (the book's clients/guide.md).

use poem_openapi::Object;

use super::{Details, ElementUsed, Stamp, StatusName, details, stamp, status};
use crate::{
    changes::Change,
    wire::documented::Nullable,
    workbench::guide::{Guide, GuideRoute},
};

#[derive(Debug, Object)]
#[oai(rename = "MigrationGuide", rename_all = "camelCase")]
pub struct GuideAnswer {
    pub tenant: String,
    pub subject: String,
    pub from: u16,
    pub to: u16,
    pub status: StatusName,
    pub sunset_at: Nullable<Stamp>,
    pub days_left: Nullable<i64>,
    pub next_step: String,
    /// Most requests first.
    pub routes: Vec<GuideRouteAnswer>,
    /// The deprecated elements it used within 90 days: the nearest sunset first.
    pub deprecations: Vec<ElementUsed>,
}

#[derive(Debug, Object)]
#[oai(rename = "MigrationGuideRoute", rename_all = "camelCase")]
pub struct GuideRouteAnswer {
    pub method: String,
    pub route: String,
    pub requests: u64,
    /// The successor's operation, its parameters kept.
    pub successor: Nullable<GuideSuccessor>,
    /// The changes this client's own requests met, most requests first.
    pub must_change: Vec<MustChangeAnswer>,
    /// The changes that only reshape this route's answers.
    pub must_read: Vec<GuideChangeAnswer>,
}

#[derive(Debug, Object)]
#[oai(rename = "MigrationGuideSuccessor")]
pub struct GuideSuccessor {
    pub method: String,
    pub path: String,
}

/// A change, as the guide names it.
#[derive(Debug, Object)]
#[oai(rename = "MigrationGuideChange")]
pub struct GuideChangeAnswer {
    pub change: String,
    pub title: String,
    pub instruction: String,
}

impl GuideChangeAnswer {
    fn of(change: &Change) -> Self {
        GuideChangeAnswer {
            change: change.id.to_string(),
            title: change.title.to_string(),
            instruction: change.instruction.to_string(),
        }
    }
}

/// A change the client's requests met, and what in them met it.
#[derive(Debug, Object)]
#[oai(rename = "MigrationGuideMustChange")]
pub struct MustChangeAnswer {
    #[oai(flatten)]
    pub change: GuideChangeAnswer,
    pub requests: u64,
    pub details: Details,
}

impl GuideAnswer {
    pub fn of(guide: &Guide) -> Self {
        GuideAnswer {
            tenant: guide.tenant.clone(),
            subject: guide.subject.clone(),
            from: guide.from,
            to: guide.to,
            status: status(guide.status),
            sunset_at: Nullable(guide.sunset_at.map(stamp)),
            days_left: Nullable(guide.days_left),
            next_step: guide.next_step.clone(),
            routes: guide.routes.iter().map(GuideRouteAnswer::of).collect(),
            deprecations: guide.deprecations.iter().map(ElementUsed::of).collect(),
        }
    }
}

impl GuideRouteAnswer {
    fn of(route: &GuideRoute) -> Self {
        GuideRouteAnswer {
            method: route.method.clone(),
            route: route.route.clone(),
            requests: route.requests,
            successor: Nullable(
                route
                    .successor
                    .as_ref()
                    .map(|path| GuideSuccessor { method: route.method.clone(), path: path.clone() }),
            ),
            must_change: route
                .must_change
                .iter()
                .map(|m| MustChangeAnswer {
                    change: GuideChangeAnswer::of(m.change),
                    requests: m.requests,
                    details: details(&m.details),
                })
                .collect(),
            must_read: route.must_read.iter().map(|c| GuideChangeAnswer::of(c)).collect(),
        }
    }
}
