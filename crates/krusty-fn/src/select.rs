//! Choosing items: [`Selector`] (the fields of a Kustomize patch
//! `target`), small matchers ([`kind`], [`name`], [`has_labels`]…),
//! their combinations ([`MatcherExt::and`], [`all`], [`any`], [`not`]) and
//! processors that apply a change to the chosen items ([`for_each`],
//! [`chain`]).
//!
//! ```
//! use krusty_fn::select::{self, Matcher, MatcherExt};
//! use krusty_fn::{KubeObject, Node, ResourceList};
//!
//! # fn main() -> Result<(), krusty_fn::FnError> {
//! let apps = select::kind("Deployment").and(select::has_labels([("tier", "web")]));
//! let process = select::for_each(apps, |item: &mut Node| {
//!     item.set_field("spec.replicas", &2)
//! });
//! # let mut list = ResourceList::default();
//! process(&mut list)?;
//! # Ok(())
//! # }
//! ```

mod target;

use krusty_yaml::Node;

pub use target::{CompiledSelector, Selector};

use crate::kube::KubeObject;
use crate::run::FnError;
use crate::wire::ResourceList;

/// Decides whether an item is chosen.
pub trait Matcher {
    /// `true` when `item` is chosen.
    fn matches(&self, item: &Node) -> bool;
}

impl<F: Fn(&Node) -> bool> Matcher for F {
    fn matches(&self, item: &Node) -> bool {
        self(item)
    }
}

impl Matcher for Box<dyn Matcher> {
    fn matches(&self, item: &Node) -> bool {
        self.as_ref().matches(item)
    }
}

/// Combining matchers.
pub trait MatcherExt: Matcher + Sized {
    /// Chosen by both.
    fn and<M: Matcher>(self, other: M) -> impl Matcher {
        move |item: &Node| self.matches(item) && other.matches(item)
    }
    /// Chosen by either.
    fn or<M: Matcher>(self, other: M) -> impl Matcher {
        move |item: &Node| self.matches(item) || other.matches(item)
    }
    /// This matcher, boxed (to put matchers of different types in one list).
    fn boxed(self) -> Box<dyn Matcher>
    where
        Self: 'static,
    {
        Box::new(self)
    }
}

impl<M: Matcher> MatcherExt for M {}

/// Chosen by every matcher (all items when `matchers` is empty).
pub fn all(matchers: Vec<Box<dyn Matcher>>) -> impl Matcher {
    move |item: &Node| matchers.iter().all(|m| m.matches(item))
}

/// Chosen by at least one matcher (no item when `matchers` is empty).
pub fn any(matchers: Vec<Box<dyn Matcher>>) -> impl Matcher {
    move |item: &Node| matchers.iter().any(|m| m.matches(item))
}

/// Not chosen by `m`.
pub fn not<M: Matcher>(m: M) -> impl Matcher {
    move |item: &Node| !m.matches(item)
}

/// Items of kind `k`.
pub fn kind(k: &str) -> impl Matcher + '_ {
    move |item: &Node| item.kind() == k
}

/// Items of `apiVersion` `v` (`apps/v1`, `v1`).
pub fn api_version(v: &str) -> impl Matcher + '_ {
    move |item: &Node| item.api_version() == v
}

/// Items named `n`.
pub fn name(n: &str) -> impl Matcher + '_ {
    move |item: &Node| item.name() == n
}

/// Items in namespace `ns` (`""`: without a namespace).
pub fn namespace(ns: &str) -> impl Matcher + '_ {
    move |item: &Node| item.namespace() == ns
}

/// Items carrying every one of `labels`.
pub fn has_labels<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> impl Matcher + 'a {
    let wanted: Vec<(&str, &str)> = labels.into_iter().collect();
    move |item: &Node| wanted.iter().all(|(k, v)| item.label(k) == Some(*v))
}

/// Items carrying every one of `annotations`.
pub fn has_annotations<'a>(
    annotations: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> impl Matcher + 'a {
    let wanted: Vec<(&str, &str)> = annotations.into_iter().collect();
    move |item: &Node| wanted.iter().all(|(k, v)| item.annotation(k) == Some(*v))
}

/// Items that are not local configuration (`config.kubernetes.io/local-config`).
pub fn not_local_config() -> impl Matcher {
    |item: &Node| !item.is_local_config()
}

impl ResourceList {
    /// The items `m` chooses.
    pub fn select<'a, M: Matcher + 'a>(&'a self, m: M) -> impl Iterator<Item = &'a Node> + 'a {
        self.items.iter().filter(move |i| m.matches(i))
    }

