//! The name-reference fix-up: after resources are renamed (prefixes,
//! suffixes, hash suffixes, namespaces), every field that refers to one of
//! them by name is rewritten to its new name.

use foldhash::{HashMap, HashSet};
use rayon::prelude::*;

use krusty_resource::{Gvk, ResId, ResMap, Resource};
use krusty_yaml::{Node, Resolved, Value};

use crate::config::NameBackRef;
use crate::error::{OpError, OpResult};
use crate::fieldspec::{apply, CreateKind, FieldSpec, KindIndex};
use crate::parallel;

/// Rewrites name references using `back_refs` (which fields refer to which kinds).
#[derive(Debug, Clone, PartialEq)]
pub struct FixNameReferences {
    /// Referred-to kinds and their referrer fields.
    pub back_refs: Vec<NameBackRef>,
}

/// What the fix-up needs to know about each possible referral target.
struct Candidate {
    current: ResId,
    previous: Vec<ResId>,
    original_namespace: String,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
}

impl Candidate {
    fn of(r: &Resource) -> Candidate {
        let original = r.original_id();
        Candidate {
            current: r.id(),
            previous: r.previous_ids(),
            original_namespace: original.effective_namespace().to_string(),
            prefixes: r.meta.prefixes.clone(),
            suffixes: r.meta.suffixes.clone(),
        }
    }
}

/// What the fix-up needs to know about a referrer.
struct ReferrerInfo {
    id: ResId,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
    role_ref: Option<Gvk>,
}

/// The referrer's side of one fix-up: which field, referring to which kind.
struct Referrer<'a> {
    info: &'a ReferrerInfo,
    spec: &'a FieldSpec,
    target: &'a Gvk,
}

/// Every possible referral target, indexed by the names each has had.
struct Candidates {
    list: Vec<Candidate>,
    by_name: HashMap<String, Vec<usize>>,
    /// Namespaced candidates by the namespace they were first given.
    by_original_namespace: HashMap<String, Vec<usize>>,
}

impl Candidates {
    fn of(resources: &ResMap) -> Candidates {
        let list: Vec<Candidate> = resources.as_slice().par_iter().map(Candidate::of).collect();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::default();
        for (i, c) in list.iter().enumerate() {
            let mut names: Vec<&str> = c.previous.iter().map(|p| p.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            for name in names {
                by_name.entry(name.to_string()).or_default().push(i);
            }
        }
        let mut by_original_namespace: HashMap<String, Vec<usize>> = HashMap::default();
        for (i, c) in list.iter().enumerate() {
            if !c.current.gvk.is_cluster_scoped() {
                by_original_namespace
                    .entry(c.original_namespace.clone())
                    .or_default()
                    .push(i);
            }
        }
        Candidates {
            list,
            by_name,
            by_original_namespace,
        }
    }

    /// The candidates in `scope` that have had `name`, in resource order.
    fn named<'c>(&'c self, name: &str, scope: &Scope) -> Vec<&'c Candidate> {
        self.by_name
            .get(name)
            .map(|ids| {
                ids.iter()
                    .map(|&i| &self.list[i])
                    .filter(|c| scope.allows(c))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The candidates in `scope` that have had `name` and sit in namespace
    /// `ns`: by the namespace they were first given when any candidate in
    /// scope was first given `ns`, else by their current namespace.
    fn named_in_namespace<'c>(&'c self, name: &str, ns: &str, scope: &Scope) -> Vec<&'c Candidate> {
        let by_original = self
            .by_original_namespace
            .get(ns)
            .is_some_and(|ids| ids.iter().any(|&i| scope.allows(&self.list[i])));
        self.named(name, scope)
            .into_iter()
            .filter(|c| {
                !c.current.gvk.is_cluster_scoped()
                    && if by_original {
                        c.original_namespace == ns
                    } else {
                        c.current.effective_namespace() == ns
                    }
            })
            .collect()
    }
}

/// Kustomize's `SubsetThatCouldBeReferencedByResource`, as a test: what a
/// referrer may refer to.
struct Scope {
    referrer: ResId,
    binding_namespaces: HashSet<String>,
}

impl Scope {
    fn of(r: &Resource) -> OpResult<Scope> {
        Ok(Scope {
            referrer: r.id(),
            binding_namespaces: role_binding_namespaces(r)?,
        })
    }

    fn allows(&self, c: &Candidate) -> bool {
        self.referrer.gvk.is_cluster_scoped()
            || c.current.gvk.is_cluster_scoped()
            || c.current.ns_equals(&self.referrer)
            || self
                .binding_namespaces
                .contains(c.current.namespace.as_str())
    }
}

