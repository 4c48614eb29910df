//! Bases built once for every build that shares a [`BaseCache`].
//!
//! Many targets of one repository build the same bases. A build given a
//! cache (see [`crate::BuildRequest::base_cache`]) keeps each base it
//! builds there, with what building it did to the build around it: the
//! warnings it printed and the files it read. Another build that reaches
//! the same folder in the same situation takes the base from the cache
//! and replays those. The situation is what a base's result depends on
//! beyond its files: the namespace the kustomizations above pass to its
//! Helm charts, and the build's merge-schema choice, which a base may
//! also change (a base that changed it is not kept). Builds that record
//! transformations or build metadata for functions, and bases inside
//! remote checkouts, do not use the cache; a base is never taken from it
//! where building it would meet a folder of the build's own chain (the
//! cycle is then reported as without a cache).
//!
//! A cache is valid only while the files under the folders it holds do
//! not change: give one to the builds of one revision of a tree.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use krusty_resource::Hashed;

use crate::inputs::Inputs;
use crate::level::SubTarget;
use crate::schema_choice::SchemaChoice;

/// Bases already built, by folder and situation.
#[derive(Debug, Default)]
pub struct BaseCache {
    built: Mutex<HashMap<Key, Arc<Built>>>,
}

/// A base's folder and the namespace its Helm charts get from above.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub dir: PathBuf,
    pub helm_root_namespace: String,
}

/// A base built: its result, and what building it did.
#[derive(Debug)]
pub(crate) struct Built {
    pub resources: Hashed,
    pub sub: SubTarget,
    pub warnings: Vec<String>,
    pub inputs: Inputs,
    /// The schema choice it was built under (and left as it was).
    pub schema: SchemaChoice,
    /// The kustomization folders building it entered.
    pub roots: Vec<PathBuf>,
}

impl BaseCache {
    /// The base built for `key`, if there is one.
    pub(crate) fn get(&self, key: &Key) -> Option<Arc<Built>> {
        self.built.lock().ok()?.get(key).cloned()
    }

    /// Keeps a base.
    pub(crate) fn insert(&self, key: Key, built: Built) {
        if let Ok(mut map) = self.built.lock() {
            map.insert(key, Arc::new(built));
        }
    }

    /// How many bases it holds.
    pub fn len(&self) -> usize {
        self.built.lock().map_or(0, |m| m.len())
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
