//! Resources and their identity: the layer between YAML nodes and the
//! operations that transform them.

pub mod build_records;
pub mod id;
pub mod json_round_trip;
pub mod meta;
pub mod order;
pub mod resmap;
pub mod resource;
pub mod scope;

pub use id::{Gvk, ResId};
pub use meta::{Behavior, BuildMeta, Origin, PreviousId, RemoteRoot, SharedValue, TypedAnnotation};
pub use order::{sort_legacy, LegacyOrder};
pub use resmap::{Hashed, ResMap, ResMapError};
pub use resource::{Resource, ResourceError};
pub use scope::is_cluster_scoped;
