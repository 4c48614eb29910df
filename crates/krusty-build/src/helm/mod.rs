//! Helm charts: the HelmChartInflationGenerator. A chart named in
//! `helmCharts` (or by a builtin config in `generators:`) is inflated by
//! the helm binary (`helm template`, after a `helm pull` when the chart is
//! not in the chart home yet), in a private temporary environment, and
//! what it prints becomes resources, as in Kustomize. Helm v3 and v4 both
//! work.

pub mod archive;
pub mod args;
pub mod cache;
pub mod confine;
pub mod pull;
pub mod run;
pub mod validate;
pub mod values;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use krusty_fetch::{Cache, FetchError, Fetcher, Kept};
use krusty_ops::absorb::absorb;
use krusty_ops::builtins::namespace::HELM_GENERATED_ANNOTATION;
use krusty_ops::KustomizeVersion;
use krusty_resource::{Origin, ResMap, Resource};

use crate::error::{BuildError, BuildResult};
use crate::kustomization::Kustomization;
use crate::loader::{self, clean, is_within, LoadRestrictor, Loader};
use crate::pipeline::{Apply, Build, Call, Operation, Role};
use krusty_schema::helm::{self as config, ChartConfig};
use run::{Invocation, TempDir};
use values::Merge;

/// The kind of the builtin generator.
pub const KIND: &str = "HelmChartInflationGenerator";

/// The chart home when `helmGlobals.chartHome` is not set.
pub const DEFAULT_CHART_HOME: &str = "charts";

/// The Helm flags of a build.
#[derive(Debug, Clone)]
pub struct HelmOptions {
    /// `--enable-helm`: charts may be inflated.
    pub enabled: bool,
    /// `--helm-command`: the helm binary (a path or a name on `PATH`).
    pub command: String,
    /// `--helm-api-versions`: for `.Capabilities.APIVersions`, unless a
    /// chart sets `apiVersions`.
    pub api_versions: Vec<String>,
    /// `--helm-kube-version`: for `.Capabilities.KubeVersion`, unless a
    /// chart sets `kubeVersion`.
    pub kube_version: String,
    /// `--helm-debug`: helm's `--debug`.
    pub debug: bool,
    /// The longest one helm command may run.
    pub timeout: Duration,
    /// The most one helm command may print on stdout.
    pub max_output: usize,
    /// Keep helm's output in krusty's cache and reuse it (see [`cache`]).
    pub cache: bool,
}

impl Default for HelmOptions {
    fn default() -> HelmOptions {
        HelmOptions {
            enabled: false,
            command: "helm".into(),
            api_versions: Vec::new(),
            kube_version: String::new(),
            debug: false,
            timeout: Duration::from_secs(300),
            max_output: 512 << 20,
            cache: true,
        }
    }
}

/// Helm for one build: the options, the version of the binary (asked
/// once), the API versions charts share, and the build's fetcher (its
/// cache, and charts pulled at an exact version).
#[derive(Debug)]
pub(crate) struct Helm {
    /// The flags.
    pub opts: HelmOptions,
    /// Fetches charts pulled at an exact version; its cache is krusty's.
    fetcher: Arc<Fetcher>,
    /// `--offline`: no pull, charts come from the chart home or the cache.
    offline: bool,
    version: OnceLock<Result<String, BuildError>>,
    /// The storage of `--helm-api-versions`, which charts share in
    /// Kustomize (see [`ApiVersions`]): as long as Go's slice has room.
    shared_api_versions: Mutex<Vec<String>>,
}

/// The API versions a chart passes to helm.
///
/// Kustomize gives every chart the `--helm-api-versions` list itself, and
/// decodes a chart's own `apiVersions` into it: a chart's list that fits
/// in the flag list's storage (Go's capacity) is written over it, so the
/// charts configured before (in the build, not only in the kustomization)
/// that kept the flag's list, or wrote their own over it, see the later
/// chart's entries instead. Charts are configured before any of a
/// kustomization's run, so within one kustomization the last such chart
/// decides for all.
#[derive(Debug, Clone)]
enum ApiVersions {
    /// A list of its own.
    Own(Vec<String>),
    /// The first `n` entries of the shared storage.
    Shared(usize),
}

