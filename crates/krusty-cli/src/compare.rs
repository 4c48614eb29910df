//! `krusty build --compare-versions OLD,NEW DIR`: builds DIR as two
//! Kustomize releases and reports, resource by resource, what upgrading
//! from the older to the newer would change (docs/compatibility.md).
//!
//! Resources of the two builds are paired by identity: first by their
//! whole id (group, version, kind, namespace, name); then, among those
//! left, by group, kind and name when exactly one resource on each side
//! has them (a namespace or apiVersion the newer release sets otherwise,
//! as v5.8.1 does for Helm chart output); then by group, kind, namespace
//! and name without a content hash suffix, again one on each side (a
//! generated ConfigMap or Secret whose data changed). The report reads as
//! a diff: `~` for a changed resource (with its YAML's unified diff), `+`
//! for one only the newer release makes, `-` for one only the older
//! makes, `↕` for one that comes at another place in the output, and a
//! last line that sums it up. Paired resources are named as the older
//! release prints them, since that is what runs before the upgrade.

mod diff;

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use krusty_api::{Engine, KustomizeVersion};
use krusty_resource::{ResId, Resource};
use rayon::prelude::*;

/// The two releases `--compare-versions` builds with, older first
/// whichever order they were given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionPair {
    /// The release upgraded from.
    pub older: KustomizeVersion,
    /// The release upgraded to.
    pub newer: KustomizeVersion,
}

/// Reads `--compare-versions`: two different releases krusty reproduces,
/// separated by a comma, in either order (`v5.5.0,v5.8.1`).
pub fn parse_versions(text: &str) -> Result<VersionPair, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let [first, second] = parts.as_slice() else {
        return Err(format!(
            "expected two Kustomize versions separated by a comma, such as {}",
            example_pair()
        ));
    };
    let first = first
        .parse::<KustomizeVersion>()
        .map_err(|e| e.to_string())?;
    let second = second
        .parse::<KustomizeVersion>()
        .map_err(|e| e.to_string())?;
    if first == second {
        return Err(format!(
            "both versions are {first}: name two different releases, such as {}",
            example_pair()
        ));
    }
    Ok(VersionPair {
        older: first.min(second),
        newer: first.max(second),
    })
}

/// The oldest and newest releases krusty reproduces, as a flag value.
fn example_pair() -> String {
    let all = KustomizeVersion::ALL;
    match (all.first(), all.last()) {
        (Some(old), Some(new)) => format!("{old},{new}"),
        _ => String::from("v5.5.0,v5.8.1"),
    }
}

