//! An ordered collection of resources with unique identities.

use std::collections::hash_map::Entry;

use foldhash::HashMap;

use crate::id::ResId;
use crate::resource::Resource;

/// Why resources could not be added.
#[derive(Debug, Clone, PartialEq)]
pub enum ResMapError {
    /// A resource with the same identity is already present.
    Duplicate(ResId),
}

impl std::fmt::Display for ResMapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResMapError::Duplicate(id) => write!(
                f,
                "may not add resource with an already registered id: {id}"
            ),
        }
    }
}

impl std::error::Error for ResMapError {}

/// Resources in the order they were added, indexed by identity.
#[derive(Debug, Clone, Default)]
pub struct ResMap {
    resources: Vec<Resource>,
    index: HashMap<ResId, usize>,
    /// Resources were changed in place since the index was built.
    stale: bool,
    /// Positions by every name each resource has had (current and
    /// earlier), built on demand.
    names: HashMap<String, Vec<usize>>,
    /// `names` must be rebuilt before use.
    names_stale: bool,
}

impl ResMap {
    /// An empty map.
    pub fn new() -> ResMap {
        ResMap::default()
    }

    /// Adds a resource; its identity must be new.
    pub fn append(&mut self, r: Resource) -> Result<(), ResMapError> {
        self.refresh_index();
        match self.index.entry(r.id()) {
            Entry::Occupied(taken) => return Err(ResMapError::Duplicate(taken.key().clone())),
            Entry::Vacant(slot) => {
                slot.insert(self.resources.len());
            }
        }
        self.names_stale = true;
        self.resources.push(r);
        Ok(())
    }

    /// Adds every resource of `other`, in order.
    pub fn append_all(&mut self, other: ResMap) -> Result<(), ResMapError> {
        self.resources.reserve(other.resources.len());
        for r in other.resources {
            self.append(r)?;
        }
        Ok(())
    }

    /// The resource with this identity.
    pub fn get(&self, id: &ResId) -> Option<&Resource> {
        if self.stale {
            return self.resources.iter().find(|r| &r.id() == id);
        }
        self.index.get(id).map(|&i| &self.resources[i])
    }

    /// The resources, for changing in place. Identities may change; the
    /// index is rebuilt before the next lookup that needs it.
    pub fn resources_mut(&mut self) -> &mut [Resource] {
        self.stale = true;
        self.names_stale = true;
        &mut self.resources
    }

    /// The resource at `index`.
    pub fn at(&self, index: usize) -> &Resource {
        &self.resources[index]
    }

    /// The resources, for changes that keep every current and earlier
    /// identity (so the indexes stay valid).
    pub fn resources_mut_keeping_identity(&mut self) -> &mut [Resource] {
        &mut self.resources
    }

    /// Positions of the resources that are or were called `name`, in order.
    pub fn named(&mut self, name: &str) -> &[usize] {
        if self.names_stale {
            self.names.clear();
            for (i, r) in self.resources.iter().enumerate() {
                let mut seen: Vec<&str> = vec![r.name()];
                for p in &r.meta.previous {
                    if !seen.contains(&p.name.as_str()) {
                        seen.push(&p.name);
                    }
                }
                for n in seen {
                    self.names.entry(n.to_string()).or_default().push(i);
                }
            }
            self.names_stale = false;
        }
        self.names.get(name).map_or(&[], Vec::as_slice)
    }

    /// Replaces the resource at `index`.
    pub fn replace_at(&mut self, index: usize, r: Resource) {
        self.stale = true;
        self.names_stale = true;
        self.resources[index] = r;
    }

    /// Removes the resource at `index`.
    pub fn remove_at(&mut self, index: usize) -> Resource {
        self.stale = true;
        self.names_stale = true;
        self.resources.remove(index)
    }

    /// Checks that identities are still unique after in-place changes.
    pub fn check_unique(&mut self) -> Result<(), ResMapError> {
        self.stale = true;
        self.refresh_index();
        if self.index.len() == self.resources.len() {
            return Ok(());
        }
        let mut seen = foldhash::HashSet::default();
        for r in &self.resources {
            let id = r.id();
            if !seen.insert(id.clone()) {
                return Err(ResMapError::Duplicate(id));
            }
        }
        Ok(())
    }

    fn refresh_index(&mut self) {
        if !self.stale {
            return;
        }
        self.index.clear();
        for (i, r) in self.resources.iter().enumerate() {
            self.index.entry(r.id()).or_insert(i);
        }
        self.stale = false;
    }

    /// Number of resources.
    pub fn len(&self) -> usize {
        self.resources.len()
    }

    /// `true` if there are no resources.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }

    /// Resources in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Resource> {
        self.resources.iter()
    }

    /// Resources in order, as a slice.
    pub fn as_slice(&self) -> &[Resource] {
        &self.resources
    }

    /// Takes the resources out, in order.
    pub fn into_vec(self) -> Vec<Resource> {
        self.resources
    }

    /// Builds a map from resources already known to have unique identities
    /// (e.g. after reordering a valid map).
    pub fn from_vec(resources: Vec<Resource>) -> Result<ResMap, ResMapError> {
        let mut m = ResMap::new();
        for r in resources {
            m.append(r)?;
        }
        Ok(m)
    }
}
