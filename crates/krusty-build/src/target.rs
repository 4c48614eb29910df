//! Building one kustomization target: accumulate its resources (recursing
//! into directories), run its generators and transformers, and at the top
//! level finish with hash suffixes, name references and ordering.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use krusty_ops::builtins::namespace::HELM_GENERATED_ANNOTATION;
use krusty_ops::schema::BUILTIN_VERSION;
use krusty_ops::vars::{self, VarSet};
use krusty_ops::{Env, KustomizeVersion, TransformerConfig};
use krusty_resource::{Hashed, Origin, ResMap, Resource};

use krusty_resource::BuildMeta;
use krusty_runtime::{FunctionCall, Shown};
use krusty_yaml::Node;

use crate::build_metadata::Records;
use crate::context::Context;
use crate::error::{BuildError, BuildResult};
use crate::inputs::InputLog;
use crate::kustomization::{EntryPositions, Kustomization, OpenApi, SortOptions};
use crate::level::{Config, SubTarget};
use crate::loader::{clean, Entry, LoadRestrictor, Loader};
use crate::pipeline::{Build, Operation, Pipeline, Role};
use crate::plan;
use crate::read::resources_from_text;
use crate::readahead::ReadAhead;
use crate::remote::Remotes;
use crate::request::{BuildOutput, BuildRequest};
use crate::schema_choice::{custom_schema, SchemaChoice};
use crate::services::Services;
use crate::timings::Timings;
use krusty_fetch::GitUrl;

/// What a build has gathered so far: resources, the transformer
/// configuration in force, and vars. Components work on their parent's.
#[derive(Default)]
pub(crate) struct Accumulator {
    resmap: ResMap,
    config: Config,
    vars: VarSet,
}

/// What one kustomization level produces.
pub(crate) struct Level {
    /// Its resources.
    pub resmap: ResMap,
    /// The transformer configuration in force (defaults, its own
    /// `configurations:`, and those of everything below it).
    pub config: Config,
    /// The kustomization itself.
    pub kustomization: Kustomization,
    /// The vars declared here and below.
    pub vars: VarSet,
}

/// Builds the kustomization in `dir` with the services of `engine` (see
/// `Engine::build`).
pub(crate) fn build(
    dir: &Path,
    services: &Services,
    request: &BuildRequest,
    inputs: Option<Arc<InputLog>>,
) -> BuildResult<BuildOutput> {
    let kustomization = request.kustomization.clone();
    let opts = &services.options;
    let mut ctx = Context::new(services, request, inputs.clone());
    // As in Kustomize, a target that reads as a remote reference is one,
    // even where a folder of that name exists.
    let remote = dir.to_str().and_then(|d| GitUrl::parse(d).ok());
    let loader = match &remote {
        Some(url) => ctx.remotes.loader(url, false)?,
        None => Loader::new(dir, opts.load_restrictor)
            .map_err(|e| {
                if dir.exists() {
                    e
                } else {
                    BuildError::new(format!(
                        "must build at directory: not a valid directory: {e}"
                    ))
                }
            })?
            .with_fetcher(Arc::clone(&ctx.remotes.fetcher)),
    };
    let loader = loader.counting(Arc::clone(&ctx.reads));
    let loader = match inputs {
        Some(inputs) => loader.recording(inputs),
        None => loader,
    };
    let loader = match &request.confine_to {
        Some(root) if remote.is_none() => {
            let loader = loader.confined_to(Arc::clone(root));
            loader.check_containment(&loader.root)?;
            loader
        }
        _ => loader,
    };
    let composition = match (&remote, &kustomization) {
        (Some(_), _) | (_, Some(_)) => None,
        (None, None) => ctx.find_composition(&loader.root)?,
    };
    ctx.top_kustomization = kustomization;
    let level = match (&remote, composition) {
        (_, Some(file)) => ctx.composition_level(&loader, &file)?,
        (Some(url), None) => ctx.in_remote(&url.raw, |ctx| ctx.target(&loader))?,
        (None, None) => ctx.target(&loader)?,
    };
    let mut resmap = level.resmap;
    let mut records = Records::from_options(&level.kustomization.build_metadata);
    records.managed_by |= opts.managed_by_label;
    let order = level
        .kustomization
        .sort_options
        .unwrap_or(if opts.keep_build_order {
            SortOptions::Fifo
        } else {
            SortOptions::default()
        });
    let finishing = crate::finish::Finishing {
        config: level.config,
        declared: level.vars,
        records,
        order,
    };
    crate::finish::pipeline(finishing, &loader.root).run(&mut ctx, &loader, "", &mut resmap)?;
    let resources = printed(resmap, ctx.version);
    check_types(&resources)?;
    Ok(BuildOutput {
        resources,
        warnings: ctx.warnings,
    })
}

/// The resources printed, in order: annotations normalized, those marked
/// local-config left out.
fn printed(mut resmap: ResMap, version: KustomizeVersion) -> Vec<Resource> {
    let kept = krusty_ops::parallel::map_each(resmap.resources_mut(), |r| {
        if version >= KustomizeVersion::V5_8_1 {
            // A build annotation from Kustomize v5.8.1 on.
            r.remove_annotation(HELM_GENERATED_ANNOTATION);
        }
        r.normalize_annotations();
        keeps_printed(r)
    });
    let mut resources: Vec<Resource> = resmap.into_vec();
    if kept.contains(&false) {
        resources = resources
            .into_iter()
            .zip(kept)
            .filter_map(|(r, kept)| kept.then_some(r))
            .collect();
    }
    resources
}

