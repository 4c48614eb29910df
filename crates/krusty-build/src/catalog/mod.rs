//! The Function Catalog (KEP-2906): `catalogs:` in Kustomizations,
//! Components and Compositions name catalog files, which say how the
//! functions of an apiVersion and kind run. A function config with no
//! runtime of its own is looked up in the official catalog (when one is
//! built in), then in the catalogs its layer names, in order; the first
//! match wins. Catalogs are fetched only when a lookup needs them, once per
//! build. `docs/catalog.md` states the rules.

mod image;
pub mod location;
pub mod official;
mod resolve;
pub mod source;
pub mod trust;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use krusty_fetch::Fetcher;
use krusty_yaml::Pos;

pub use krusty_schema::catalog as schema;
pub use location::Location;
pub use resolve::resolve;
pub use schema::{Catalog, FunctionDef, VersionDef};
pub use trust::Trust;

use crate::error::{BuildError, BuildResult};
use crate::loader::Loader;

/// A `catalogs:` entry: the reference as written, the loader its local
/// paths resolve with, and where it is written.
#[derive(Debug, Clone)]
pub struct CatalogRef {
    /// The reference as written (`--trusted-catalog` may name it so).
    pub written: String,
    /// Resolves a local path (under the layer's load restrictions).
    pub loader: Loader,
    /// The file it is written in.
    pub file: PathBuf,
    /// Where it is written.
    pub pos: Pos,
}

impl CatalogRef {
    /// The entries of a `catalogs:` list, written in `file` at
    /// `positions`, with paths relative to `loader`'s root.
    pub fn list(
        written: &[String],
        positions: &[Pos],
        loader: &Loader,
        file: &std::path::Path,
    ) -> Vec<CatalogRef> {
        written
            .iter()
            .enumerate()
            .map(|(i, w)| CatalogRef {
                written: w.clone(),
                loader: loader.clone(),
                file: file.to_path_buf(),
                pos: positions.get(i).copied().unwrap_or_default(),
            })
            .collect()
    }

    /// The key a loaded catalog is kept under: the file for a local path;
    /// a git reference (which may name a local file) with the folder it is
    /// written in; else the reference.
    fn key(&self) -> String {
        match source::Source::of(&self.written) {
            source::Source::Local(_) => self.loader.root.join(&self.written).display().to_string(),
            source::Source::Git(_) => {
                format!("{}\0{}", self.written, self.loader.root.display())
            }
            _ => self.written.clone(),
        }
    }
}

/// A catalog read, and what it was read from.
#[derive(Debug)]
pub struct Loaded {
    /// The catalog.
    pub catalog: Catalog,
    /// The file or URL it was read from.
    pub from: String,
    /// Where it is, as `--trusted-catalog` names it (`None`: nothing
    /// can trust it).
    pub location: Option<Location>,
}

type Slot = Arc<OnceLock<Result<Arc<Loaded>, BuildError>>>;

/// The catalogs of one build: each is fetched and read once, when a
/// lookup first needs it; and the places the user trusts.
#[derive(Debug)]
pub struct Store {
    fetcher: Arc<Fetcher>,
    trust: Trust,
    loaded: Mutex<HashMap<String, Slot>>,
}

impl Store {
    /// A store fetching with `fetcher`, trusting the catalogs at the
    /// places the `--trusted-catalog` values `trusted` name (local paths
    /// from the current directory; see [`Trust`]).
    pub fn new(fetcher: Arc<Fetcher>, trusted: Vec<String>) -> Store {
        Store::trusting(fetcher, Trust::new(&trusted, &current_dir()))
    }

    /// A store fetching with `fetcher`, trusting what `trust` names.
    pub fn trusting(fetcher: Arc<Fetcher>, trust: Trust) -> Store {
        Store {
            fetcher,
            trust,
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// The fetcher the build uses.
    pub fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    /// The places the user trusts.
    pub fn trust(&self) -> &Trust {
        &self.trust
    }

    /// Whether the user trusts the catalog `loaded`, by where it is.
    pub fn trusts(&self, loaded: &Loaded) -> bool {
        loaded
            .location
            .as_ref()
            .is_some_and(|at| self.trust.trusts(at))
    }

    /// The catalog `reference` names, fetched and read on first use.
    pub fn load(&self, reference: &CatalogRef) -> BuildResult<Arc<Loaded>> {
        let slot = {
            let mut map = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(map.entry(reference.key()).or_default())
        };
        slot.get_or_init(|| self.fetch(reference)).clone()
    }

    fn fetch(&self, reference: &CatalogRef) -> BuildResult<Arc<Loaded>> {
        let read = source::read(&reference.written, &reference.loader, &self.fetcher)
            .map_err(|e| e.context(format!("catalog '{}'", reference.written)))?;
        let catalog = schema::parse(&read.text)
            .map_err(|e| BuildError::new(format!("catalog {}", e.place_first(&read.from))))?;
        Ok(Arc::new(Loaded {
            catalog,
            from: read.from,
            location: read.location,
        }))
    }
}

/// The current directory, canonical (empty when it cannot be known:
/// relative paths are then resolved by the system as they are).
fn current_dir() -> PathBuf {
    std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_default()
}

/// Checks `--trusted-catalog` values: each must name a place (see
/// [`Trust`]); the error says which does not, and why.
pub fn check_trusted(values: &[String]) -> Result<(), trust::Untrusted> {
    let cwd = current_dir();
    values
        .iter()
        .try_for_each(|v| trust::places(v, &cwd).map(drop))
}

/// The version of `function` serving configs of `group`/`version`
/// `kind`, if it serves them.
pub fn version_for<'a>(
    function: &'a FunctionDef,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<&'a VersionDef> {
    if function.group != group || function.kind != kind {
        return None;
    }
    function.versions.iter().find(|v| v.name == version)
}

/// The first function of `catalog` serving `group`/`version` `kind`.
pub fn find<'a>(
    catalog: &'a Catalog,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<(&'a FunctionDef, &'a VersionDef)> {
    catalog
        .functions
        .iter()
        .find_map(|f| version_for(f, group, version, kind).map(|v| (f, v)))
}

/// Reads the catalog `reference` names, outside a build (`krusty view
/// catalog`): a local path is relative to `dir`, without load
/// restrictions; the rest is fetched as a build fetches it.
pub fn read_one(
    reference: &str,
    dir: &Path,
    options: krusty_fetch::FetchOptions,
) -> BuildResult<Loaded> {
    let loader = Loader::new(dir, crate::loader::LoadRestrictor::None)?;
    let store = Store::new(Arc::new(Fetcher::new(options)), Vec::new());
    let reference = CatalogRef {
        written: reference.to_string(),
        loader,
        file: dir.to_path_buf(),
        pos: Pos::default(),
    };
    let loaded = store.load(&reference)?;
    Ok(Loaded {
        catalog: loaded.catalog.clone(),
        from: loaded.from.clone(),
        location: loaded.location.clone(),
    })
}