impl FixNameReferences {
    /// Applies the fix-up to every resource.
    pub fn apply(&self, resources: &mut ResMap) -> OpResult<()> {
        check_previous_ids(resources)?;
        let candidates = Candidates::of(resources);
        // Every (target, referrer field) pair in configuration order, found
        // for a referrer by its kind.
        let pairs: Vec<(&NameBackRef, &FieldSpec)> = self
            .back_refs
            .iter()
            .flat_map(|b| b.referrers.iter().map(move |spec| (b, spec)))
            .collect();
        let index = KindIndex::new(pairs.iter().map(|(_, spec)| spec.gvk.kind.as_str()));
        // Each referrer is fixed from the candidates as they were before any
        // fix, so referrers can be fixed in any order.
        parallel::try_each(resources.resources_mut(), |r| {
            let original = r.original_id();
            // What the fix-up needs of the referrer, computed once it is known
            // to refer to something.
            let mut context: Option<(Scope, ReferrerInfo)> = None;
            for (back_ref, spec) in index.positions(&original.gvk.kind).map(|i| pairs[i]) {
                if !original.gvk.is_selected_by(&spec.gvk) {
                    continue;
                }
                if context.is_none() {
                    let info = ReferrerInfo {
                        id: r.id(),
                        prefixes: r.meta.prefixes.clone(),
                        suffixes: r.meta.suffixes.clone(),
                        role_ref: role_ref_gvk(&r.node),
                    };
                    context = Some((Scope::of(r)?, info));
                }
                let Some((scope, info)) = &context else {
                    continue;
                };
                let referrer = Referrer {
                    info,
                    spec,
                    target: &back_ref.gvk,
                };
                apply(
                    &mut r.node,
                    &original.gvk,
                    spec,
                    CreateKind::None,
                    &mut |n: &mut Node| referrer.set(n, &candidates, scope),
                )
                .map_err(|e| {
                    e.context(format!(
                        "updating name reference in '{}' field of '{}'",
                        spec.path, info.id
                    ))
                })?;
            }
            Ok(())
        })
    }
}

/// Fails for a resource renamed (or moved to another namespace) while its
/// name, namespace or kind held a comma: Kustomize keeps earlier ids as
/// comma-separated lists, which then disagree in length, and crashes here.
fn check_previous_ids(resources: &ResMap) -> OpResult<()> {
    let has_comma = |p: &krusty_resource::PreviousId| {
        p.name.contains(',') || p.namespace.contains(',') || p.kind.contains(',')
    };
    match resources
        .iter()
        .find(|r| r.meta.previous.iter().any(has_comma))
    {
        None => Ok(()),
        Some(r) => Err(OpError::new(format!(
            "number of previous names, number of previous namespaces, number of previous kinds not equal for {}: an earlier name, namespace or kind holds a comma",
            r.id()
        ))),
    }
}

/// Namespaces of the ServiceAccount subjects of a RoleBinding.
fn role_binding_namespaces(r: &Resource) -> OpResult<HashSet<String>> {
    let mut out = HashSet::default();
    if r.kind() != "RoleBinding" {
        return Ok(out);
    }
    let Some(subjects) = r.node.get("subjects").and_then(Node::as_seq) else {
        return Ok(out);
    };
    for s in subjects {
        if s.as_map().is_none() {
            return Err(OpError::new(format!(
                "subject of {} at line {} is not a mapping (Kustomize crashes on it)",
                r.id(),
                s.pos().line
            )));
        }
        let (Some(ns), Some(kind)) = (s.get("namespace"), s.get("kind")) else {
            continue;
        };
        if !is_string(kind) {
            return Err(OpError::new(format!(
                "subject 'kind' of {} at line {} is not a string (Kustomize crashes on it)",
                r.id(),
                kind.pos().line
            )));
        }
        if kind.as_str() != Some("ServiceAccount") {
            continue;
        }
        match ns.as_scalar() {
            Some(scalar) if !ns.is_null() => {
                out.insert(scalar.text.to_string());
            }
            _ => {
                return Err(OpError::new(format!(
                    "Invalid Input: namespace is blank for resource \"{}\"\n",
                    r.id()
                )))
            }
        }
    }
    Ok(out)
}

/// `true` for a scalar Kustomize reads as a string (not a number, boolean
/// or null).
fn is_string(node: &Node) -> bool {
    matches!(
        krusty_yaml::resolve_input(node),
        Resolved::Str(_) | Resolved::Owned(_)
    ) && node.as_scalar().is_some()
}

/// The group and kind in a binding's `roleRef`, when both are present.
fn role_ref_gvk(node: &Node) -> Option<Gvk> {
    let role_ref = node.get("roleRef")?;
    let group = role_ref.get("apiGroup")?.as_str().unwrap_or_default();
    let kind = role_ref.get("kind")?.as_str().unwrap_or_default();
    Some(Gvk {
        group: group.into(),
        version: Default::default(),
        kind: kind.into(),
    })
}

/// `true` if the shorter list is the tail of the longer (both empty counts).
fn same_ending(a: &[String], b: &[String]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return long.is_empty();
    }
    long.ends_with(short)
}