    /// The items `m` chooses, mutably.
    pub fn select_mut<'a, M: Matcher + 'a>(
        &'a mut self,
        m: M,
    ) -> impl Iterator<Item = &'a mut Node> + 'a {
        self.items.iter_mut().filter(move |i| m.matches(i))
    }

    /// Adds `item`, replacing the item with the same apiVersion, kind,
    /// namespace and name if there is one (in its place).
    pub fn upsert(&mut self, item: Node) {
        let same = |i: &Node| {
            i.api_version() == item.api_version()
                && i.kind() == item.kind()
                && i.namespace() == item.namespace()
                && i.name() == item.name()
        };
        match self.items.iter().position(same) {
            Some(i) => self.items[i] = item,
            None => self.items.push(item),
        }
    }
}

/// A processor that calls `f` on every item `m` chooses, stopping at the
/// first error (kpt's `ApplyFnBySelector`).
pub fn for_each<M, F>(m: M, mut f: F) -> impl FnOnce(&mut ResourceList) -> Result<(), FnError>
where
    M: Matcher,
    F: FnMut(&mut Node) -> Result<(), FnError>,
{
    move |list: &mut ResourceList| list.select_mut(m).try_for_each(&mut f)
}

/// A processor running `first`, then `second` (when `first` succeeded).
/// Chains of any length nest: `chain(a, chain(b, c))`.
pub fn chain<A, B>(first: A, second: B) -> impl FnOnce(&mut ResourceList) -> Result<(), FnError>
where
    A: FnOnce(&mut ResourceList) -> Result<(), FnError>,
    B: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    move |list: &mut ResourceList| {
        first(list)?;
        second(list)
    }
}

/// One processor of a [`by_config_kind`] table.
pub type Processor = fn(&mut ResourceList) -> Result<(), FnError>;

/// A processor that runs the handler named by the functionConfig's
/// `kind` (one executable serving several config kinds, as kyaml's
/// `GVKFilterMap` does); another kind, or no config, is an error that
/// lists the kinds it knows.
pub fn by_config_kind(
    handlers: Vec<(&'static str, Processor)>,
) -> impl FnOnce(&mut ResourceList) -> Result<(), FnError> {
    move |list: &mut ResourceList| {
        let kind = list
            .function_config
            .as_ref()
            .map(|c| c.kind().to_string())
            .unwrap_or_default();
        match handlers.iter().find(|(k, _)| *k == kind) {
            Some((_, handler)) => handler(list),
            None => {
                let known: Vec<&str> = handlers.iter().map(|(k, _)| *k).collect();
                Err(FnError::Config(format!(
                    "unknown kind '{kind}' (expected {})",
                    known.join(", ")
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn items() -> ResourceList {
        let text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: web-a, namespace: prod, labels: {tier: web, env: prod}}\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: db, labels: {tier: db}}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: web-cfg, annotations: {owner: me}}\n";
        ResourceList::parse(text).unwrap()
    }

    pub(super) fn names<'a, M: Matcher + 'a>(list: &'a ResourceList, m: M) -> Vec<&'a str> {
        list.select(m).map(|i| i.name()).collect()
    }

    #[test]
    fn matchers_combine_and_processors_chain() {
        let mut list = items();
        assert_eq!(
            names(
                &list,
                kind("Deployment").and(not(has_labels([("tier", "db")])))
            ),
            ["web-a"]
        );
        assert_eq!(
            names(
                &list,
                any(vec![name("db").boxed(), kind("ConfigMap").boxed()])
            ),
            ["db", "web-cfg"]
        );
        assert_eq!(names(&list, all(vec![])).len(), 3);
        let p = chain(
            for_each(kind("Deployment"), |i| i.set_field("spec.replicas", &2)),
            for_each(has_annotations([("owner", "me")]), |_| Err("stop".into())),
        );
        assert_eq!(p(&mut list).unwrap_err().to_string(), "stop");
        assert_eq!(
            list.items[1].field::<u32>("spec.replicas").unwrap(),
            Some(2)
        );
        let mut list2 = items();
        list2.function_config = crate::parse_object("kind: B").ok();
        let table = || -> Vec<(&'static str, Processor)> {
            vec![
                ("A", |_| Err("a".into())),
                ("B", |l| {
                    l.items.clear();
                    Ok(())
                }),
            ]
        };
        by_config_kind(table())(&mut list2).unwrap();
        assert!(list2.items.is_empty());
        list2.function_config = crate::parse_object("kind: C").ok();
        let err = by_config_kind(table())(&mut list2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "reading functionConfig: unknown kind 'C' (expected A, B)"
        );
        let mut cm = list.items[2].clone();
        cm.set_label("x", "y");
        list.upsert(cm);
        assert_eq!(list.items.len(), 3);
        assert_eq!(list.items[2].label("x"), Some("y"));
    }
}