/// Builds the one directory of `dirs` as both releases of `versions`
/// (each with `engine`'s options otherwise), prints the report on stdout and the
/// builds' warnings on stderr. Exit status 0 when the outputs are the
/// same, 1 when they differ (also when only one release builds); an error
/// when neither builds, or the directory is not one.
pub fn run(dirs: &[PathBuf], versions: VersionPair, engine: &Engine) -> Result<ExitCode, String> {
    let dir = match dirs {
        [] => Path::new("."),
        [dir] => dir.as_path(),
        _ => {
            return Err(format!(
                "--compare-versions compares the builds of one DIR, not {}",
                dirs.len()
            ))
        }
    };
    let (older, newer) = build_both(dir, versions, engine);
    let (report, differs) = match (older, newer) {
        (Ok(older), Ok(newer)) => {
            print_warnings(&older, &newer, versions);
            let comparison = Comparison::new(&older.entries, &newer.entries);
            let differs = comparison.differs();
            (comparison.render(versions), differs)
        }
        (Err(older), Err(newer)) => return Err(both_failed(versions, &older, &newer)),
        (Ok(built), Err(error)) => {
            print_all_warnings(&built, versions.older);
            (builds_only_as(versions.older, versions.newer, &error), true)
        }
        (Err(error), Ok(built)) => {
            print_all_warnings(&built, versions.newer);
            (builds_only_as(versions.newer, versions.older, &error), true)
        }
    };
    write_stdout(&report)?;
    Ok(if differs {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// One resource of a build: its identity, and its YAML as the build
/// prints it.
#[derive(Debug, Clone)]
struct Entry {
    id: ResId,
    yaml: String,
}

impl Entry {
    fn of(resource: &Resource) -> Result<Entry, String> {
        let mut yaml = String::with_capacity(2048);
        krusty_yaml::emit_document(&resource.node, &mut yaml)
            .map_err(|e| format!("cannot print resource {}: {e}", resource.id()))?;
        Ok(Entry {
            id: resource.id(),
            yaml,
        })
    }
}

/// What one build printed: its resources in output order, its warnings.
struct Built {
    entries: Vec<Entry>,
    warnings: Vec<String>,
}

/// Builds `dir` as both releases at once; their engines share one
/// fetcher, so a remote base is fetched once.
fn build_both(
    dir: &Path,
    versions: VersionPair,
    engine: &Engine,
) -> (Result<Built, String>, Result<Built, String>) {
    let (older, newer) = (
        engine.for_release(versions.older),
        engine.for_release(versions.newer),
    );
    rayon::join(|| build_with(dir, &older), || build_with(dir, &newer))
}

/// Builds `dir` with `engine`.
fn build_with(dir: &Path, engine: &Engine) -> Result<Built, String> {
    let build = engine.build(dir).map_err(|e| e.to_string())?;
    let entries = build
        .resources()
        .par_iter()
        .map(Entry::of)
        .collect::<Result<Vec<Entry>, String>>()?;
    Ok(Built {
        entries,
        warnings: build.warnings().to_vec(),
    })
}

/// Prints the warnings of two builds on stderr: once those both print,
/// naming the release those only one prints.
fn print_warnings(older: &Built, newer: &Built, versions: VersionPair) {
    for w in &newer.warnings {
        if older.warnings.contains(w) {
            eprintln!("{w}");
        } else {
            eprintln!("Kustomize {}: {w}", versions.newer);
        }
    }
    for w in older
        .warnings
        .iter()
        .filter(|w| !newer.warnings.contains(w))
    {
        eprintln!("Kustomize {}: {w}", versions.older);
    }
}

/// Prints the warnings of the one build that worked, naming its release.
fn print_all_warnings(built: &Built, version: KustomizeVersion) {
    for w in &built.warnings {
        eprintln!("Kustomize {version}: {w}");
    }
}

/// The error when neither release builds the target: each release's
/// message, or the one message when both say the same.
fn both_failed(versions: VersionPair, older: &str, newer: &str) -> String {
    if older == newer {
        format!(
            "the build fails as Kustomize {} and as {}: {older}",
            versions.older, versions.newer
        )
    } else {
        format!(
            "the build fails as Kustomize {}: {older}\nand as Kustomize {}: {newer}",
            versions.older, versions.newer
        )
    }
}

/// The report when only `works` builds the target: `fails`'s error,
/// indented.
fn builds_only_as(works: KustomizeVersion, fails: KustomizeVersion, error: &str) -> String {
    let mut out = format!("builds only as Kustomize {works}: as Kustomize {fails} it fails with\n");
    for line in error.lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Writes the report on stdout.
fn write_stdout(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("writing output: {e}"))
}

/// What became of one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// In both outputs with other YAML: its indexes in the older and the
    /// newer output.
    Changed { old: usize, new: usize },
    /// Only in the newer output (its index there).
    Added(usize),
    /// Only in the older output (its index there).
    Removed(usize),
}

/// A resource in both outputs that comes at another place among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Move {
    old: usize,
    new: usize,
}

/// The two outputs, their resources paired, and what differs.
struct Comparison<'a> {
    old: &'a [Entry],
    new: &'a [Entry],
    /// In the newer output's order, then the older-only resources.
    changes: Vec<Change>,
    /// In the newer output's order.
    moves: Vec<Move>,
}

