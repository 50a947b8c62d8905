//! What a version's operations are, below everything that reads them: the route table read
//! from their declarations (templates, methods, policies, parameters) and how a path finds its
//! route, and the operations' endpoint, shared by the versions served through it. `changes/`
//! and the registry of versions both read it; it reads neither. Also the parameters of a route
//! matched outside poem's router, as handlers take them.

pub mod endpoint;
pub mod params;
pub mod table;
