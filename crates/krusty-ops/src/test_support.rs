//! Helpers for this crate's unit tests.

use krusty_yaml::Node;

/// The root node of the first document of `text`.
pub(crate) fn node(text: &str) -> Node {
    krusty_yaml::first_root(text).unwrap().unwrap()
}