/// Fails on the first printed resource holding a scalar whose text does
/// not suit its type (a replacement wrote `x` into an integer field and
/// nothing replaced it since), as Kustomize fails when it decodes the
/// output.
fn check_types(resources: &[Resource]) -> BuildResult<()> {
    for r in resources.iter().filter(|r| r.meta.mistyped) {
        krusty_yaml::resolve::check_scalar_tags(&r.node).map_err(|e| {
            BuildError::new(format!("map[string]interface {{}}(nil): yaml: {e}"))
                .context(format!("printing {}", r.id()))
        })?;
    }
    Ok(())
}

/// Whether `text`, the content of `path`, is a composition file: named as
/// one, and its first document of kind `Composition`.
fn is_composition_file(path: &Path, text: &str) -> bool {
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| crate::composition::FILE_NAMES.contains(&n));
    named
        && krusty_yaml::parse_stream(text).is_ok_and(|docs| {
            docs.into_iter()
                .find_map(|d| d.root)
                .is_some_and(|r| r.get("kind").and_then(Node::as_str) == Some("Composition"))
        })
}

/// Fails for a resource whose `metadata.annotations` is neither a mapping
/// nor null, where Kustomize, keeping build records, cannot record where
/// it was read.
fn check_annotations_map(r: &Resource, entry: &str) -> BuildResult<()> {
    let kind = match r
        .node
        .get_path(&["metadata", "annotations"])
        .map(|a| &a.value)
    {
        Some(krusty_yaml::Value::Scalar(_)) => "ScalarNode",
        Some(krusty_yaml::Value::Seq(_)) => "SequenceNode",
        _ => return Ok(()),
    };
    Err(BuildError::new(format!(
        "cannot add path annotation for '{entry}': considering field 'metadata/annotations' of object {}: wrong node kind: expected MappingNode but got {kind}",
        r.id()
    )))
}

/// `false` for a resource marked `config.kubernetes.io/local-config`: any
/// value but `"false"` (`""`, `"yes"`, `"False"` too) keeps it out of the
/// output, as in Kustomize.
fn keeps_printed(r: &Resource) -> bool {
    r.annotation("config.kubernetes.io/local-config")
        .is_none_or(|v| v == "false")
}

impl Context {
    /// A context for one build with the services of `engine`, as
    /// `request` says; the files it reads are recorded in `inputs`.
    pub(crate) fn new(
        services: &Services,
        request: &BuildRequest,
        inputs: Option<Arc<InputLog>>,
    ) -> Context {
        let opts = &services.options;
        let mut remotes = Remotes::new(Arc::clone(&services.fetcher));
        remotes.refused = opts.refuse_remote_bases;
        Context {
            version: opts.kustomize_version,
            helm_root_namespace: String::new(),
            chain: Vec::new(),
            warnings: Vec::new(),
            schema: SchemaChoice::default(),
            record_transformations: false,
            records: (Records::default(), PathBuf::new()),
            build_records: false,
            policy: opts.functions.clone(),
            host: Arc::clone(&services.host),
            helm: Arc::new(crate::helm::Helm::new(
                opts.helm.clone(),
                Arc::clone(&remotes.fetcher),
                opts.fetch.offline,
            )),
            read_ahead: Arc::new(ReadAhead::new(Arc::clone(&services.reads))),
            reads: Arc::clone(&services.reads),
            catalogs: Arc::new(crate::catalog::Store::new(
                Arc::clone(&remotes.fetcher),
                opts.functions.trusted_catalogs.clone(),
            )),
            remotes,
            inputs,
            top_kustomization: None,
            bases: request.base_cache.clone(),
            timings: request.timings.clone(),
        }
    }

    /// Builds one kustomization directory.
    pub(crate) fn target(&mut self, loader: &Loader) -> BuildResult<Level> {
        let (k, path) = self.load_target(loader)?;
        self.accumulate_target(loader, k, &path)
    }

    /// Reads the kustomization in `loader`'s root and applies its
    /// `openapi:` field, as Kustomize does before it looks at the kind.
    fn load_target(&mut self, loader: &Loader) -> BuildResult<(Kustomization, PathBuf)> {
        let _timer = Timings::start(self.timings.as_ref(), &loader.root, || {
            "read kustomization".to_string()
        });
        let loaded = match self.top_kustomization.take() {
            Some(text) => {
                let path = loader.root.join(crate::kustomization::FILE_NAMES[0]);
                crate::kustomization::parse_file(&text, &path, self.version).map(|k| (k, path))
            }
            None => crate::kustomization::load(loader, self.version),
        };
        let (k, path) = loaded.map_err(|e| e.no_target(&loader.root))?;
        self.warnings.extend(k.warnings.iter().cloned());
        self.read_ahead
            .kustomization(&loader.root, &k, loader.restrictor);
        self.choose_schema(loader, &k, &path)?;
        Ok((k, path))
    }

