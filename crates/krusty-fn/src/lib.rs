//! # krusty-fn: write KRM functions in Rust
//!
//! A KRM function (specification v1) reads a `ResourceList` on stdin,
//! changes, adds, removes or checks its `items`, and writes the list back
//! on stdout with any `results`. This crate is the function side of that
//! wire: the typed [`ResourceList`], [`FnResult`]s with their severities
//! and references, typed `functionConfig` through serde, in-place edits
//! that keep comments and key order ([`object`]), a one-call entry point
//! ([`run`]) and fixture testing ([`testing`]).
//!
//! ```no_run
//! use krusty_fn::{object, run, FnResult, ResourceList};
//!
//! #[derive(serde::Deserialize)]
//! struct Config {
//!     team: String,
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     run(|list: &mut ResourceList| {
//!         let config: Config = list.config()?;
//!         for item in &mut list.items {
//!             object::set_label(item, "team", &config.team);
//!         }
//!         list.results.push(FnResult::info("labelled"));
//!         Ok(())
//!     })
//! }
//! ```

pub mod answer;
pub mod config;
pub mod object;
pub mod result;
pub mod run;
pub mod testing;
pub mod wire;

pub use answer::{parse_answer, Sent};
pub use result::{FieldRef, FileRef, FnResult, ResourceRef, Severity};
pub use run::{process, run, FnError, Outcome};
pub use wire::{ResourceList, WireError};

impl ResourceList {
    /// The `functionConfig` read into `T` (a missing one reads as an
    /// empty mapping, so optional fields work).
    pub fn config<T: serde::de::DeserializeOwned>(&self) -> Result<T, FnError> {
        let empty = krusty_yaml::Node::map();
        let node = self.function_config.as_ref().unwrap_or(&empty);
        config::from_node(node).map_err(|e| FnError::Config(e.to_string()))
    }
}
