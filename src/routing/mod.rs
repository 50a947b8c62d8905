//! What a version's operations are, below everything that reads them: the route table read
//! from their declarations (templates, methods, policies, parameters) and how a path finds its
//! route, and each route's operations, called directly once dispatch has matched it. `changes/`
//! and the registry of versions both read it; it reads neither. Also the parameters of a
//! matched route, as handlers take them (poem's router never matches one).

pub mod endpoint;
pub mod operation;
pub mod params;
pub mod table;