    /// Builds a kustomization [`Context::load_target`] read.
    fn accumulate_target(
        &mut self,
        loader: &Loader,
        k: Kustomization,
        path: &Path,
    ) -> BuildResult<Level> {
        if self.chain.is_empty() {
            self.record_transformations = k
                .build_metadata
                .iter()
                .any(|o| o == "transformerAnnotations");
            self.build_records = !k.build_metadata.is_empty();
            self.records = (
                Records::from_options(&k.build_metadata),
                loader.root.clone(),
            );
        }
        self.chain.push(loader.root.clone());
        let result = self.accumulate(loader, k, path);
        self.chain.pop();
        result
    }

    /// Applies a kustomization's `openapi:` field: the top kustomization
    /// always decides; a base only when nothing has decided yet.
    fn choose_schema(
        &mut self,
        loader: &Loader,
        k: &Kustomization,
        k_path: &Path,
    ) -> BuildResult<()> {
        let top = self.chain.is_empty();
        if !top && self.schema.is_decided() {
            return Ok(());
        }
        let layer = self.schema.layer();
        let in_file = |e: BuildError| e.context(format!("kustomization file {}", k_path.display()));
        let chosen = match &k.openapi {
            None | Some(OpenApi::Default) => None,
            Some(OpenApi::Version(v)) if v == BUILTIN_VERSION => Some(None),
            Some(OpenApi::Version(_)) => {
                return Err(in_file(BuildError::new(
                    "the specified OpenAPI version is not built in",
                )))
            }
            Some(OpenApi::Path(url)) if krusty_fetch::is_http_url(url) => {
                let body = self
                    .remotes
                    .fetcher
                    .file(url, krusty_fetch::HTTP_TIMEOUT)
                    .map_err(|e| in_file(BuildError::from(e)))?;
                let text = String::from_utf8_lossy(&body);
                Some(Some(Arc::new(custom_schema(Path::new(url), &text, layer))))
            }
            Some(OpenApi::Path(path)) => {
                let file = loader.file(path).map_err(in_file)?;
                let text = loader.read(&file, None).map_err(in_file)?;
                Some(Some(Arc::new(custom_schema(&file, &text, layer))))
            }
        };
        self.schema.decide(top, chosen);
        Ok(())
    }

    /// Runs `operations` (patch chains fused) as one pipeline over
    /// `resmap`; function results become warnings; errors name `site`
    /// (the file configuring them).
    fn run_operations(
        &mut self,
        operations: Vec<Operation>,
        loader: &Loader,
        resmap: &mut ResMap,
        site: &str,
    ) -> BuildResult<()> {
        let operations = crate::pipeline::fuse_patch_chains(operations, !self.build_records);
        Pipeline::new(operations).run(self, loader, site, resmap)?;
        self.schema.note_resources(resmap.iter());
        Ok(())
    }

    /// Renders the composition `file` as the build's top level.
    fn composition_level(&mut self, loader: &Loader, file: &Path) -> BuildResult<Level> {
        self.chain.push(loader.root.clone());
        let result = self.composition_base(file, loader.restrictor);
        self.chain.pop();
        let (resources, _) = result?;
        let mut resmap = ResMap::default();
        resmap.extend_hashed(resources).map_err(BuildError::from)?;
        Ok(Level {
            resmap,
            config: Cow::Borrowed(TransformerConfig::defaults(self.version)),
            kustomization: Kustomization::default(),
            vars: VarSet::default(),
        })
    }

    /// Renders the composition `file` with no input, as a base.
    fn composition_base(
        &mut self,
        file: &Path,
        restrictor: LoadRestrictor,
    ) -> BuildResult<Gathered> {
        let list = crate::composition::consolidate(file, restrictor)?;
        if let Some(inputs) = &self.inputs {
            inputs.file(file);
            for t in &list {
                inputs.file(&t.file);
            }
        }
        let resmap = crate::composition::run(self, &list, restrictor, ResMap::default())?;
        Ok((resmap.into_hashed(), None))
    }

    fn accumulate(
        &mut self,
        loader: &Loader,
        k: Kustomization,
        k_path: &Path,
    ) -> BuildResult<Level> {
        let mut acc = Accumulator::default();
        self.accumulate_into(loader, &k, k_path, &mut acc)?;
        Ok(Level {
            resmap: acc.resmap,
            config: acc.config,
            kustomization: k,
            vars: acc.vars,
        })
    }

    /// Runs one kustomization (or component) over `acc`: its stages, in
    /// Kustomize's order ([`LEVEL_STAGES`]).
    fn accumulate_into(
        &mut self,
        loader: &Loader,
        k: &Kustomization,
        k_path: &Path,
        acc: &mut Accumulator,
    ) -> BuildResult<()> {
        for stage in LEVEL_STAGES {
            self.run_stage(stage, loader, k, k_path, acc)?;
        }
        Ok(())
    }

