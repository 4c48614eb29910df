//! The functions of one build. A [`Host`] runs every KRM function call of
//! a build under the user's [`Policy`]: it sends the resources through the
//! wire format with the annotations Kustomize sends (see [`records`]),
//! runs the function, and merges what comes back. As in Kustomize, a
//! transformer's output is matched to the resources it was given by
//! current identity (group, version, kind, name and namespace): matched
//! items keep their place in the list, in the order the resources had,
//! and the rest (new items, and renamed ones) follow in the order the
//! function printed them. The build records an item comes back with are
//! the ones it has from then on.
//!
//! [`records`]: crate::records

use std::collections::HashMap;
use std::path::PathBuf;

use krusty_fn::{object, FnResult, ResourceList, Severity};
use krusty_resource::{
    Behavior, BuildMeta, Gvk, Origin, ResId, ResMap, ResMapError, Resource, ResourceError,
};
use krusty_yaml::{CompactString, Node};

use crate::records::{self, RecordsError};
use crate::server::ServerPool;
use crate::{Failed, Policy, Runtime};

/// Generated items may ask for a hash suffix and a behavior, as
/// Kustomize's function generators can.
const NEEDS_HASH: &str = "kustomize.config.k8s.io/needs-hash";
const BEHAVIOR: &str = "kustomize.config.k8s.io/behavior";

/// Why a function call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// The run failed, and the function reported error results.
    #[error(
        "the function reported errors ({}):{}",
        first_reason(&.0.message),
        results_text(&.0.results)
    )]
    Reported(Failed),
    /// The run failed.
    #[error("the function failed: {}{}", .0.message, results_text(&.0.results))]
    Failed(Failed),
    /// The function ran, and its results hold errors.
    #[error("the function reported errors:{}", results_text(.0))]
    Results(Vec<FnResult>),
    /// A transformer returned two resources with one id.
    #[error("function {label} returned duplicate resources: {source}")]
    Duplicates {
        /// The function.
        label: String,
        /// The clash.
        source: Box<ResMapError>,
    },
    /// A returned item's build records cannot be read.
    #[error("function {label} returned an invalid item {index}: {source}")]
    Records {
        /// The function.
        label: String,
        /// The item's place in the output.
        index: usize,
        /// What is wrong with its records.
        source: RecordsError,
    },
    /// A returned item is no resource.
    #[error("function {label} returned an invalid item {index}: {source}")]
    Item {
        /// The function.
        label: String,
        /// The item's place in the output.
        index: usize,
        /// Why it is no resource.
        source: Box<ResourceError>,
    },
    /// A validator changed the resources it was given.
    #[error(
        "validator {label} changed resources ({change}); validators must not modify resources"
    )]
    Changed {
        /// The function.
        label: String,
        /// What changed.
        change: Change,
    },
}

/// How a validator's output differs from what it was given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Change {
    /// It returned another number of items.
    #[error("{sent} in, {returned} out")]
    Count {
        /// Items sent.
        sent: usize,
        /// Items returned.
        returned: usize,
    },
    /// An item is new, or its id annotation changed.
    #[error("an item was added or its id annotation was changed")]
    Added,
    /// A resource was modified.
    #[error("{0} was modified")]
    Modified(Box<ResId>),
}

/// The first of the `;`-separated reasons of a failure's message.
fn first_reason(message: &str) -> &str {
    message.split(';').next().unwrap_or_default()
}

/// What an operation does to the resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Makes resources that are added (a function gets an empty list).
    Generator,
    /// Changes the resources (a function's output replaces them).
    Transformer,
    /// Checks the resources; may report, may not change them.
    Validator,
}

/// A function ready to run: its runtime (paths resolved), its config and
/// the directory it runs in.
#[derive(Debug, Clone)]
pub struct FunctionCall {
    /// How it runs.
    pub runtime: Runtime,
    /// Its `functionConfig`.
    pub config: Node,
    /// The directory it runs in.
    pub dir: PathBuf,
    /// Names the function in messages.
    pub label: String,
    /// What its metadata says about how it may run.
    pub traits: Traits,
}

/// What a function's metadata (a catalog entry, an image label or its
/// inline runtime) says about how it may run. The default is a spec v1
/// function that runs only under the user's enable flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traits {
    /// Resolved from a catalog the user trusts (or the built-in one): it
    /// runs without `--enable-alpha-plugins` and `--enable-exec`.
    pub trusted: bool,
    /// It conforms to function spec v2 and serves over this protocol: it
    /// is started once as a server and every later call reuses it.
    pub server: Option<ServerProtocol>,
    /// Its metadata lists spec v2 but not v1: a server that fails cannot
    /// be replaced by v1 runs.
    pub v2_only: bool,
    /// It is idempotent, and this digest names its runtime exactly (image
    /// digest or binary sha256): its results may be cached under it.
    pub idempotent_digest: Option<String>,
}

