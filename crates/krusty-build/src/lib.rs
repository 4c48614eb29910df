//! Orchestration: reads a kustomization tree and produces its resources, as
//! `kustomize build` does.

pub mod base_cache;
pub mod build_metadata;
pub mod catalog;
pub mod composition;
mod context;
mod engine;
pub mod error;
mod finish;
pub mod functions;
pub mod helm;
pub mod inputs;
pub mod kustomization;
mod level;
pub mod loader;
pub mod pipeline;
mod plan;
pub mod read;
mod readahead;
mod remote;
mod request;
mod resolve;
mod schema_choice;
mod services;
pub mod target;
pub mod timings;

pub use base_cache::BaseCache;
pub use engine::{build, Engine};
pub use error::BuildError;
pub use inputs::{InputLog, Inputs};
pub use krusty_fetch::{redact, Cache, FetchOptions, Fetcher, Limits as FetchLimits, VerifyKeys};
pub use krusty_ops::KustomizeVersion;
pub use krusty_runtime::{parse_size, Mount, Policy};
pub use kustomization::{Kustomization, SortOptions};
pub use loader::{LoadRestrictor, Loader};
pub use request::{BuildOptions, BuildOutput, BuildRequest};
pub use timings::Timings;
