//! Orchestration: reads a kustomization tree and produces its resources, as
//! `kustomize build` does.

pub mod base_cache;
pub mod build_metadata;
pub mod catalog;
pub mod composition;
mod engine;
pub mod error;
mod finish;
pub mod functions;
pub mod helm;
pub mod inputs;
pub mod kustomization;
pub mod loader;
pub mod pipeline;
mod plan;
pub mod read;
mod readahead;
mod remote;
mod resolve;
mod schema_choice;
pub mod target;
pub mod timings;

pub use base_cache::BaseCache;
pub use engine::{build, BuildRequest, Engine};
pub use error::BuildError;
pub use inputs::{InputLog, Inputs};
pub use krusty_fetch::{redact, Cache, FetchOptions, Fetcher, Limits as FetchLimits, VerifyKeys};
pub use krusty_ops::KustomizeVersion;
pub use krusty_runtime::{parse_size, Mount, Policy};
pub use kustomization::{Kustomization, SortOptions};
pub use loader::{LoadRestrictor, Loader};
pub use target::{BuildOptions, BuildOutput};
pub use timings::Timings;