    /// Runs one stage of a kustomization level over `acc`. The stages that
    /// run operations plan them when their turn comes (the transformers'
    /// field specs depend on the configurations gathered before them).
    fn run_stage(
        &mut self,
        stage: Stage,
        loader: &Loader,
        k: &Kustomization,
        k_path: &Path,
        acc: &mut Accumulator,
    ) -> BuildResult<()> {
        let site = || format!("kustomization file {}", k_path.display());
        match stage {
            Stage::Resources => self.below(k, |ctx| {
                ctx.accumulate_resources(loader, k, k_path, acc)
                    .map_err(|e| e.context("accumulating resources"))
            }),
            Stage::Configurations => {
                let own = plan::own_config(loader, k, k_path, self.version)
                    .map_err(|e| e.context(format!("{}: field 'configurations'", site())))?;
                merge_config(&mut acc.config, &own).map_err(|e| {
                    BuildError::from(e)
                        .context("merging transformer configurations")
                        .context(format!("{}: field 'configurations'", site()))
                })?;
                let crds = plan::crd_config(loader, k, k_path)
                    .map_err(|e| e.context(format!("{}: field 'crds'", site())))?;
                if !crds.is_empty() {
                    acc.config
                        .to_mut()
                        .merge(&crds)
                        .map_err(|e| BuildError::from(e).context("merging CRD configurations"))?;
                }
                Ok(())
            }
            Stage::Generators => {
                let operations = in_remote(plan::generators(self, loader, k, k_path)?, loader);
                self.run_operations(operations, loader, &mut acc.resmap, &site())
            }
            Stage::Components => self.below(k, |ctx| {
                for (i, entry) in k.components.iter().enumerate() {
                    let place = Place {
                        file: k_path,
                        pos: EntryPositions::at(&k.positions.components, i),
                    };
                    ctx.accumulate_component(loader, entry, place, acc)
                        .map_err(|e| e.context("accumulating components"))?;
                }
                Ok(())
            }),
            Stage::Transformers => {
                let operations = in_remote(
                    plan::transformers(self, loader, k, k_path, &acc.config)?,
                    loader,
                );
                self.run_operations(operations, loader, &mut acc.resmap, &site())
            }
            Stage::Validators => {
                let operations = in_remote(plan::validators(self, loader, k, k_path)?, loader);
                self.run_operations(operations, loader, &mut acc.resmap, &site())
            }
            Stage::Vars => vars::declare(&mut acc.resmap, &mut acc.vars, &k.vars)
                .map_err(|e| BuildError::from(e).context(site())),
        }
    }

    /// Runs `build` over the folders `k` includes (its resources and
    /// components), passing down the namespace their Helm charts get from
    /// Kustomize v5.8.1 on: `k`'s own, else the one passed to `k`.
    fn below<T>(
        &mut self,
        k: &Kustomization,
        build: impl FnOnce(&mut Context) -> BuildResult<T>,
    ) -> BuildResult<T> {
        let passed = if k.namespace.is_empty() {
            self.helm_root_namespace.clone()
        } else {
            k.namespace.clone()
        };
        let own = std::mem::replace(&mut self.helm_root_namespace, passed);
        let result = build(self);
        self.helm_root_namespace = own;
        result
    }

    /// Runs the component in directory `entry` over the parent's accumulator.
    fn accumulate_component(
        &mut self,
        loader: &Loader,
        entry: &str,
        place: Place<'_>,
        acc: &mut Accumulator,
    ) -> BuildResult<()> {
        let here = |e: BuildError| e.located(place.file, place.pos);
        if let Ok(url) = GitUrl::parse(entry) {
            let sub = self
                .remotes
                .loader(&url, true)
                .map_err(|e| here(BuildError::new(format!("loader.New \"{e}\""))))?;
            return self.in_remote(&url.raw, |ctx| ctx.component_at(&sub, place, acc));
        }
        let joined = clean(&loader.root.join(entry));
        let version = self.version;
        let sub = Loader::new(&joined, loader.restrictor).map_err(|e| {
            let why = if joined.exists() && version < KustomizeVersion::V5_8_1 {
                // Kustomize v5.5.0 uses the quoted path as a format string.
                let path = joined.display().to_string();
                e.to_string()
                    .replace(&path, &crate::error::go_format_without_arguments(&path))
            } else if joined.exists() {
                e.to_string()
            } else {
                format!("must build at directory: not a valid directory: {}", e)
            };
            here(BuildError::new(format!("loader.New \"{why}\"")))
        })?;
        let sub = loader.below(sub.root);
        loader
            .check_containment(&sub.root)
            .map_err(|e| here(BuildError::new(format!("loader.New \"{e}\""))))?;
        self.check_cycle(&sub.root).map_err(here)?;
        self.component_at(&sub, place, acc)
    }

    /// Runs the component in `sub`'s root over the parent's accumulator;
    /// `place` is where the parent names it.
    fn component_at(
        &mut self,
        sub: &Loader,
        place: Place<'_>,
        acc: &mut Accumulator,
    ) -> BuildResult<()> {
        let dir = sub.root.clone();
        // Kustomize quotes the failure whole; where the entry is written
        // follows when the failure does not say where it is.
        let in_directory = |e: BuildError| {
            let located = e.has_location();
            let e = BuildError::new(format!("accumulateDirectory: \"{}\"", e));
            if located {
                e
            } else {
                e.located(place.file, place.pos)
            }
        };
        let (k, k_path) = crate::kustomization::load(sub, self.version)
            .map_err(|e| e.no_target(&dir))
            .map_err(in_directory)?;
        if k.kind != "Component" {
            return Err(in_directory(BuildError::new(format!(
                "expected kind 'Component' for path '{}' but got '{}'",
                dir.display(),
                k.kind
            ))));
        }
        self.warnings.extend(k.warnings.iter().cloned());
        self.choose_schema(sub, &k, &k_path)?;
        self.chain.push(dir.clone());
        let result = self.accumulate_into(sub, &k, &k_path, acc);
        self.chain.pop();
        result.map_err(|e| {
            in_directory(e.context(format!("recursed accumulation of path '{}'", dir.display())))
        })?;
        // Kustomize merges a component's accumulation back into a new one:
        // two resources a replacement gave one id fail there, and the
        // configuration is merged into an empty one.
        let merging = |e: BuildError| {
            in_directory(e.context(format!("recursed merging from path '{}'", dir.display())))
        };
        acc.resmap
            .check_unique()
            .map_err(|e| merging(BuildError::from(e)))?;
        if !acc.config.is_plain_defaults() {
            acc.config = Cow::Owned(
                acc.config
                    .merged_into_empty()
                    .map_err(|e| merging(BuildError::from(e)))?,
            );
        }
        Ok(())
    }

