//! Helpers for this crate's unit tests.

use krusty_yaml::Node;

/// The root node of the first document of `text`.
pub(crate) fn node(text: &str) -> Node {
    krusty_yaml::parse_stream(text).unwrap()[0]
        .root
        .clone()
        .unwrap()
}