impl Helm {
    /// Helm with these flags, fetching through `fetcher` (`offline`: from
    /// its cache only).
    pub(crate) fn new(opts: HelmOptions, fetcher: Arc<Fetcher>, offline: bool) -> Helm {
        let mut shared = opts.api_versions.clone();
        shared.resize(go_capacity(shared.len()), String::new());
        Helm {
            opts,
            fetcher,
            offline,
            version: OnceLock::new(),
            shared_api_versions: Mutex::new(shared),
        }
    }

    /// The cache for charts' output, unless turned off.
    fn cache(&self) -> BuildResult<Option<&Cache>> {
        match self.opts.cache {
            true => self.chart_cache().map(Some),
            false => Ok(None),
        }
    }

    /// The cache pulled charts are kept in (krusty's, as the build's
    /// fetcher finds it); one refused (or not found) is an error naming
    /// it.
    fn chart_cache(&self) -> BuildResult<&Cache> {
        self.fetcher.cache().map_err(|e| {
            BuildError::Fetch(FetchError::Cache(format!(
                "{e} (--no-helm-cache inflates charts without krusty's cache)"
            )))
        })
    }

    /// The API versions of a chart whose own are `own`, as Kustomize
    /// configures it (see [`ApiVersions`]).
    fn configure_api_versions(&self, own: Option<Vec<String>>) -> ApiVersions {
        let given = self.opts.api_versions.len();
        let Some(own) = own else {
            return match given {
                0 => ApiVersions::Own(Vec::new()),
                n => ApiVersions::Shared(n),
            };
        };
        if given == 0 {
            return ApiVersions::Own(own);
        }
        let mut shared = self
            .shared_api_versions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let room = shared.len();
        for (slot, version) in shared.iter_mut().zip(&own) {
            slot.clone_from(version);
        }
        if own.len() <= room {
            ApiVersions::Shared(own.len())
        } else {
            ApiVersions::Own(own)
        }
    }

    /// The list `versions` stands for now.
    fn api_versions(&self, versions: &ApiVersions) -> Vec<String> {
        match versions {
            ApiVersions::Own(list) => list.clone(),
            ApiVersions::Shared(n) => {
                let shared = self
                    .shared_api_versions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                shared.iter().take(*n).cloned().collect()
            }
        }
    }

    /// The binary's version, checked to be 3 or 4 (asked on first use,
    /// with `config_home` as its environment).
    fn version(&self, config_home: &Path) -> BuildResult<&str> {
        self.version
            .get_or_init(|| {
                let out = self
                    .invocation(config_home)
                    .run(&["version".into(), "--short".into()])?;
                run::check_version(&out)
            })
            .as_deref()
            .map_err(Clone::clone)
    }

    fn invocation<'a>(&'a self, config_home: &'a Path) -> Invocation<'a> {
        Invocation {
            command: &self.opts.command,
            config_home,
            timeout: self.opts.timeout,
            max_output: self.opts.max_output,
        }
    }
}

/// The capacity of a Go slice of strings after `n` appends, one at a time,
/// from empty (doubling up to 256 entries, then growing by a quarter and
/// 192 entries, as Go's runtime does, without its allocator's rounding).
fn go_capacity(n: usize) -> usize {
    let mut cap: usize = usize::from(n > 0);
    while cap < n {
        cap = if cap < 256 {
            cap * 2
        } else {
            cap + (cap + 768) / 4
        };
    }
    cap
}

/// A chart ready to inflate: its configuration checked, with the flags
/// applied and the paths resolved.
#[derive(Debug, Clone)]
pub(crate) struct Chart {
    chart: ChartConfig,
    helm: Arc<Helm>,
    /// Reads values files under the kustomization's load restrictions.
    loader: Loader,
    /// The chart home (for a chart pulled by version, its own folder in it).
    chart_home: PathBuf,
    /// The values file (the chart's `values.yaml` by default).
    values_file: PathBuf,
    /// The values file's path in the chart's folder, when it lies there:
    /// read from the chart in krusty's cache when the chart is there.
    values_in_chart: Option<PathBuf>,
    additional_values_files: Vec<PathBuf>,
    merge: Merge,
    api_versions: ApiVersions,
    kube_version: String,
    debug: bool,
    /// The Kustomize release whose rules apply: from v5.8.1 on, each
    /// resource of the chart is marked as helm's, so that the namespace
    /// transformer leaves it alone.
    version: KustomizeVersion,
}