impl Referrer<'_> {
    fn set(&self, node: &mut Node, candidates: &Candidates, scope: &Scope) -> OpResult<()> {
        if node.is_null() {
            return Ok(());
        }
        match &mut node.value {
            Value::Scalar(_) => self.set_scalar(node, candidates, scope),
            Value::Map(_) => self.set_mapping(node, candidates, scope),
            Value::Seq(items) => {
                for item in items {
                    match item.value {
                        Value::Scalar(_) => self.set_scalar(item, candidates, scope)?,
                        Value::Map(_) => self.set_mapping(item, candidates, scope)?,
                        Value::Seq(_) => {
                            return Err(OpError::new(
                                "a name reference list must hold strings or mappings",
                            ))
                        }
                    }
                }
                Ok(())
            }
        }
    }

    fn set_scalar(&self, node: &mut Node, candidates: &Candidates, scope: &Scope) -> OpResult<()> {
        let old = node.as_scalar().map(|s| s.text.clone()).unwrap_or_default();
        let Some(referral) = self.select(&old, candidates.named(&old, scope), false)? else {
            return Ok(());
        };
        if referral.current.name != old {
            set_name_keeping_type(node, &referral.current.name);
        }
        Ok(())
    }

    fn set_mapping(&self, node: &mut Node, candidates: &Candidates, scope: &Scope) -> OpResult<()> {
        let Some(name) = node.get("name") else {
            return Err(OpError::new("path config error; no 'name' field in node"));
        };
        let old = name.as_scalar().map(|s| s.text.clone()).unwrap_or_default();
        let in_namespace: Vec<&Candidate> = match node.get("namespace") {
            None => candidates.named(&old, scope),
            Some(ns) => {
                let ns = ns.as_scalar().map(|s| s.text.as_str()).unwrap_or_default();
                candidates.named_in_namespace(&old, ns, scope)
            }
        };
        let Some(referral) = self.select(&old, in_namespace, true)? else {
            return Ok(());
        };
        if referral.current.name == old && referral.current.namespace.is_empty() {
            return Ok(());
        }
        node.set("name", Node::string(referral.current.name.as_str()));
        if !referral.current.namespace.is_empty() {
            node.set(
                "namespace",
                Node::string(referral.current.namespace.as_str()),
            );
        }
        Ok(())
    }

    /// Kustomize's `selectReferral`: narrow the candidates step by step.
    fn select<'c>(
        &self,
        old_name: &str,
        mut c: Vec<&'c Candidate>,
        compare_namespaces: bool,
    ) -> OpResult<Option<&'c Candidate>> {
        c.retain(|x| x.previous.iter().any(|p| p.name == old_name));
        c.retain(|x| x.previous.iter().any(|p| p.gvk.is_selected_by(self.target)));
        if self.spec.path.ends_with("roleRef/name") {
            if let Some(role_ref) = &self.info.role_ref {
                c.retain(|x| x.previous.iter().any(|p| p.gvk.is_selected_by(role_ref)));
            }
        }
        if !self.info.id.gvk.is_cluster_scoped() {
            c.retain(|x| {
                x.current.gvk.is_cluster_scoped()
                    || x.current.gvk.kind == "ServiceAccount"
                    || self.info.id.ns_equals(&x.current)
            });
        }
        if c.len() == 1 {
            return Ok(c.pop());
        }
        // First a coarse pass where an empty list on either side matches
        // anything, then, if several remain, the exact one.
        let affixes_match = |x: &Candidate, allow_empty: bool| {
            let matches = |theirs: &[String], ours: &[String]| {
                (allow_empty && (theirs.is_empty() || ours.is_empty())) || same_ending(theirs, ours)
            };
            matches(&x.prefixes, &self.info.prefixes) && matches(&x.suffixes, &self.info.suffixes)
        };
        c.retain(|x| affixes_match(x, true));
        if c.len() > 1 {
            c.retain(|x| affixes_match(x, false));
        }
        match c.len() {
            0 => Ok(None),
            1 => Ok(c.pop()),
            _ => {
                let first = &c[0].current;
                let identical = c.iter().all(|x| {
                    x.current.name == first.name
                        && (!compare_namespaces || x.current.namespace == first.namespace)
                });
                if identical {
                    return Ok(Some(c[0]));
                }
                let ids: Vec<String> = c.iter().map(|x| x.current.to_string()).collect();
                Err(OpError::new(format!(
                    " found multiple possible referrals: {}",
                    ids.join(", ")
                )))
            }
        }
    }
}

/// Writes `name` into the scalar `node`, as Kustomize writes a new name
/// into a reference: the text changes, the node's type does not. A string
/// stays a string; a node read as a number, boolean or null (`name: 0`)
/// keeps its style and tag, so the new text is read as that node's is
/// (`10` prints as a number, `p-0` as a string).
fn set_name_keeping_type(node: &mut Node, name: &str) {
    let string = matches!(
        krusty_yaml::resolve::resolve_input(node),
        krusty_yaml::resolve::Resolved::Str(_) | krusty_yaml::resolve::Resolved::Owned(_)
    );
    match &mut node.value {
        krusty_yaml::Value::Scalar(s) if !string => s.text = name.into(),
        _ => node.replace_keeping_pos(Node::string(name)),
    }
}
