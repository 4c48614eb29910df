//! krusty's YAML engine: a reader that keeps positions, styles and comments,
//! and a writer that prints exactly what `kustomize build` prints.
//!
//! ```
//! let docs = krusty_yaml::parse_stream("b: 1\na: 'x'\n").unwrap();
//! let root = docs[0].root.as_ref().unwrap();
//! assert_eq!(krusty_yaml::to_kustomize_yaml(root).unwrap(), "a: x\nb: 1\n");
//! ```

pub mod binary;
pub mod emit;
pub mod error;
pub mod folded;
pub mod json;
pub mod keyorder;
pub mod node;
pub mod parse;
pub mod resolve;
#[cfg(feature = "serde")]
pub mod serde_impl;

pub use emit::{
    emit_document, emit_document_preserving, emit_seq_items_preserving, go_json_float,
    go_yaml_float, json_unsupported_float, to_kustomize_yaml, to_yaml_preserving, EmitError,
};
pub use error::{YamlError, YamlErrorKind};
pub use json::{to_go_json, write_go_json_string};
pub use node::{
    CompactString, Document, Extras, Node, Pos, Scalar, ScalarStyle, Tag, ThinVec, Value,
};
pub use parse::{first_root, parse_stream, parse_stream_with, DuplicateKeys, Limits};
pub use resolve::{decode_base64_bytes, resolve_input, retype_as_go_yaml_v2, Resolved};