/// Where a chart's namespace comes from besides its own `namespace`
/// field: from Kustomize v5.8.1 on, the kustomization's `namespace`, else
/// the nearest one of the kustomizations above it (`inherited`).
pub(crate) struct NamespaceRule<'a> {
    /// The Kustomize release whose rule applies.
    pub version: KustomizeVersion,
    /// The namespace of the nearest kustomization above that sets one.
    pub inherited: &'a str,
}

/// The generators of a kustomization's `helmCharts` (with its
/// `helmGlobals`), configured in order; the first that does not configure
/// fails, in Kustomize's words.
pub(crate) fn field_operations(
    helm: &Arc<Helm>,
    loader: &Loader,
    k: &Kustomization,
    k_path: &Path,
    rule: &NamespaceRule<'_>,
) -> BuildResult<Vec<Operation>> {
    let globals = k.helm_globals.clone().unwrap_or_default();
    let newer = rule.version >= KustomizeVersion::V5_8_1;
    k.helm_charts
        .iter()
        .map(|chart| {
            let chart = ChartConfig {
                globals: globals.clone(),
                ..chart.clone()
            };
            // The namespace a chart gets from its kustomization is shown in
            // messages, and passed to helm unchecked, as Kustomize does.
            let given = match k.namespace.as_str() {
                _ if !newer || !chart.namespace.is_empty() => None,
                "" if rule.inherited.is_empty() => None,
                "" => Some(rule.inherited.to_string()),
                own => Some(own.to_string()),
            };
            let mut shown_chart = chart.clone();
            if let Some(namespace) = &given {
                shown_chart.namespace = namespace.clone();
            }
            let shown = krusty_fetch::redact(&shown_chart.to_yaml()).into_owned();
            let configured = configure(chart, loader, helm, rule.version).map(|mut chart_run| {
                if let Some(namespace) = given {
                    chart_run.chart.namespace = namespace;
                }
                chart_run
            });
            let chart_run = configured.map_err(|e| {
                e.context(format!(
                    "trouble configuring builtin {KIND} with config: `\n{shown}`"
                ))
            })?;
            let origin = Origin::Configured {
                configured_in: k_path.to_path_buf(),
                api_version: "builtin".into(),
                kind: KIND.into(),
                name: String::new(),
                namespace: String::new(),
            };
            let label = format!("{KIND} {}", chart_run.chart.name);
            Ok(Operation::new(label, Role::Generator, chart_run, origin))
        })
        .collect()
}

/// The operation of an `apiVersion: builtin` `HelmChartInflationGenerator`
/// config `c` (named `id`), run in `role`, recording `origin`.
pub(crate) fn config_operation(
    c: &Resource,
    id: &krusty_resource::ResId,
    loader: &Loader,
    helm: &Arc<Helm>,
    origin: Origin,
    role: Role,
    version: KustomizeVersion,
) -> BuildResult<Operation> {
    let fails = |e: BuildError| e.context(format!("plugin {id} fails configuration"));
    if !helm.opts.enabled {
        return Err(fails(BuildError::new("must specify --enable-helm")));
    }
    let chart = config::read_builtin(&c.node, version).map_err(|e| {
        fails(BuildError::from(e).context("error unmarshaling JSON: while decoding JSON"))
    })?;
    let chart_run = configure(chart, loader, helm, version).map_err(fails)?;
    Ok(Operation::new(id.to_string(), role, chart_run, origin))
}

