//! # krusty-fn: write KRM functions in Rust
//!
//! A KRM function (specification v1) reads a `ResourceList` on stdin,
//! changes, adds, removes or checks its `items`, and writes the list back
//! on stdout with any `results`. This crate is the function side of that
//! wire:
//!
//! - [`ResourceList`] and [`run`]: the wire format and the one-call `main`;
//! - [`KubeObject`]: typed access to items by path
//!   (`spec.containers[name=app].image`), keeping comments and order;
//! - [`select`]: selectors, matchers and processors over chosen items;
//! - [`FnResult`]: results with resource, field and file references;
//!   [`log`]: messages on stderr;
//! - [`testing`]: golden tests over directories of fixtures.
//!
//! Items are [`Node`]s (re-exported from `krusty-yaml`, as is the rest
//! of the YAML model in [`yaml`]), so this crate is the only dependency a
//! function needs besides `serde`.
//!
//! ```no_run
//! use krusty_fn::{run, FnResult, KubeObject, ResourceList, Selector};
//!
//! #[derive(serde::Deserialize, Default)]
//! #[serde(default)]
//! struct Config {
//!     team: String,
//!     selector: Selector,          // a patch target: kind, name, labelSelector…
//! }
//!
//! fn set_team(list: &mut ResourceList) -> Result<(), krusty_fn::FnError> {
//!     let config: Config = list.config()?;
//!     if config.team.is_empty() {
//!         return Err("team is required".into());       // an error result, exit code 1
//!     }
//!     let chosen = config.selector.compile()?;
//!     for item in list.select_mut(chosen) {
//!         item.set_label("team", &config.team);        // keeps comments and key order
//!         if item.kind() == "Deployment" {
//!             item.set_field("spec.template.metadata.labels.team", &config.team)?;
//!         }
//!     }
//!     list.results.push(FnResult::info(format!("team {}", config.team)));
//!     Ok(())
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     run(set_team)
//! }
//! ```

pub mod answer;
pub mod cancel;
pub mod config;
pub mod definition;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod kube;
pub mod log;
pub mod object;
pub mod patch;
pub mod path;
pub mod result;
pub mod run;
pub mod schema;
pub mod select;
#[cfg(feature = "grpc")]
pub mod serve;
#[cfg(feature = "templates")]
pub mod template;
pub mod testing;
pub mod to_node;
pub mod wire;

/// The YAML model items are made of (the `krusty-yaml` crate).
pub use krusty_yaml as yaml;
pub use krusty_yaml::{Node, ScalarStyle, Value};

pub use answer::{parse_answer, Sent};
pub use config::FunctionConfig;
pub use kube::KubeObject;
pub use patch::{strategic_merge, strategic_merge_with, MergeSchema};
pub use path::{Path, PathError};
pub use result::{FieldRef, FileRef, FnResult, ResourceRef, ResultError, Severity};
pub use run::{process, run, FnError, Function, Outcome, RunError};
pub use schema::Schema;
pub use select::{Matcher, MatcherExt, Selector};
pub use to_node::to_node;
pub use wire::{ResourceList, WireError};

impl ResourceList {
    /// The `functionConfig` read into `T` (a missing one reads as an
    /// empty mapping, so optional fields work).
    pub fn config<T: serde::de::DeserializeOwned>(&self) -> Result<T, FnError> {
        let empty = Node::map();
        let node = self.function_config.as_ref().unwrap_or(&empty);
        config::from_node(node).map_err(|e| FnError::Config(e.to_string()))
    }

    /// The `data` of a `ConfigMap` functionConfig (kpt's convention for
    /// simple functions) read into `T`, whose fields are then strings
    /// (`BTreeMap<String, String>`, or a struct of `String` and
    /// `Option<String>` fields). A missing functionConfig or `data` reads
    /// as empty; a functionConfig of another kind is an error.
    pub fn config_data<T: serde::de::DeserializeOwned>(&self) -> Result<T, FnError> {
        let empty = Node::map();
        let data = match &self.function_config {
            None => &empty,
            Some(c) if c.kind() == "ConfigMap" => c.get("data").unwrap_or(&empty),
            Some(c) => {
                return Err(FnError::Config(format!(
                    "expected a ConfigMap, got kind '{}'",
                    c.kind()
                )))
            }
        };
        let data = if data.is_null() { &empty } else { data };
        config::from_node(data).map_err(|e| FnError::Config(format!("data: {e}")))
    }
}

/// Reads one YAML (or JSON) object, e.g. a resource written in a test.
pub fn parse_object(text: &str) -> Result<Node, FnError> {
    let docs = krusty_yaml::parse_stream(text)
        .map_err(|e| FnError::Message(format!("{}: {}", e.pos, e.message)))?;
    docs.into_iter()
        .find_map(|d| d.root)
        .ok_or_else(|| FnError::Message("no YAML document".into()))
}

/// Reads a stream of YAML documents (`---`-separated), e.g. the output of
/// a template, into items.
pub fn parse_objects(text: &str) -> Result<Vec<Node>, FnError> {
    let docs = krusty_yaml::parse_stream(text)
        .map_err(|e| FnError::Message(format!("{}: {}", e.pos, e.message)))?;
    Ok(docs
        .into_iter()
        .filter_map(|d| d.root)
        .filter(|n| !n.is_null())
        .collect())
}

/// Writes a node as YAML, keeping its comments, key order and styles.
pub fn to_yaml(node: &Node) -> Result<String, FnError> {
    krusty_yaml::to_yaml_preserving(node).map_err(|e| FnError::Message(e.to_string()))
}