    /// Fails when `dir` contains a kustomization being built.
    fn check_cycle(&self, dir: &Path) -> BuildResult<()> {
        let chain = &self.chain[self.remotes.chain_floor..];
        if let Some(visited) = chain.iter().find(|v| crate::loader::is_within(v, dir)) {
            let cycle: Vec<String> = chain
                .iter()
                .map(|p| p.display().to_string())
                .chain(std::iter::once(dir.display().to_string()))
                .collect();
            return Err(BuildError::new(format!(
                "cycle detected: candidate root '{}' contains visited root '{}' ({})",
                dir.display(),
                visited.display(),
                cycle.join(" -> ")
            )));
        }
        Ok(())
    }
    /// Reads the resources a path names: a file of documents, or a
    /// directory holding a kustomization, which is built; or, by URL, a
    /// remote file or a folder of a remote repository.
    pub(crate) fn resources_at(&mut self, loader: &Loader, entry: &str) -> BuildResult<Gathered> {
        self.resources_at_entry(loader, entry, None)
    }

    /// [`Context::resources_at`] for an entry written at `place`, which a
    /// failure of the entry itself names.
    fn resources_at_entry(
        &mut self,
        loader: &Loader,
        entry: &str,
        place: Option<Place<'_>>,
    ) -> BuildResult<Gathered> {
        let here = |e: BuildError| match &place {
            Some(p) => e.located(p.file, p.pos),
            None => e,
        };
        if krusty_fetch::is_http_url(entry) {
            return self.resources_at_url(loader, entry).map_err(here);
        }
        let from = |e: BuildError| e.context(format!("accumulating resources from '{entry}'"));
        if let Ok(url) = GitUrl::parse(entry) {
            // Kustomize reads the name as a local file first.
            let as_file = match loader.entry(entry) {
                Ok(Entry::File(found)) => return self.resources_in_file(loader, entry, found),
                Ok(Entry::Dir(dir)) => format!("read {}: is a directory", dir.display()),
                Err(e) => e.to_string(),
            };
            let as_file = format!("accumulating resources from '{entry}': {as_file}");
            return self.remote_base(&url, &as_file).map_err(here);
        }
        match loader.entry(entry).map_err(|e| from(here(e)))? {
            Entry::File(found) => self.resources_in_file(loader, entry, found),
            Entry::Dir(dir) => {
                let as_dir = |e: BuildError| {
                    BuildError::new(format!(
                        "accumulation err='accumulating resources from '{entry}': '{}' must resolve to a file': {}",
                        dir.display(),
                        e
                    ))
                };
                loader
                    .check_containment(&dir)
                    .map_err(|e| as_dir(here(e)))?;
                self.check_cycle(&dir).map_err(|e| as_dir(here(e)))?;
                if let Some(file) = self.find_composition(&dir).map_err(|e| as_dir(here(e)))? {
                    self.chain.push(dir.clone());
                    let gathered = self.composition_base(&file, loader.restrictor);
                    self.chain.pop();
                    return gathered.map_err(as_dir);
                }
                let sub = loader.below(dir.clone());
                self.base_at(&sub).map_err(|e| {
                    // A folder that holds no kustomization is the entry's fault.
                    let unreadable = e.is_no_target();
                    as_dir(if unreadable { here(e) } else { e })
                })
            }
        }
    }

    /// The resources of a local file named in `resources:`.
    fn resources_in_file(
        &mut self,
        loader: &Loader,
        entry: &str,
        found: crate::loader::FoundFile,
    ) -> BuildResult<Gathered> {
        let _timer = Timings::start(self.timings.as_ref(), &loader.root, || {
            "read resources".to_string()
        });
        let from = |e: BuildError| e.context(format!("accumulating resources from '{entry}'"));
        let path = found.path.clone();
        let text = loader.read_found(found).map_err(from)?;
        if is_composition_file(&path, &text) {
            let folder = Path::new(entry)
                .parent()
                .filter(|p| !p.as_os_str().is_empty());
            return Err(from(BuildError::new(format!(
                "{} is a composition file: list its folder ('{}') in resources:, not the file",
                path.display(),
                folder.map_or_else(|| ".".to_string(), |f| f.display().to_string())
            ))));
        }
        self.resources_in_text(&text, &path, entry, loader.remote.as_ref())
    }

    /// The resources in `text`, read from `path` (named `entry`).
    fn resources_in_text(
        &self,
        text: &str,
        path: &Path,
        entry: &str,
        remote: Option<&Arc<krusty_resource::RemoteRoot>>,
    ) -> BuildResult<Gathered> {
        let from = |e: BuildError| e.context(format!("accumulating resources from '{entry}'"));
        let mut resources = resources_from_text(text, path).map_err(from)?;
        for r in &mut resources {
            if self.build_records {
                check_annotations_map(r, entry).map_err(from)?;
            }
            r.meta.origin = Some(Box::new(Origin::File(path.to_path_buf()).within(remote)));
        }
        Ok((Hashed::of(resources), None))
    }