/// Checks `chart` and resolves it against the kustomization `loader` is
/// rooted in, as Kustomize configures its generator. An error is in
/// Kustomize's words, without the context it is reported in.
pub(crate) fn configure(
    mut chart: ChartConfig,
    loader: &Loader,
    helm: &Arc<Helm>,
    version: KustomizeVersion,
) -> BuildResult<Chart> {
    let opts = &helm.opts;
    if !opts.enabled {
        return Err(BuildError::new("must specify --enable-helm"));
    }
    if opts.command.is_empty() {
        return Err(BuildError::new("must specify --helm-command"));
    }
    if chart.name.is_empty() {
        return Err(BuildError::new("chart name cannot be empty"));
    }
    validate::chart(&chart)?;
    if chart.globals.chart_home.is_empty() {
        chart.globals.chart_home = DEFAULT_CHART_HOME.into();
    }
    let chart_home = chart_home(&chart, &loader.root);
    if loader.restrictor == LoadRestrictor::RootOnly {
        confine::folder("chart folder", &chart_home.join(&chart.name), &loader.root)?;
        if !chart.globals.config_home.is_empty() {
            confine::folder(
                "configHome",
                Path::new(&chart.globals.config_home),
                &loader.root,
            )?;
        }
    }
    let values_file = match chart.values_file.as_str() {
        "" => chart_home.join(&chart.name).join("values.yaml"),
        file => PathBuf::from(file),
    };
    let values_in_chart = clean(&loader.root.join(&values_file))
        .strip_prefix(chart_home.join(&chart.name))
        .ok()
        .map(Path::to_path_buf);
    let mut additional_values_files = Vec::new();
    for file in &chart.additional_values_files {
        load(loader, Path::new(file))
            .map_err(|e| e.context("could not load additionalValuesFile"))?;
        additional_values_files.push(clean(&loader.root.join(file)));
    }
    let merge = Merge::parse(&chart.values_merge)
        .ok_or_else(|| BuildError::new("valuesMerge must be one of [merge override replace]"))?;
    let api_versions = helm.configure_api_versions(chart.api_versions.clone());
    let kube_version = chart
        .kube_version
        .clone()
        .unwrap_or_else(|| opts.kube_version.clone());
    let debug = chart.debug.unwrap_or(opts.debug);
    Ok(Chart {
        chart,
        helm: Arc::clone(helm),
        loader: loader.clone(),
        chart_home,
        values_file,
        values_in_chart,
        additional_values_files,
        merge,
        api_versions,
        kube_version,
        debug,
        version,
    })
}

/// The folder holding the chart's folder: the chart home, absolute or
/// under the kustomization, and for a chart pulled by version (`repo` and
/// `version` set) its `NAME-VERSION` folder in it.
fn chart_home(chart: &ChartConfig, root: &Path) -> PathBuf {
    let home = root.join(&chart.globals.chart_home);
    let home = if chart.version.is_empty() || chart.repo.is_empty() {
        home
    } else {
        home.join(format!("{}-{}", chart.name, chart.version))
    };
    clean(&home)
}

/// Where a chart's folder is.
struct ChartDir {
    path: PathBuf,
    /// Whether it is there (else helm is to pull it there).
    present: bool,
    /// Whether it is a pulled chart kept in krusty's cache.
    cached: bool,
}

/// Whether `path` is a folder (symlinks followed).
fn is_dir(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_dir())
}

/// Reads a file named in the chart's configuration, under the load
/// restrictions; relative names are relative to the kustomization.
fn load(loader: &Loader, path: &Path) -> BuildResult<String> {
    let file = loader.file(&path.to_string_lossy())?;
    loader.read(&file, None)
}

impl Apply for Chart {
    /// Inflates the chart and adds its resources; Kustomize reports a
    /// chart's failure as it is.
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        let _timer = call.timer(build);
        self.generate(resources, call.origin)
    }
}

impl Chart {
    /// Inflates the chart and adds its resources to `resources`, each
    /// recording `origin`.
    fn generate(&self, resources: &mut ResMap, origin: &Origin) -> BuildResult<()> {
        for mut r in self.inflate()? {
            r.meta.origin = Some(Box::new(origin.clone()));
            if self.version >= KustomizeVersion::V5_8_1 {
                r.set_annotation(HELM_GENERATED_ANNOTATION, "true");
            }
            absorb(resources, r, self.version).map_err(BuildError::from)?;
        }
        Ok(())
    }

    /// The resources of the chart: helm's output, from the cache when the
    /// chart, values, flags and helm binary are those of an earlier run.
    fn inflate(&self) -> BuildResult<Vec<Resource>> {
        let tmp = TempDir::new()?;
        let chart_dir = self.locate(&tmp)?;
        if chart_dir.present {
            self.confine(&chart_dir)?;
        }
        let output_cache = match chart_dir.present {
            true => self.helm.cache()?,
            false => None,
        };
        let stdout = match output_cache {
            Some(cache) => {
                let values = self.values_text(&chart_dir)?;
                let entry = self
                    .cache_key(&chart_dir.path, &values)
                    .map(|k| k.entry(cache));
                let max = u64::try_from(self.helm.opts.max_output).unwrap_or(u64::MAX);
                match entry.as_ref().and_then(|e| cache::output(cache, e, max)) {
                    Some(hit) => hit,
                    None => {
                        let out = self.run_helm(&tmp, &chart_dir, Some(values))?;
                        if let Some(entry) = entry {
                            // A cache that cannot be written costs the next
                            // build a helm run, nothing more.
                            let _ = cache::keep_output(cache, &entry, &out);
                        }
                        out
                    }
                }
            }
            _ => self.run_helm(&tmp, &chart_dir, None)?,
        };
        read_output(&String::from_utf8_lossy(&stdout), &self.chart.name)
    }

