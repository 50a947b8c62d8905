//! The public catalogue of elements deprecated inside a live version (the book's
//! operators/elements.md): `GET /api/v<N>/deprecations`, one entry at `GET
//! /api/v<N>/deprecations/<id>`, and the page a deprecation's `Link` points to,
//! `/docs/v<N>/deprecations#<id>`. What is declared is the registry's; here it is only shown. `GET
//! /admin/deprecations` adds who uses each element, as the workbench counts it.

pub mod catalogue;
pub mod page;
pub mod routes;
pub mod usage;