impl<'a> Comparison<'a> {
    fn new(old: &'a [Entry], new: &'a [Entry]) -> Comparison<'a> {
        let partners = pair(old, new);
        Comparison {
            old,
            new,
            changes: changes(old, new, &partners),
            moves: moves(&partners),
        }
    }

    /// Whether the outputs differ at all (also in order alone).
    fn differs(&self) -> bool {
        !self.changes.is_empty() || !self.moves.is_empty()
    }

    /// The report: sections separated by a blank line.
    fn render(&self, versions: VersionPair) -> String {
        let mut sections: Vec<String> = Vec::new();
        if !self.changes.is_empty() {
            sections.push(format!(
                "--- Kustomize {}\n+++ Kustomize {}\n",
                versions.older, versions.newer
            ));
        }
        // Runs of one-line entries (`+`, `-`) make one section.
        let mut run = String::new();
        for change in &self.changes {
            match *change {
                Change::Changed { old, new } => {
                    if !run.is_empty() {
                        sections.push(std::mem::take(&mut run));
                    }
                    sections.push(self.changed(old, new));
                }
                Change::Added(new) => run.push_str(&format!("+ {}\n", label(&self.new[new].id))),
                Change::Removed(old) => run.push_str(&format!("- {}\n", label(&self.old[old].id))),
            }
        }
        if !run.is_empty() {
            sections.push(run);
        }
        if !self.moves.is_empty() {
            sections.push(self.moved(versions));
        }
        sections.push(self.summary(versions));
        sections.join("\n")
    }

    /// A changed resource: its header line (named as in the older
    /// output, with what becomes of its identity), then the diff of its
    /// YAML.
    fn changed(&self, old: usize, new: usize) -> String {
        let (before, after) = (&self.old[old], &self.new[new]);
        let mut out = format!("~ {}", label(&before.id));
        let renamed = identity_changes(&before.id, &after.id);
        if !renamed.is_empty() {
            out.push_str(&format!(" ({})", renamed.join(", ")));
        }
        out.push('\n');
        let diff = diff::unified(&before.yaml, &after.yaml);
        if diff.is_empty() {
            out.push_str("  (the same lines: only their line endings differ)\n");
        }
        out.push_str(&diff);
        out
    }

    /// The resources at another place in the newer output (named as in
    /// the older), with their places in both (counted from 1).
    fn moved(&self, versions: VersionPair) -> String {
        self.moves
            .iter()
            .map(|m| {
                format!(
                    "↕ {} moved: position {} in {}, {} in {}\n",
                    label(&self.old[m.old].id),
                    m.old + 1,
                    versions.older,
                    m.new + 1,
                    versions.newer
                )
            })
            .collect()
    }

    /// The last line: how many resources differ, and how.
    fn summary(&self, versions: VersionPair) -> String {
        let (older, newer) = (versions.older, versions.newer);
        let count = |wanted: fn(&Change) -> bool| self.changes.iter().filter(|c| wanted(c)).count();
        let changed = count(|c| matches!(c, Change::Changed { .. }));
        let removed = count(|c| matches!(c, Change::Removed(_)));
        let added = count(|c| matches!(c, Change::Added(_)));
        let moved = self.moves.len();
        let differing = changed + removed + added;
        if differing == 0 && moved == 0 {
            return format!(
                "no difference between Kustomize {older} and {newer} ({})\n",
                resources(self.new.len())
            );
        }
        if differing == 0 {
            return format!(
                "only the order of resources differs between Kustomize {older} and {newer} \
                 ({moved} of {} moved)\n",
                resources(self.new.len())
            );
        }
        let verb = if differing == 1 { "differs" } else { "differ" };
        let mut line = format!(
            "{} {verb} between Kustomize {older} and {newer} \
             ({changed} changed, {removed} only in {older}, {added} only in {newer})",
            resources(differing)
        );
        if moved > 0 {
            line.push_str(&format!("; {} in another order", resources(moved)));
        }
        line.push('\n');
        line
    }
}

/// `1 resource`, `N resources`.
fn resources(n: usize) -> String {
    if n == 1 {
        String::from("1 resource")
    } else {
        format!("{n} resources")
    }
}

/// A resource as the report names it: `Kind namespace/name`, or
/// `Kind name` without a namespace.
fn label(id: &ResId) -> String {
    if id.namespace.is_empty() {
        format!("{} {}", id.gvk.kind, id.name)
    } else {
        format!("{} {}/{}", id.gvk.kind, id.namespace, id.name)
    }
}

/// What differs between the identities of two paired resources:
/// `namespace prod → none`, `apiVersion a → b`, `name a → b`.
fn identity_changes(old: &ResId, new: &ResId) -> Vec<String> {
    let mut out = Vec::new();
    if old.namespace != new.namespace {
        out.push(format!(
            "namespace {} → {}",
            namespace_text(&old.namespace),
            namespace_text(&new.namespace)
        ));
    }
    if old.gvk != new.gvk {
        out.push(format!(
            "apiVersion {} → {}",
            old.gvk.api_version(),
            new.gvk.api_version()
        ));
    }
    if old.name != new.name {
        out.push(format!("name {} → {}", old.name, new.name));
    }
    out
}

/// A namespace in the report: `none` when unset.
fn namespace_text(namespace: &str) -> &str {
    if namespace.is_empty() {
        "none"
    } else {
        namespace
    }
}