    /// The chart's folder, and whether it is there: the chart home's when
    /// present; else, for a chart with `repo` and krusty's cache in use
    /// (or `--offline`), the cache's (pulled into it on first use); else
    /// the chart home's, where helm is to pull it, as Kustomize does.
    fn locate(&self, tmp: &TempDir) -> BuildResult<ChartDir> {
        let local = ChartDir {
            present: is_dir(&self.chart_home.join(&self.chart.name)),
            path: self.chart_home.join(&self.chart.name),
            cached: false,
        };
        if local.present || self.chart.repo.is_empty() || !self.values_readable_from_cache() {
            return Ok(local);
        }
        let use_cache = self.helm.opts.cache || self.helm.offline;
        let pulled = match use_cache {
            true => self.pulled(self.helm.chart_cache()?, tmp)?,
            false => None,
        };
        Ok(match pulled {
            Some(path) => ChartDir {
                path,
                present: true,
                cached: true,
            },
            None => local,
        })
    }

    /// Checks the files of the chart's folder (see [`confine`]): a chart
    /// in the tree may not lead out of the kustomization's root (under
    /// `LoadRestrictionsRootOnly`), a pulled one out of its own folder.
    fn confine(&self, chart_dir: &ChartDir) -> BuildResult<()> {
        if !chart_dir.cached {
            self.loader.record_folder(&chart_dir.path);
        }
        let root = match (chart_dir.cached, self.loader.restrictor) {
            (true, _) => Some(loader::canonical(&chart_dir.path)?),
            (false, LoadRestrictor::RootOnly) => Some(self.loader.root.clone()),
            (false, _) => None,
        };
        confine::chart_tree(&chart_dir.path, root.as_deref())
    }

    /// Whether a values file in the chart's folder may be read from
    /// krusty's cache: the load restrictor would let it be read from the
    /// chart home. Otherwise the chart is pulled into the chart home, to
    /// fail there as in Kustomize.
    fn values_readable_from_cache(&self) -> bool {
        self.values_in_chart.is_none()
            || self.loader.restrictor != LoadRestrictor::RootOnly
            || is_within(&self.chart_home.join(&self.chart.name), &self.loader.root)
    }

    /// The chart in krusty's cache, pulled into it when missing: at an
    /// exact version by the fetch layer, checked against the repository's
    /// digest on every build (see [`pull`]); else by `helm pull`, once,
    /// published whole. Either is used only while its files are those
    /// kept (else pulled again; offline, an error). `None` when the cache
    /// cannot be written, so that the chart is pulled into the chart home
    /// instead.
    fn pulled(&self, cache: &Cache, tmp: &TempDir) -> BuildResult<Option<PathBuf>> {
        if validate::is_exact_version(&self.chart.version) {
            // helm is asked its version before a first pull, as Kustomize
            // asks it before anything else.
            if !self.helm.offline && pull::recorded(cache, &self.chart).is_none() {
                self.helm.version(&self.config_home(tmp))?;
            }
            return pull::chart(&self.helm.fetcher, self.helm.offline, cache, &self.chart);
        }
        let entry = cache::chart_entry(
            cache,
            &self.chart.repo,
            &self.chart.name,
            &self.chart.version,
        );
        match cache::kept_chart(cache, &entry, &self.chart.name) {
            Kept::Intact(dir) => return Ok(Some(dir)),
            Kept::Damaged(why) if self.helm.offline => {
                return Err(pull::damaged(&self.chart, &entry, &why))
            }
            Kept::Damaged(_) | Kept::Missing => {}
        }
        if self.helm.offline {
            return Err(self.offline_miss(Some(cache)));
        }
        let config_home = self.config_home(tmp);
        self.helm.version(&config_home)?;
        let Ok(staging) = cache.stage() else {
            return Ok(None);
        };
        let Ok(into) = staging.tree() else {
            return Ok(None);
        };
        self.helm
            .invocation(&config_home)
            .run(&args::pull(&self.chart, &into))?;
        let dir = cache::publish_chart(cache, &staging, &entry, &self.chart.name).map_err(|e| {
            BuildError::new(format!(
                "cannot keep the chart {} in krusty's cache ({}): {e}",
                self.chart.name,
                entry.display()
            ))
        })?;
        Ok(Some(dir))
    }

