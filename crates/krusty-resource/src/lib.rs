//! Resources and their identity: the layer between YAML nodes and the
//! operations that transform them.

pub mod build_records;
pub mod json_round_trip;
pub mod meta;
pub mod order;
pub mod resmap;
pub mod resource;

pub use krusty_schema::id::{self, Gvk, ResId};
pub use krusty_schema::scope::{self, is_cluster_scoped};
pub use meta::{Behavior, BuildMeta, Origin, PreviousId, RemoteRoot, SharedValue, TypedAnnotation};
pub use order::{sort_legacy, LegacyOrder};
pub use resmap::{Hashed, ResMap, ResMapError};
pub use resource::{Resource, ResourceError};
