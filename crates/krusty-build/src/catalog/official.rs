//! The official catalog: a catalog file embedded when krusty is built
//! (the build-time setting `KRUSTY_OFFICIAL_CATALOG=/path/catalog.yaml`,
//! read by `build.rs`). It is searched before any catalog a file names and
//! needs no `--trusted-catalog`.

use std::sync::OnceLock;

use krusty_schema::SchemaError;

use super::schema::{self, Catalog};

/// The embedded catalog's text (empty: none was embedded).
const EMBEDDED: &str = include_str!(concat!(env!("OUT_DIR"), "/official-catalog.yaml"));

/// The name the official catalog is shown by in messages.
pub const LABEL: &str = "the official catalog";

/// The embedded official catalog does not read (where and why).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{LABEL}: {}", .0.place_first("(embedded)"))]
pub struct Unreadable(pub SchemaError);

/// The official catalog, if this build of krusty has one. One that does not
/// read is an error of every lookup (it is krusty's own build that is
/// broken).
pub fn catalog() -> Option<&'static Result<Catalog, Unreadable>> {
    static PARSED: OnceLock<Option<Result<Catalog, Unreadable>>> = OnceLock::new();
    PARSED.get_or_init(|| from_text(EMBEDDED)).as_ref()
}

/// The official catalog embedded as `text` (none when it is empty).
pub fn from_text(text: &str) -> Option<Result<Catalog, Unreadable>> {
    if text.trim().is_empty() {
        return None;
    }
    Some(schema::parse(text).map_err(Unreadable))
}