    /// The error of `--offline` for a chart that is neither in the chart
    /// home nor in `cache`.
    fn offline_miss(&self, cache: Option<&Cache>) -> BuildError {
        let version = match self.chart.version.as_str() {
            "" => String::new(),
            v => format!(" {v}"),
        };
        let cache = cache.map_or(String::new(), |c| {
            format!(" nor in the cache ({})", c.root().display())
        });
        BuildError::Fetch(FetchError::Offline(format!(
            "--offline: the chart {}{version} of {} is not in the chart home ({}){cache}; build once without --offline to pull it",
            self.chart.name,
            krusty_fetch::redact(&self.chart.repo),
            self.chart_home.display(),
        )))
    }

    /// `HELM_CONFIG_HOME` for the chart: its `configHome`, else a folder
    /// in its temporary folder.
    fn config_home(&self, tmp: &TempDir) -> PathBuf {
        match self.chart.globals.config_home.as_str() {
            "" => tmp.path().join("helm"),
            home => PathBuf::from(home),
        }
    }

    /// Runs helm for the chart as Kustomize does: version check, pull
    /// when the chart is not `present`, values (`values` when already
    /// read), template; returns what it printed.
    fn run_helm(
        &self,
        tmp: &TempDir,
        chart_dir: &ChartDir,
        values: Option<String>,
    ) -> BuildResult<Vec<u8>> {
        let config_home = self.config_home(tmp);
        self.helm.version(&config_home)?;
        let helm = self.helm.invocation(&config_home);
        if !chart_dir.present {
            if self.chart.repo.is_empty() {
                let shown = match chart_dir.path.exists() {
                    true => chart_dir.path.display().to_string(),
                    false => String::new(),
                };
                return Err(BuildError::new(format!(
                    "no repo specified for pull, no chart found at '{shown}'"
                )));
            }
            if self.helm.offline {
                return Err(self.offline_miss(self.helm.chart_cache().ok()));
            }
            helm.run(&args::pull(&self.chart, &self.chart_home))?;
        }
        let values = match values {
            Some(v) => v,
            None => self.values_text(chart_dir)?,
        };
        // A chart in a folder of the chart home (`team/app`) gets a file
        // of the temporary folder too.
        let values_file = tmp.path().join(format!(
            "{}-kustomize-values.yaml",
            self.chart.name.replace('/', "_")
        ));
        std::fs::write(&values_file, values)
            .map_err(|e| BuildError::new(format!("failed to write values file: {e}")))?;
        helm.run(&self.template_args(&chart_dir.path, &values_file))
    }

    /// The arguments of `helm template` with the values in `values_file`.
    fn template_args(&self, chart_dir: &Path, values_file: &Path) -> Vec<String> {
        args::template(
            &self.chart,
            &args::TemplateInputs {
                chart_dir,
                values_file,
                additional_values_files: &self.additional_values_files,
                api_versions: &self.helm.api_versions(&self.api_versions),
                kube_version: &self.kube_version,
                debug: self.debug,
            },
        )
    }

    /// The cache key of the chart's output with `values`; `None` when a
    /// file it depends on cannot be read (helm then runs, and says why).
    fn cache_key(&self, chart_dir: &Path, values: &str) -> Option<cache::Key> {
        let program = run::resolve(&self.helm.opts.command).ok()?;
        let mut key = cache::Key::new(&program).ok()?;
        for arg in self.template_args(chart_dir, Path::new("<values>")) {
            key.field(arg.as_bytes());
        }
        key.field(values.as_bytes());
        for file in &self.additional_values_files {
            key.file(file).ok()?;
        }
        key.tree(chart_dir).ok()?;
        Some(key)
    }