    /// The resources of an HTTP(S) URL: a file of documents when the
    /// server has one there, else a remote git reference (Kustomize's
    /// order: it asks for the file first).
    fn resources_at_url(&mut self, loader: &Loader, entry: &str) -> BuildResult<Gathered> {
        let from = |e: String| format!("accumulating resources from '{entry}': {e}");
        let git = GitUrl::parse(entry);
        // Kustomize waits for ever; krusty as long as a git command of
        // the same reference may take.
        let timeout = git
            .as_ref()
            .map_or(krusty_fetch::HTTP_TIMEOUT, |url| url.timeout);
        let timer = Timings::start(self.timings.as_ref(), &loader.root, || {
            "fetch remote file".to_string()
        });
        let fetched = self.remotes.fetcher.file(entry, timeout);
        drop(timer);
        let as_file = match fetched {
            Ok(body) => {
                let text = std::str::from_utf8(&body)
                    .map_err(|_| BuildError::new(from("the file is not UTF-8 text".to_string())));
                // The origin records the URL without its credentials.
                let shown = krusty_fetch::redact(entry);
                match text.and_then(|t| {
                    self.resources_in_text(t, Path::new(&*shown), entry, loader.remote.as_ref())
                }) {
                    Ok(gathered) => return Ok(gathered),
                    Err(e) => match git {
                        Ok(url) => {
                            return self.remote_base(&url, &e.to_string()).map_err(|git_error| {
                                if e.is_malformed_yaml() && !git_error.is_timeout() {
                                    e
                                } else {
                                    git_error
                                }
                            })
                        }
                        Err(_) => return Err(e),
                    },
                }
            }
            Err(e @ krusty_fetch::FetchError::HttpStatus { .. }) if git.is_err() => {
                return Err(BuildError::new(from(e.to_string())))
            }
            Err(krusty_fetch::FetchError::HttpStatus { .. }) => {
                from("URL is a git repository".to_string())
            }
            Err(e) => from(e.to_string()),
        };
        match git {
            Ok(url) => self.remote_base(&url, &as_file),
            Err(_) => {
                let local = loader.entry(entry).err().map_or_else(
                    || "must build at directory".to_string(),
                    |e| format!("must build at directory: not a valid directory: {e}"),
                );
                Err(BuildError::new(format!(
                    "accumulation err='{as_file}': {local}"
                )))
            }
        }
    }

    /// Builds the folder a remote git reference names as a base; a
    /// failure is reported after `as_file`, why the reference is no file.
    fn remote_base(&mut self, url: &GitUrl, as_file: &str) -> BuildResult<Gathered> {
        let as_dir = |e: BuildError| e.context(format!("accumulation err='{as_file}'"));
        let shown = krusty_fetch::redact(&url.raw);
        let timer = Timings::start(self.timings.as_ref(), Path::new(&*shown), || {
            "fetch remote base".to_string()
        });
        let sub = self.remotes.loader(url, true).map_err(as_dir)?;
        drop(timer);
        self.in_remote(&url.raw, |ctx| ctx.base_at(&sub))
            .map_err(as_dir)
    }

    /// Builds the base in `sub`'s root.
    fn base_at(&mut self, sub: &Loader) -> BuildResult<Gathered> {
        let cache = match &self.bases {
            Some(cache)
                if !self.build_records
                    && !self.record_transformations
                    && self.remotes.chain.is_empty()
                    && sub.checkout.is_none() =>
            {
                Arc::clone(cache)
            }
            _ => return self.build_base(sub),
        };
        let key = crate::base_cache::Key {
            dir: sub.root.clone(),
            helm_root_namespace: self.helm_root_namespace.clone(),
        };
        let hit = cache
            .get(&key)
            .filter(|b| b.schema == self.schema && !b.roots.iter().any(|r| self.chain.contains(r)));
        if let Some(hit) = hit {
            self.warnings.extend(hit.warnings.iter().cloned());
            if let Some(outer) = &self.inputs {
                outer.extend(&hit.inputs);
            }
            return Ok((hit.resources.clone(), Some(hit.sub.clone())));
        }
        let schema = self.schema.clone();
        let warnings_before = self.warnings.len();
        let log = Arc::new(InputLog::default());
        let outer = self.inputs.replace(Arc::clone(&log));
        let recording = sub.clone().recording(Arc::clone(&log));
        let built = self.build_base(&recording);
        self.inputs = outer;
        let inputs = log.take();
        if let Some(outer) = &self.inputs {
            outer.extend(&inputs);
        }
        let (resources, sub_target) = built?;
        if let Some(sub_target) = sub_target.as_ref().filter(|_| self.schema == schema) {
            let roots = inputs
                .files
                .iter()
                .filter(|f| {
                    f.file_name()
                        .is_some_and(|n| n == crate::kustomization::FILE_NAMES[0])
                })
                .filter_map(|f| f.parent().map(Path::to_path_buf))
                .collect();
            cache.insert(
                key,
                crate::base_cache::Built {
                    resources: resources.clone(),
                    sub: sub_target.clone(),
                    warnings: self.warnings[warnings_before..].to_vec(),
                    inputs,
                    schema,
                    roots,
                },
            );
        }
        Ok((resources, sub_target))
    }