pub use krusty_schema::function::ServerProtocol;

/// The build's records as a resource shows them while functions see it
/// (Kustomize keeps them as annotations on the resource): what comes back
/// without them has lost them.
pub struct Shown<'a> {
    /// The annotations a resource carries for its origin and
    /// transformations (none when the build does not record them).
    pub annotations: &'a dyn Fn(&BuildMeta) -> Vec<(&'static str, String)>,
    /// Whether the build lists the transformers that changed a resource.
    pub transformations: bool,
}

impl Shown<'_> {
    /// No records shown.
    pub fn none() -> Shown<'static> {
        Shown {
            annotations: &|_| Vec::new(),
            transformations: false,
        }
    }
}

/// The functions of one build, or of many builds: every call goes through
/// it, under its policy. It owns the spec v2 function servers its calls
/// start ([`ServerPool`]), which later calls reuse; dropping the host
/// stops them all.
#[derive(Debug)]
pub struct Host {
    policy: Policy,
    /// The function servers started so far.
    servers: ServerPool,
    /// Where idempotent functions' results are kept and reused (or why
    /// the cache cannot be used).
    results: Option<ResultCache>,
}

/// The cache of function results, or why it cannot be used.
type ResultCache = Result<krusty_fetch::Cache, krusty_fetch::FetchError>;

impl Host {
    /// A host for a build under `policy`.
    pub fn new(policy: Policy) -> Host {
        Host {
            servers: ServerPool::new(policy.max_servers),
            policy,
            results: None,
        }
    }

    /// The host, keeping the results of idempotent functions in `cache`
    /// and reusing them (none when `None`); a cache that cannot be used
    /// fails every idempotent function, before it runs.
    pub fn with_result_cache(mut self, cache: Option<ResultCache>) -> Host {
        self.results = cache;
        self
    }

    /// What functions may do.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The function servers it runs.
    pub fn servers(&self) -> &ServerPool {
        &self.servers
    }

    /// Runs `call` over `resources` in `role`; `origin` is recorded on what
    /// it makes, and on what it keeps among their transformations. A
    /// transformer changes `resources` in place and a validator checks
    /// them; a generator leaves them as they are and returns what it made,
    /// in the order it printed them, for the caller to add as their
    /// behaviors ask (the others return nothing). Warning and info results
    /// go to `notes`; error results fail.
    pub fn run(
        &self,
        call: &FunctionCall,
        role: Role,
        resources: &mut ResMap,
        origin: &Origin,
        shown: &Shown<'_>,
        notes: &mut Vec<String>,
    ) -> Result<Vec<Resource>, RunError> {
        Run {
            call,
            policy: &self.policy,
            servers: &self.servers,
            shown,
            results: self.results.as_ref().map(Result::as_ref),
        }
        .run(role, resources, origin, notes)
    }
}

/// One call being run.
struct Run<'a> {
    call: &'a FunctionCall,
    policy: &'a Policy,
    servers: &'a ServerPool,
    shown: &'a Shown<'a>,
    results: Option<Result<&'a krusty_fetch::Cache, &'a krusty_fetch::FetchError>>,
}