/// Pairs the resources of the two outputs: for each resource of the
/// newer one, the index of its partner in the older one.
fn pair(old: &[Entry], new: &[Entry]) -> Vec<Option<usize>> {
    let mut partners = vec![None; new.len()];
    pair_by_id(old, new, &mut partners);
    pair_unique(old, new, &mut partners, |id| {
        Some((
            id.gvk.group.as_str(),
            id.gvk.kind.as_str(),
            id.name.as_str(),
            "",
        ))
    });
    pair_unique(old, new, &mut partners, |id| {
        let base = without_hash_suffix(&id.name)?;
        Some((
            id.gvk.group.as_str(),
            id.gvk.kind.as_str(),
            base,
            id.namespace.as_str(),
        ))
    });
    partners
}

/// Pairs resources with the same whole id, in output order when an id
/// comes more than once.
fn pair_by_id(old: &[Entry], new: &[Entry], partners: &mut [Option<usize>]) {
    let mut by_id: HashMap<&ResId, VecDeque<usize>> = HashMap::new();
    for (i, entry) in old.iter().enumerate() {
        by_id.entry(&entry.id).or_default().push_back(i);
    }
    for (partner, entry) in partners.iter_mut().zip(new) {
        if let Some(i) = by_id.get_mut(&entry.id).and_then(VecDeque::pop_front) {
            *partner = Some(i);
        }
    }
}

/// Pairs resources not paired yet that have the same `key` (`None`: no
/// key), when exactly one resource on each side has it.
fn pair_unique<'e, K: Hash + Eq>(
    old: &'e [Entry],
    new: &'e [Entry],
    partners: &mut [Option<usize>],
    key: impl Fn(&'e ResId) -> Option<K>,
) {
    let taken = taken(old.len(), partners);
    let olds = group_by(old.iter().enumerate().filter(|(i, _)| !taken[*i]), &key);
    let news = group_by(
        new.iter()
            .enumerate()
            .filter(|(j, _)| partners[*j].is_none()),
        &key,
    );
    for (k, js) in &news {
        if let ([j], Some([i])) = (js.as_slice(), olds.get(k).map(Vec::as_slice)) {
            partners[*j] = Some(*i);
        }
    }
}