    /// Builds the base folder `sub` (see [`Context::base_at`]).
    fn build_base(&mut self, sub: &Loader) -> BuildResult<Gathered> {
        // Kustomize names the base whose accumulation failed (not one
        // whose kustomization could not be read).
        let recursed = |e: BuildError| match e {
            e if e.is_no_target() => e,
            e => e.context(format!(
                "recursed accumulation of path '{}'",
                sub.root.display()
            )),
        };
        let (k, path) = self.load_target(sub).map_err(recursed)?;
        // A component is refused before anything in it is built.
        if k.kind == "Component" {
            return Err(BuildError::new(format!(
                "expected kind != 'Component' for path '{}'",
                sub.root.display()
            )));
        }
        let level = self.accumulate_target(sub, k, &path).map_err(recursed)?;
        Ok((
            level.resmap.into_hashed(),
            Some(SubTarget {
                dir: sub.root.clone(),
                config: level.config,
                vars: level.vars,
            }),
        ))
    }

    /// Runs `build` inside the remote reference `raw`: cycles of folders
    /// are looked for within its checkout only.
    pub(crate) fn in_remote<T>(
        &mut self,
        raw: &str,
        build: impl FnOnce(&mut Context) -> BuildResult<T>,
    ) -> BuildResult<T> {
        let floor = std::mem::replace(&mut self.remotes.chain_floor, self.chain.len());
        self.remotes.chain.push(raw.to_string());
        let result = build(self);
        self.remotes.chain.pop();
        self.remotes.chain_floor = floor;
        result
    }

    /// A context for building one entry of `resources:` on its own (on
    /// another thread): the same chain, schema choice and policy, and
    /// warnings of its own.
    fn fork(&self) -> Context {
        Context {
            version: self.version,
            helm_root_namespace: self.helm_root_namespace.clone(),
            chain: self.chain.clone(),
            warnings: Vec::new(),
            schema: self.schema.clone(),
            record_transformations: self.record_transformations,
            records: self.records.clone(),
            build_records: self.build_records,
            policy: self.policy.clone(),
            host: Arc::clone(&self.host),
            helm: Arc::clone(&self.helm),
            read_ahead: Arc::clone(&self.read_ahead),
            reads: Arc::clone(&self.reads),
            remotes: self.remotes.clone(),
            catalogs: Arc::clone(&self.catalogs),
            inputs: self.inputs.clone(),
            top_kustomization: None,
            bases: self.bases.clone(),
            timings: self.timings.clone(),
        }
    }

    /// Looks for a composition file in `dir`, recording the names looked
    /// for when the build records its inputs.
    fn find_composition(&self, dir: &Path) -> BuildResult<Option<PathBuf>> {
        if let Some(inputs) = &self.inputs {
            for name in crate::composition::FILE_NAMES {
                inputs.file(&dir.join(name));
            }
        }
        crate::composition::find(dir)
    }

    /// Adds the resources of every `resources:` entry to `acc`, in order.
    /// The entries are read and built in parallel, each on a forked
    /// context, and added in entry order with their warnings, so the
    /// result (and the first error) is what building them one after the
    /// other gives. The one thing an entry passes on to the next is the
    /// `openapi:` choice (the first base with one decides, and what the
    /// entries before it did with the built-in schema shapes its choice):
    /// an entry whose build that choice changes is built again, in order.
    fn accumulate_resources(
        &mut self,
        loader: &Loader,
        k: &Kustomization,
        k_path: &Path,
        acc: &mut Accumulator,
    ) -> BuildResult<()> {
        let entries = &k.resources;
        // A failure of an entry itself (what it names is missing, a
        // cycle, a duplicate) names the entry's place in the file.
        let place = |i: usize| Place {
            file: k_path,
            pos: EntryPositions::at(&k.positions.resources, i),
        };
        if entries.len() < 2 {
            for (i, entry) in entries.iter().enumerate() {
                let gathered = self.resources_at_entry(loader, entry, Some(place(i)));
                self.accumulate_entry(entry, gathered, acc)
                    .map_err(|e| place(i).locate_duplicate(e))?;
            }
            return Ok(());
        }
        let start = self.schema.clone();
        let built: Vec<(Context, BuildResult<Gathered>)> = entries
            .par_iter()
            .enumerate()
            .map(|(i, entry)| {
                let mut fork = self.fork();
                let gathered = fork.resources_at_entry(loader, entry, Some(place(i)));
                (fork, gathered)
            })
            .collect();
        acc.resmap.reserve(
            built
                .iter()
                .filter_map(|(_, gathered)| gathered.as_ref().ok())
                .map(|(resources, _)| resources.len())
                .sum(),
        );
        for (i, (entry, (fork, gathered))) in entries.iter().zip(built).enumerate() {
            let gathered = if self.schema.outdates(&start, &fork.schema) {
                self.resources_at_entry(loader, entry, Some(place(i)))
            } else {
                self.warnings.extend(fork.warnings);
                self.schema.absorb(fork.schema);
                gathered
            };
            self.accumulate_entry(entry, gathered, acc)
                .map_err(|e| place(i).locate_duplicate(e))?;
        }
        Ok(())
    }

