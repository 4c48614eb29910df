//! How Kubernetes tools select objects by text, read exactly as Kustomize
//! (and kubectl) read it: label selectors (`app=web,tier in (a,b)`) and Go
//! regular expressions (selector names, replacement paths, image names),
//! and the resource selector built of both that patches, replacements and
//! the function SDK share ([`selector`]).
//!
//! ```
//! use krusty_match::LabelSelector;
//! let s = LabelSelector::parse("app=web,replicas>2").unwrap();
//! let labels = [("app", "web"), ("replicas", "3")];
//! assert!(s.matches(|k| labels.iter().find(|(l, _)| *l == k).map(|(_, v)| *v)));
//! ```

pub mod go_regex;
pub mod label_selector;
pub mod selector;

pub use go_regex::RegexError;
pub use label_selector::{LabelSelector, SelectorError};