/// The indexes of `entries` (index, entry) grouped by `key`.
fn group_by<'e, K: Hash + Eq>(
    entries: impl Iterator<Item = (usize, &'e Entry)>,
    key: &impl Fn(&'e ResId) -> Option<K>,
) -> HashMap<K, Vec<usize>> {
    let mut groups: HashMap<K, Vec<usize>> = HashMap::new();
    for (index, entry) in entries {
        if let Some(k) = key(&entry.id) {
            groups.entry(k).or_default().push(index);
        }
    }
    groups
}

/// Which resources of the older output (of `len`) have a partner.
fn taken(len: usize, partners: &[Option<usize>]) -> Vec<bool> {
    let mut taken = vec![false; len];
    for &i in partners.iter().flatten() {
        if let Some(t) = taken.get_mut(i) {
            *t = true;
        }
    }
    taken
}

/// `name` without the suffix Kustomize appends for a content hash (`-`
/// and ten characters of the hash's alphabet), if it ends in one.
fn without_hash_suffix(name: &str) -> Option<&str> {
    let (base, hash) = name.rsplit_once('-')?;
    let is_hash = hash.len() == 10 && hash.bytes().all(|b| b"2456789bcdfghkmt".contains(&b));
    (is_hash && !base.is_empty()).then_some(base)
}

/// The differing resources: paired ones with other YAML and newer-only
/// ones in the newer output's order, then the older-only ones in theirs.
fn changes(old: &[Entry], new: &[Entry], partners: &[Option<usize>]) -> Vec<Change> {
    let mut out = Vec::new();
    for (j, partner) in partners.iter().enumerate() {
        match *partner {
            Some(i) if old[i].yaml == new[j].yaml => {}
            Some(i) => out.push(Change::Changed { old: i, new: j }),
            None => out.push(Change::Added(j)),
        }
    }
    let taken = taken(old.len(), partners);
    out.extend((0..old.len()).filter(|&i| !taken[i]).map(Change::Removed));
    out
}

/// The paired resources whose order differs: those outside a longest run
/// of pairs that keeps the older output's order.
fn moves(partners: &[Option<usize>]) -> Vec<Move> {
    let pairs: Vec<Move> = partners
        .iter()
        .enumerate()
        .filter_map(|(new, partner)| partner.map(|old| Move { old, new }))
        .collect();
    let olds: Vec<usize> = pairs.iter().map(|m| m.old).collect();
    let kept = longest_increasing(&olds);
    pairs
        .into_iter()
        .zip(kept)
        .filter(|(_, kept)| !kept)
        .map(|(m, _)| m)
        .collect()
}

/// Which elements of `seq` (distinct numbers) make up a longest
/// increasing subsequence.
fn longest_increasing(seq: &[usize]) -> Vec<bool> {
    // tails[n]: the index of the smallest last element of an increasing
    // subsequence of length n + 1 seen so far.
    let mut tails: Vec<usize> = Vec::new();
    let mut previous: Vec<Option<usize>> = vec![None; seq.len()];
    for (k, &value) in seq.iter().enumerate() {
        let at = tails.partition_point(|&t| seq[t] < value);
        previous[k] = at.checked_sub(1).and_then(|p| tails.get(p).copied());
        if at == tails.len() {
            tails.push(k);
        } else {
            tails[at] = k;
        }
    }
    let mut kept = vec![false; seq.len()];
    let mut at = tails.last().copied();
    while let Some(k) = at {
        kept[k] = true;
        at = previous[k];
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use krusty_resource::Gvk;

    const PAIR: VersionPair = VersionPair {
        older: KustomizeVersion::V5_5_0,
        newer: KustomizeVersion::V5_8_1,
    };

    fn entry(api_version: &str, kind: &str, namespace: &str, name: &str, body: &str) -> Entry {
        let ns_line = if namespace.is_empty() {
            String::new()
        } else {
            format!("  namespace: {namespace}\n")
        };
        Entry {
            id: ResId {
                gvk: Gvk::from_api_version(api_version, kind),
                name: name.into(),
                namespace: namespace.into(),
            },
            yaml: format!(
                "apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\n{ns_line}{body}"
            ),
        }
    }

    fn cm(namespace: &str, name: &str, value: &str) -> Entry {
        entry(
            "v1",
            "ConfigMap",
            namespace,
            name,
            &format!("data:\n  a: {value}\n"),
        )
    }

    fn report(old: &[Entry], new: &[Entry]) -> String {
        Comparison::new(old, new).render(PAIR)
    }

    #[test]
    fn reads_two_versions_in_either_order() {
        assert_eq!(parse_versions("v5.5.0,v5.8.1"), Ok(PAIR));
        assert_eq!(parse_versions("5.8.1, v5.5.0"), Ok(PAIR));
        for bad in ["v5.5.0", "", "v5.5.0,v5.8.1,v5.5.0", "v5.5.0,"] {
            let err = parse_versions(bad).unwrap_err();
            assert!(
                err.contains("two Kustomize versions") || err.contains("unknown"),
                "{bad}: {err}"
            );
        }
        let err = parse_versions("v5.8.1,5.8.1").unwrap_err();
        assert!(err.contains("both versions are v5.8.1"), "{err}");
        let err = parse_versions("v5.5.0,v5.7.0").unwrap_err();
        assert!(
            err.contains("unknown Kustomize version \"v5.7.0\""),
            "{err}"
        );
    }

    #[test]
    fn same_outputs_say_so() {
        let both = [cm("", "a", "1"), cm("", "b", "2")];
        let cmp = Comparison::new(&both, &both);
        assert!(!cmp.differs());
        assert_eq!(
            cmp.render(PAIR),
            "no difference between Kustomize v5.5.0 and v5.8.1 (2 resources)\n"
        );
    }

    #[test]
    fn namespace_change_pairs_the_resource() {
        let old = [cm("prod", "a", "1")];
        let new = [cm("", "a", "1")];
        assert_eq!(
            report(&old, &new),
            "--- Kustomize v5.5.0\n+++ Kustomize v5.8.1\n\
             \n\
             ~ ConfigMap prod/a (namespace prod → none)\n\
             @@ -2,6 +2,5 @@\n kind: ConfigMap\n metadata:\n   name: a\n-  namespace: prod\n data:\n   a: 1\n\
             \n\
             1 resource differs between Kustomize v5.5.0 and v5.8.1 \
             (1 changed, 0 only in v5.5.0, 0 only in v5.8.1)\n"
        );
    }

    #[test]
    fn ambiguous_leftovers_stay_unpaired() {
        let old = [cm("x", "a", "1"), cm("y", "a", "1")];
        let new = [cm("", "a", "1")];
        assert_eq!(
            report(&old, &new),
            "--- Kustomize v5.5.0\n+++ Kustomize v5.8.1\n\
             \n\
             + ConfigMap a\n- ConfigMap x/a\n- ConfigMap y/a\n\
             \n\
             3 resources differ between Kustomize v5.5.0 and v5.8.1 \
             (0 changed, 2 only in v5.5.0, 1 only in v5.8.1)\n"
        );
    }

    #[test]
    fn hash_suffixed_names_pair_across_a_new_hash() {
        let old = [cm("", "cfg-5t2hd6m8hk", "1")];
        let new = [cm("", "cfg-b9k7c4g6tm", "2")];
        let text = report(&old, &new);
        assert!(
            text.contains("~ ConfigMap cfg-5t2hd6m8hk (name cfg-5t2hd6m8hk → cfg-b9k7c4g6tm)\n"),
            "{text}"
        );
        assert!(text.contains("-  a: 1\n+  a: 2\n"), "{text}");
        assert_eq!(without_hash_suffix("web"), None);
        assert_eq!(without_hash_suffix("my-app"), None);
        assert_eq!(without_hash_suffix("-5t2hd6m8hk"), None);
    }

    #[test]
    fn api_version_change_is_named() {
        let old = [entry("apps/v1beta1", "Deployment", "", "web", "")];
        let new = [entry("apps/v1", "Deployment", "", "web", "")];
        let text = report(&old, &new);
        assert!(
            text.contains("~ Deployment web (apiVersion apps/v1beta1 → apps/v1)\n"),
            "{text}"
        );
    }

    #[test]
    fn order_alone_is_a_difference() {
        let (a, b, c) = (cm("", "a", "1"), cm("", "b", "1"), cm("", "c", "1"));
        let old = [a.clone(), b.clone(), c.clone()];
        let new = [b, c, a];
        let cmp = Comparison::new(&old, &new);
        assert!(cmp.differs());
        assert_eq!(
            cmp.render(PAIR),
            "↕ ConfigMap a moved: position 1 in v5.5.0, 3 in v5.8.1\n\
             \n\
             only the order of resources differs between Kustomize v5.5.0 and v5.8.1 \
             (1 of 3 resources moved)\n"
        );
    }

    #[test]
    fn newer_order_first_then_older_only_resources() {
        let old = [
            cm("", "gone", "1"),
            cm("", "kept", "1"),
            cm("", "edited", "1"),
        ];
        let new = [
            cm("", "edited", "2"),
            cm("", "new", "1"),
            cm("", "kept", "1"),
        ];
        let cmp = Comparison::new(&old, &new);
        assert_eq!(
            cmp.changes,
            [
                Change::Changed { old: 2, new: 0 },
                Change::Added(1),
                Change::Removed(0)
            ]
        );
        let text = cmp.render(PAIR);
        assert!(
            text.ends_with(
                "+ ConfigMap new\n- ConfigMap gone\n\
                 \n\
                 ↕ ConfigMap edited moved: position 3 in v5.5.0, 1 in v5.8.1\n\
                 \n\
                 3 resources differ between Kustomize v5.5.0 and v5.8.1 \
                 (1 changed, 1 only in v5.5.0, 1 only in v5.8.1); 1 resource in another order\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn longest_increasing_keeps_the_most() {
        assert_eq!(longest_increasing(&[]), Vec::<bool>::new());
        assert_eq!(longest_increasing(&[0, 1, 2]), [true, true, true]);
        assert_eq!(longest_increasing(&[2, 0, 1]), [false, true, true]);
        assert_eq!(longest_increasing(&[1, 2, 0]), [true, true, false]);
    }

    #[test]
    fn both_failing_builds_name_both_releases() {
        assert_eq!(
            both_failed(PAIR, "boom", "boom"),
            "the build fails as Kustomize v5.5.0 and as v5.8.1: boom"
        );
        assert_eq!(
            both_failed(PAIR, "old", "new"),
            "the build fails as Kustomize v5.5.0: old\nand as Kustomize v5.8.1: new"
        );
        assert_eq!(
            builds_only_as(PAIR.newer, PAIR.older, "a\nb"),
            "builds only as Kustomize v5.8.1: as Kustomize v5.5.0 it fails with\n  a\n  b\n"
        );
    }
}