impl Run<'_> {
    /// Runs the function over `resources` in `role` (see [`Host::run`]).
    /// Warning and info results go to `notes`; error results fail the
    /// build.
    fn run(
        &self,
        role: Role,
        resources: &mut ResMap,
        origin: &Origin,
        notes: &mut Vec<String>,
    ) -> Result<Vec<Resource>, RunError> {
        let items = match role {
            Role::Generator => Vec::new(),
            Role::Validator => annotate(resources.iter().map(|r| (r.node.clone(), &r.meta)), None),
            Role::Transformer => {
                let taken = std::mem::take(resources).into_vec();
                let ids: Vec<ResId> = taken.iter().map(Resource::id).collect();
                let (nodes, metas): (Vec<Node>, Vec<BuildMeta>) =
                    taken.into_iter().map(|r| (r.node, r.meta)).unzip();
                let items = annotate(nodes.into_iter().zip(metas.iter()), Some(self.shown));
                let output = self.send(items, notes)?;
                self.replace(resources, output, &ids, metas, origin)?;
                return Ok(Vec::new());
            }
        };
        let output = self.send(items, notes)?;
        match role {
            Role::Generator => self.made(output, origin),
            _ => self.check_unchanged(resources, output).map(|()| Vec::new()),
        }
    }

    /// Sends `items` through the function; returns the items it printed.
    fn send(&self, items: Vec<Node>, notes: &mut Vec<String>) -> Result<Vec<Node>, RunError> {
        let input = ResourceList {
            items,
            function_config: Some(self.call.config.clone()),
            results: Vec::new(),
        };
        let output = self.invoke_or_replay(input).map_err(|f| {
            if f.results.iter().any(|r| r.severity == Severity::Error) {
                RunError::Reported(f)
            } else {
                RunError::Failed(f)
            }
        })?;
        if output.has_errors() {
            return Err(RunError::Results(output.results));
        }
        notes.extend(
            output
                .results
                .iter()
                .map(|r| format!("function {}: {r}", self.call.label)),
        );
        Ok(output.items)
    }

    /// Runs the function on `input`; for an idempotent function (one whose
    /// runtime a digest names) with the result cache on, replays the
    /// output kept from an earlier run on the same input instead, and
    /// keeps the output of a run without errors. An entry that fails in
    /// any way is a miss; a cache folder that cannot be used is an error.
    fn invoke_or_replay(&self, input: ResourceList) -> Result<ResourceList, crate::Failed> {
        let key = match (&self.call.traits.idempotent_digest, self.results) {
            (Some(digest), Some(results)) => {
                self.policy
                    .permit(&self.call.runtime, &self.call.traits)
                    .map_err(|e| Failed::new(e.to_string()))?;
                results.map_err(|e| {
                    crate::Failed::new(format!(
                        "its results are kept in krusty's cache, which cannot be used (--no-function-cache runs it without): {e}"
                    ))
                })?;
                input.to_yaml().ok().map(|sent| {
                    krusty_fetch::cache::function_result_key(digest, &self.run_context(), &sent)
                })
            }
            _ => None,
        };
        let cache = self.results.and_then(Result::ok).zip(key.as_deref());
        let kept = cache.and_then(|(cache, key)| cache.function_result(key));
        if let Some(list) = kept.and_then(|b| ResourceList::parse(&String::from_utf8(b).ok()?).ok())
        {
            return Ok(list);
        }
        let output = crate::invoke(self.servers, self.call, input, self.policy)?;
        if let (Some((cache, key)), false) = (cache, output.has_errors()) {
            if let Ok(text) = output.to_yaml() {
                let _ = cache.store_function_result(key, text.as_bytes());
            }
        }
        Ok(output)
    }

    /// What decides how the function runs besides its digest and input:
    /// its runtime (arguments, network, mounts) and the values of the
    /// environment variables it is given.
    fn run_context(&self) -> String {
        let given = match &self.call.runtime {
            crate::Runtime::Container { envs, .. } => envs.as_slice(),
            _ => &[],
        };
        let mut text = format!("{:?}", self.call.runtime);
        for env in self.policy.envs.iter().chain(given) {
            let value = match env.split_once('=') {
                Some(_) => env.clone(),
                None => format!("{env}={:?}", std::env::var_os(env)),
            };
            text.push('\n');
            text.push_str(&value);
        }
        text
    }

    /// A transformer's output replaces the resources: items matching one
    /// of them (by current id, `ids`) take its place and keep what the
    /// build knows about it (`metas`) beyond the records they came back
    /// with; the other items follow as new ones.
    fn replace(
        &self,
        resources: &mut ResMap,
        items: Vec<Node>,
        ids: &[ResId],
        metas: Vec<BuildMeta>,
        origin: &Origin,
    ) -> Result<(), RunError> {
        let mut place: HashMap<ResId, usize> = HashMap::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate().rev() {
            place.insert(comparable(id), i);
        }
        let mut metas: Vec<Option<BuildMeta>> = metas.into_iter().map(Some).collect();
        let mut kept: Vec<Option<Resource>> = vec![None; ids.len()];
        let mut added = Vec::new();
        for (i, mut node) in items.into_iter().enumerate() {
            let returned = self.take_records(&mut node, i)?;
            let back: Vec<&str> = [
                records::ORIGIN_ANNOTATION,
                records::TRANSFORMATIONS_ANNOTATION,
            ]
            .into_iter()
            .filter(|key| object::remove_annotation(&mut node, key).is_some())
            .collect();
            let mut r = self.resource(node, i)?;
            let matched = place
                .get(&comparable(&r.id()))
                .copied()
                .filter(|&at| kept[at].is_none());
            match matched.and_then(|at| Some((at, metas[at].take()?))) {
                Some((at, meta)) => {
                    r.meta = meta;
                    returned.apply_to(&mut r.meta);
                    self.keep_records(&mut r.meta, &back, origin);
                    kept[at] = Some(r);
                }
                None => {
                    r.meta.origin = Some(Box::new(origin.clone()));
                    returned.apply_to(&mut r.meta);
                    added.push(r);
                }
            }
        }
        let out: Vec<Resource> = kept.into_iter().flatten().chain(added).collect();
        *resources = ResMap::from_vec(out).map_err(|e| RunError::Duplicates {
            label: self.call.label.clone(),
            source: Box::new(e),
        })?;
        Ok(())
    }

    /// The origin and transformation records of an item the function
    /// kept, given which of their annotations came `back`: an origin that
    /// did not come back is the function's, with no transformations before
    /// it; transformations that did not come back are gone; an item that
    /// kept its origin lists the function among its transformations.
    fn keep_records(&self, meta: &mut BuildMeta, back: &[&str], origin: &Origin) {
        let sent: Vec<&str> = (self.shown.annotations)(meta)
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        let lost = |key: &str| sent.contains(&key) && !back.contains(&key);
        if lost(records::ORIGIN_ANNOTATION) {
            meta.origin = Some(Box::new(origin.clone()));
            meta.transformations.clear();
            return;
        }
        if lost(records::TRANSFORMATIONS_ANNOTATION) {
            meta.transformations.clear();
        }
        if self.shown.transformations {
            meta.transformations.push(origin.clone());
        }
    }

    /// Removes the orchestrator's annotations from returned item `i`;
    /// returns the build records they held.
    fn take_records(&self, node: &mut Node, i: usize) -> Result<records::Returned, RunError> {
        records::take(node).map_err(|source| RunError::Records {
            label: self.call.label.clone(),
            index: i,
            source,
        })
    }

    /// A generator's output as resources, each with the hash suffix and
    /// behavior its annotations ask for.
    fn made(&self, items: Vec<Node>, origin: &Origin) -> Result<Vec<Resource>, RunError> {
        let mut made = Vec::with_capacity(items.len());
        for (i, mut node) in items.into_iter().enumerate() {
            let returned = self.take_records(&mut node, i)?;
            let needs_hash = object::remove_annotation(&mut node, NEEDS_HASH);
            let behavior = object::remove_annotation(&mut node, BEHAVIOR);
            let mut r = self.resource(node, i)?;
            returned.apply_to(&mut r.meta);
            r.meta.needs_hash |= needs_hash.as_ref().and_then(Node::as_str) == Some("true");
            if let Some(b) = behavior.as_ref().and_then(Node::as_str) {
                r.meta.behavior = Behavior::parse(b);
            }
            r.meta.origin = Some(Box::new(origin.clone()));
            made.push(r);
        }
        Ok(made)
    }

    /// A validator must return the resources it was given, unchanged
    /// (order aside).
    fn check_unchanged(&self, resources: &ResMap, items: Vec<Node>) -> Result<(), RunError> {
        let changed = |change: Change| RunError::Changed {
            label: self.call.label.clone(),
            change,
        };
        if items.len() != resources.len() {
            return Err(changed(Change::Count {
                sent: resources.len(),
                returned: items.len(),
            }));
        }
        let mut seen = vec![false; resources.len()];
        for (i, mut node) in items.into_iter().enumerate() {
            let returned = self.take_records(&mut node, i)?;
            let sent = returned.id.and_then(|id| id.checked_sub(1));
            let Some(i) = sent.filter(|&i| i < seen.len() && !seen[i]) else {
                return Err(changed(Change::Added));
            };
            seen[i] = true;
            let before = resources.at(i);
            if node != before.node
                && krusty_yaml::to_go_json(&node) != krusty_yaml::to_go_json(&before.node)
            {
                return Err(changed(Change::Modified(Box::new(before.id()))));
            }
        }
        Ok(())
    }

    fn resource(&self, node: Node, i: usize) -> Result<Resource, RunError> {
        Resource::from_node(node).map_err(|e| RunError::Item {
            label: self.call.label.clone(),
            index: i,
            source: Box::new(e),
        })
    }
}

/// Adds Kustomize's annotations to each resource sent.
/// Adds, with `shown`, the build's own records too.
fn annotate<'m>(
    resources: impl Iterator<Item = (Node, &'m BuildMeta)>,
    shown: Option<&Shown<'_>>,
) -> Vec<Node> {
    resources
        .enumerate()
        .map(|(i, (mut node, meta))| {
            records::annotate(&mut node, meta, i);
            if let Some(shown) = shown {
                for (key, text) in (shown.annotations)(meta) {
                    object::set_annotation(&mut node, key, &text);
                }
            }
            node
        })
        .collect()
}

/// `id` in a form that compares as Kustomize compares ids (an unset
/// namespace is `default`).
fn comparable(id: &ResId) -> ResId {
    ResId {
        gvk: Gvk::clone(&id.gvk),
        name: id.name.clone(),
        namespace: CompactString::from(id.effective_namespace()),
    }
}

/// Results, one per line, for an error message.
fn results_text(results: &[FnResult]) -> String {
    let mut text = String::new();
    for r in results {
        text.push_str("\n  ");
        text.push_str(&r.to_string());
    }
    text
}
