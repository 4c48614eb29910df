//! An ordered collection of resources with unique identities.

use std::hash::BuildHasher;

use foldhash::HashMap;
use hashbrown::hash_table::{Entry, HashTable};
use rayon::prelude::*;

use crate::id::ResId;
use crate::resource::Resource;

/// Why resources could not be added.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResMapError {
    /// A resource with the same identity is already present.
    #[error("may not add resource with an already registered id: {0}")]
    Duplicate(ResId),
}

/// Resources in the order they were added, indexed by identity.
#[derive(Debug, Clone, Default)]
pub struct ResMap {
    resources: Vec<Resource>,
    /// Positions by identity: each entry is the identity's hash and the
    /// resource's position (16 bytes, where a copy of the identity would
    /// take eight times as much).
    index: HashTable<(u64, usize)>,
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
        let hash = id_hash(&r.id());
        self.push_hashed(r, hash)
    }

    /// Adds a resource whose identity hashes to `hash`; its identity must be new.
    fn push_hashed(&mut self, r: Resource, hash: u64) -> Result<(), ResMapError> {
        self.refresh_index();
        if !index_insert(
            &mut self.index,
            &self.resources,
            hash,
            &r,
            self.resources.len(),
        ) {
            return Err(ResMapError::Duplicate(r.id()));
        }
        self.names_stale = true;
        self.resources.push(r);
        Ok(())
    }

    /// Adds resources in order; each identity must be new (identities are
    /// hashed in parallel first).
    /// On a duplicate, those before it stay added.
    pub fn extend(&mut self, resources: Vec<Resource>) -> Result<(), ResMapError> {
        self.extend_hashed(Hashed::of(resources))
    }

    /// Makes room for `additional` more resources and their index entries
    /// at once, so that a level gathering several entries' resources
    /// grows its list and index once instead of doubling them entry by
    /// entry.
    pub fn reserve(&mut self, additional: usize) {
        self.resources.reserve(additional);
        self.index.reserve(additional, |&(hash, _)| hash);
    }

    /// [`ResMap::extend`] for resources whose identities are hashed
    /// already (see [`Hashed`]).
    pub fn extend_hashed(&mut self, hashed: Hashed) -> Result<(), ResMapError> {
        self.refresh_index();
        self.reserve(hashed.len());
        for (r, hash) in hashed.resources.into_iter().zip(hashed.hashes) {
            self.push_hashed(r, hash)?;
        }
        Ok(())
    }

    /// Takes the resources out, in order, with their identities' hashes:
    /// the index's where it is up to date, else computed now.
    pub fn into_hashed(self) -> Hashed {
        if self.stale || self.index.len() != self.resources.len() {
            return Hashed::of(self.resources);
        }
        let mut hashes = vec![0; self.resources.len()];
        for &(hash, position) in self.index.iter() {
            hashes[position] = hash;
        }
        Hashed {
            resources: self.resources,
            hashes,
        }
    }

    /// The resource with this identity.
    pub fn get(&self, id: &ResId) -> Option<&Resource> {
        if self.stale {
            return self.resources.iter().find(|r| r.id().equals(id));
        }
        index_find(&self.index, &self.resources, id).map(|i| &self.resources[i])
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
        self.index.reserve(self.resources.len(), |&(hash, _)| hash);
        let hashes = id_hashes(&self.resources);
        for (i, (r, hash)) in self.resources.iter().zip(hashes).enumerate() {
            index_insert(&mut self.index, &self.resources, hash, r, i);
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
        m.resources.reserve(resources.len());
        m.index.reserve(resources.len(), |&(hash, _)| hash);
        for r in resources {
            m.append(r)?;
        }
        Ok(m)
    }
}

/// Resources, in order, with the hashes of their identities, ready to be
/// added to a map: built where the resources are (a base built on a worker
/// thread), so that adding them to the map that gathers them, one at a
/// time, hashes nothing again.
#[derive(Debug, Clone)]
pub struct Hashed {
    resources: Vec<Resource>,
    hashes: Vec<u64>,
}

impl Hashed {
    /// Hashes the identities of `resources` (in parallel for long lists).
    pub fn of(resources: Vec<Resource>) -> Hashed {
        let hashes = id_hashes(&resources);
        Hashed { resources, hashes }
    }

    /// The resources, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Resource> {
        self.resources.iter()
    }

    /// Takes the resources out, in order.
    pub fn into_vec(self) -> Vec<Resource> {
        self.resources
    }

    /// How many resources there are.
    pub fn len(&self) -> usize {
        self.resources.len()
    }

    /// `true` when there are none.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }
}

/// The hash identities are indexed by (fixed, so builds are repeatable):
/// of what Kustomize compares them by ([`ResId::equals`]: an unset
/// namespace is `default`).
fn id_hash(id: &ResId) -> u64 {
    foldhash::fast::FixedState::default().hash_one((&id.gvk, &id.name, id.effective_namespace()))
}

/// The identity hashes of `resources`, in order: computed in parallel for
/// long lists (building an identity reads several fields of each resource),
/// so what remains one at a time is the index insertion.
fn id_hashes(resources: &[Resource]) -> Vec<u64> {
    const PARALLEL_FROM: usize = 64;
    if resources.len() >= PARALLEL_FROM {
        resources.par_iter().map(|r| id_hash(&r.id())).collect()
    } else {
        resources.iter().map(|r| id_hash(&r.id())).collect()
    }
}

/// Position of the resource with identity `id`.
fn index_find(
    index: &HashTable<(u64, usize)>,
    resources: &[Resource],
    id: &ResId,
) -> Option<usize> {
    let hash = id_hash(id);
    index
        .find(hash, |&(h, i)| h == hash && resources[i].id().equals(id))
        .map(|&(_, i)| i)
}