    /// The text of the values file helm is given.
    fn values_text(&self, chart_dir: &ChartDir) -> BuildResult<String> {
        let read = || match &self.values_in_chart {
            Some(rel) if chart_dir.cached => self.loader.read(&chart_dir.path.join(rel), None),
            _ => load(&self.loader, &self.values_file),
        };
        match self.chart.values_inline.as_ref() {
            Some(inline) if self.chart.has_inline_values() => {
                values::merged(inline, self.merge, read)
            }
            _ => read(),
        }
    }
}

/// The resources in helm's output. Should the whole not read (helm may
/// print messages before its first document), what follows the first
/// `---` line is read instead.
fn read_output(text: &str, chart: &str) -> BuildResult<Vec<Resource>> {
    let source = PathBuf::from(format!("helm template output of chart {chart}"));
    match crate::read::resources_from_text(text, &source) {
        Ok(resources) => Ok(resources),
        Err(first) => {
            let rest = text
                .find("\n---")
                .map(|at| &text[at + 1..])
                .filter(|_| !text.starts_with("---"));
            match rest {
                Some(rest) => crate::read::resources_from_text(rest, &source)
                    .map_err(|_| first.context("error reading helm output")),
                None => Err(first.context("could not parse bytes into resource map")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn helm(flags: &[&str]) -> Helm {
        let opts = HelmOptions {
            api_versions: flags.iter().map(|s| s.to_string()).collect(),
            ..HelmOptions::default()
        };
        Helm::new(opts, Arc::default(), false)
    }

    fn list(items: &[&str]) -> Option<Vec<String>> {
        Some(items.iter().map(|s| s.to_string()).collect())
    }

    /// The output cache and pulled charts live in the cache the build's
    /// fetch options name, not in the one the environment would give.
    #[test]
    fn helm_uses_the_cache_the_build_is_given() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = TempDir::new().unwrap();
        let root = tmp.path();
        let fake = root.join("fake-helm");
        std::fs::write(
            &fake,
            "#!/bin/sh\ncase \"$1\" in version) echo v3.17.2+gdead;; *) printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: c\\n';; esac\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(root.join("app/charts/c")).unwrap();
        std::fs::write(
            root.join("app/kustomization.yaml"),
            "helmCharts:\n- name: c\n",
        )
        .unwrap();
        std::fs::write(root.join("app/charts/c/Chart.yaml"), "name: c\n").unwrap();
        std::fs::write(root.join("app/charts/c/values.yaml"), "{}\n").unwrap();
        let opts = crate::BuildOptions {
            helm: HelmOptions {
                enabled: true,
                command: fake.display().to_string(),
                ..HelmOptions::default()
            },
            fetch: crate::FetchOptions {
                cache_dir: Some(root.join("given-cache")),
                ..crate::FetchOptions::default()
            },
            ..crate::BuildOptions::default()
        };
        let built = crate::build(&root.join("app"), &opts).unwrap();
        assert_eq!(built.resources.len(), 1);
        assert!(root.join("given-cache/helm").is_dir());
    }

    #[test]
    fn go_slices_double_then_grow_by_a_quarter() {
        let caps: Vec<usize> = [0, 1, 2, 3, 5, 9, 256, 257].map(go_capacity).to_vec();
        assert_eq!(caps, [0, 1, 2, 4, 8, 16, 256, 512]);
    }

    #[test]
    fn without_the_flag_each_chart_keeps_its_own() {
        let h = helm(&[]);
        let a = h.configure_api_versions(list(&["a/v1"]));
        let b = h.configure_api_versions(None);
        assert_eq!(h.api_versions(&a), ["a/v1"]);
        assert!(h.api_versions(&b).is_empty());
    }

    #[test]
    fn a_later_chart_list_that_fits_overwrites_the_flag_list() {
        let h = helm(&["flag/v1"]);
        let first = h.configure_api_versions(None);
        let own = h.configure_api_versions(list(&["own/v1"]));
        assert_eq!(h.api_versions(&first), ["own/v1"]);
        assert_eq!(h.api_versions(&own), ["own/v1"]);
        // A longer list gets storage of its own, after writing what fits.
        let long = h.configure_api_versions(list(&["x/v1", "y/v1"]));
        assert_eq!(h.api_versions(&long), ["x/v1", "y/v1"]);
        assert_eq!(h.api_versions(&first), ["x/v1"]);
    }
}