    fn accumulate_entry(
        &mut self,
        entry: &str,
        gathered: BuildResult<Gathered>,
        acc: &mut Accumulator,
    ) -> BuildResult<()> {
        let (resources, sub) = gathered?;
        self.schema.note_resources(resources.iter());
        if let Some(sub) = &sub {
            merge_config(&mut acc.config, &sub.config)
                .map_err(|e| BuildError::from(e).context("merging transformer configurations"))?;
            acc.vars.merge(sub.vars.vars()).map_err(|e| {
                BuildError::from(e)
                    .context(format!(
                        "recursed merging from path '{}'",
                        sub.dir.display()
                    ))
                    .context(format!("accumulating resources from '{entry}'"))
            })?;
        }
        acc.resmap.extend_hashed(resources).map_err(|e| {
            let e = BuildError::from(e);
            let e = match &sub {
                Some(sub) => e.context(format!(
                    "recursed merging from path '{}'",
                    sub.dir.display()
                )),
                None => e,
            };
            e.context(format!("accumulating resources from '{entry}'"))
        })
    }
}

/// Where an entry of a kustomization is written.
#[derive(Clone, Copy)]
struct Place<'a> {
    file: &'a Path,
    pos: krusty_yaml::Pos,
}

impl Place<'_> {
    /// `e`, located here when it is a duplicate the entry added.
    fn locate_duplicate(&self, e: BuildError) -> BuildError {
        if matches!(e.root_cause(), BuildError::ResMap(_)) {
            e.located(self.file, self.pos)
        } else {
            e
        }
    }
}

/// What one `resources:` entry gives: its resources (with their identities
/// hashed where they were read or built, often on another thread), and for
/// a directory, what else its build passes up.
pub(crate) type Gathered = (Hashed, Option<SubTarget>);

/// Merges `other` into `config`, copying the shared defaults only when
/// the merge changes them.
fn merge_config(config: &mut Config, other: &Config) -> krusty_ops::OpResult<()> {
    if other.is_plain_defaults() {
        if config.is_plain_defaults() {
            return Ok(());
        }
        if config.is_empty() {
            *config = other.clone();
            return Ok(());
        }
    }
    if other.is_empty() {
        return Ok(());
    }
    config.to_mut().merge(other)
}

/// `operations`, their origins placed in `loader`'s remote base if it is
/// one (those read from another remote base already name theirs).
fn in_remote(mut operations: Vec<Operation>, loader: &Loader) -> Vec<Operation> {
    if let Some(remote) = &loader.remote {
        for op in &mut operations {
            op.within_remote(remote);
        }
    }
    operations
}

/// The stages of a kustomization level (or component), in the order
/// Kustomize runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// `resources:` (and `bases:`): files read, folders built as bases.
    Resources,
    /// `configurations:` and `crds:` join the transformer configuration.
    Configurations,
    /// ConfigMap and Secret generators, Helm charts, `generators:`.
    Generators,
    /// `components:`, each run over the level's accumulation.
    Components,
    /// The builtin transformers of the fields, then `transformers:`.
    Transformers,
    /// `validators:`.
    Validators,
    /// `vars:` are declared.
    Vars,
}

/// A kustomization level: its stages in order.
pub const LEVEL_STAGES: [Stage; 7] = [
    Stage::Resources,
    Stage::Configurations,
    Stage::Generators,
    Stage::Components,
    Stage::Transformers,
    Stage::Validators,
    Stage::Vars,
];

impl Build for Context {
    fn version(&self) -> KustomizeVersion {
        self.version
    }

    fn env<'a>(&'a self, loader: &'a Loader) -> Env<'a> {
        Env {
            files: loader,
            custom_schema: self.schema.custom(),
            builtin_schema_read: Some(self.schema.builtin_read_flag()),
            record_transformations: self.record_transformations,
            build_records: self.build_records,
            version: self.version,
        }
    }

    fn timings(&self) -> Option<&Arc<Timings>> {
        self.timings.as_ref()
    }

    fn run_function(
        &mut self,
        call: &FunctionCall,
        role: Role,
        resources: &mut ResMap,
        origin: &Origin,
    ) -> Result<Vec<Resource>, krusty_runtime::RunError> {
        let mut notes = Vec::new();
        let (records, root) = &self.records;
        let annotations = |meta: &BuildMeta| records.annotations(meta, root);
        let shown = Shown {
            annotations: &annotations,
            transformations: records.transformations,
        };
        let ran = self
            .host
            .run(call, role, resources, origin, &shown, &mut notes);
        self.warnings.extend(notes);
        ran
    }

    fn load_resources(&mut self, loader: &Loader, path: &str) -> BuildResult<Hashed> {
        self.resources_at(loader, path)
            .map(|(resources, _)| resources)
    }

    fn run_kustomization(
        &mut self,
        loader: &Loader,
        k: &Kustomization,
        file: &Path,
        resources: &mut ResMap,
    ) -> BuildResult<()> {
        let mut acc = Accumulator {
            resmap: std::mem::take(resources),
            ..Accumulator::default()
        };
        let ran = self.accumulate_into(loader, k, file, &mut acc);
        *resources = acc.resmap;
        ran
    }

    fn plan_composition(
        &mut self,
        file: &Path,
        restrictor: LoadRestrictor,
    ) -> BuildResult<Pipeline> {
        let list = crate::composition::consolidate(file, restrictor)?;
        crate::composition::pipeline(self, &list, restrictor)
    }
}