/// Records that the resource `r`, whose identity hashes to `hash`, is at
/// `position`, unless a resource with that identity is already indexed
/// (then `false`, and the index is unchanged). Identities are built only
/// to tell apart resources whose hashes are equal.
fn index_insert(
    index: &mut HashTable<(u64, usize)>,
    resources: &[Resource],
    hash: u64,
    r: &Resource,
    position: usize,
) -> bool {
    match index.entry(
        hash,
        |&(h, i)| h == hash && resources[i].id().equals(&r.id()),
        |&(h, _)| h,
    ) {
        Entry::Occupied(_) => false,
        Entry::Vacant(slot) => {
            slot.insert((hash, position));
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use krusty_yaml::Node;

    fn config_map(name: &str, namespace: &str) -> Resource {
        let text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {namespace}\n"
        );
        let node: Node = krusty_yaml::parse_stream(&text).unwrap()[0]
            .root
            .clone()
            .unwrap();
        Resource::from_node(node).unwrap()
    }

    #[test]
    fn finds_resources_by_identity_and_refuses_duplicates() {
        let mut m = ResMap::new();
        for i in 0..500 {
            m.append(config_map(&format!("cm-{i}"), "a")).unwrap();
            m.append(config_map(&format!("cm-{i}"), "b")).unwrap();
        }
        let again = m.append(config_map("cm-7", "b"));
        assert!(matches!(again, Err(ResMapError::Duplicate(id)) if id.name == "cm-7"));
        assert_eq!(m.len(), 1000);
        for i in [0, 255, 499] {
            let id = config_map(&format!("cm-{i}"), "b").id();
            assert_eq!(m.get(&id).map(Resource::id), Some(id));
        }
        assert!(m.get(&config_map("cm-500", "a").id()).is_none());
    }

    #[test]
    fn an_unset_namespace_is_the_default_one() {
        let mut m = ResMap::new();
        m.append(config_map("c", "")).unwrap();
        let again = m.append(config_map("c", "default"));
        assert!(matches!(again, Err(ResMapError::Duplicate(id)) if id.namespace == "default"));
        m.append(config_map("c", "other")).unwrap();
        let id = config_map("c", "default").id();
        assert_eq!(
            m.get(&id).map(|r| r.namespace().to_string()),
            Some(String::new())
        );
    }

    #[test]
    fn hashed_resources_carry_their_current_identities() {
        // A map whose index is up to date passes its hashes on; one whose
        // resources were renamed since hashes them again.
        let mut fresh = ResMap::new();
        let mut renamed = ResMap::new();
        for i in 0..100 {
            fresh.append(config_map(&format!("f-{i}"), "a")).unwrap();
            renamed.append(config_map(&format!("r-{i}"), "a")).unwrap();
        }
        for r in renamed.resources_mut() {
            let name = format!("x{}", r.name());
            r.set_name(&name);
        }
        let mut m = ResMap::new();
        m.extend_hashed(fresh.into_hashed()).unwrap();
        m.extend_hashed(renamed.into_hashed()).unwrap();
        assert_eq!(m.len(), 200);
        for name in ["f-0", "f-99", "xr-0", "xr-99"] {
            let id = config_map(name, "a").id();
            assert_eq!(m.get(&id).map(Resource::id), Some(id));
        }
        assert!(m.get(&config_map("r-5", "a").id()).is_none());
        let mut again = ResMap::new();
        again.append(config_map("xr-42", "a")).unwrap();
        let clash = m.extend_hashed(again.into_hashed());
        assert!(matches!(clash, Err(ResMapError::Duplicate(id)) if id.name == "xr-42"));
    }

    #[test]
    fn extending_keeps_order_and_refuses_duplicates_in_either_part() {
        // Large enough for the identities to be hashed in parallel.
        let part = |range: std::ops::Range<usize>| -> Vec<Resource> {
            range.map(|i| config_map(&format!("cm-{i}"), "a")).collect()
        };
        let mut m = ResMap::new();
        m.extend(part(0..100)).unwrap();
        m.extend(part(100..300)).unwrap();
        let names: Vec<String> = m.iter().map(|r| r.name().to_string()).collect();
        let expected: Vec<String> = (0..300).map(|i| format!("cm-{i}")).collect();
        assert_eq!(names, expected);
        let id = config_map("cm-150", "a").id();
        assert_eq!(m.get(&id).map(Resource::id), Some(id));
        let clash = m.extend(part(290..400));
        assert!(matches!(clash, Err(ResMapError::Duplicate(id)) if id.name == "cm-290"));
        let mut within = part(0..70);
        within.push(config_map("cm-3", "a"));
        let clash = ResMap::new().extend(within);
        assert!(matches!(clash, Err(ResMapError::Duplicate(id)) if id.name == "cm-3"));
    }

    #[test]
    fn in_place_renames_are_seen_by_lookups_and_uniqueness_checks() {
        let mut m = ResMap::from_vec(vec![config_map("x", "a"), config_map("y", "a")]).unwrap();
        m.resources_mut()[1].set_name("z");
        assert!(m.get(&config_map("y", "a").id()).is_none());
        assert!(m.get(&config_map("z", "a").id()).is_some());
        assert!(m.check_unique().is_ok());
        m.resources_mut()[1].set_name("x");
        assert!(matches!(m.check_unique(), Err(ResMapError::Duplicate(id)) if id.name == "x"));
    }

    #[test]
    fn resources_stay_small() {
        // Resources are moved from each level's map into its parent's:
        // rarely used build facts (the origin) live behind a pointer.
        assert!(
            std::mem::size_of::<Resource>() <= 192,
            "{}",
            std::mem::size_of::<Resource>()
        );
    }
}
