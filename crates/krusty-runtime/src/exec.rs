//! The exec runtime: a local executable.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use crate::policy::Policy;

/// The command for an exec function at `path` (already resolved and
/// checked by the caller), run in the kustomization's directory `dir`.
///
/// It gets krusty's environment and the `--env` variables
/// ([`Policy::env_pairs`]) and, when its spec declares `envs` (empty
/// unless the build reproduces Kustomize v5.7.0 or later), on top of
/// those the merge of its `envs` with `--env` ([`merged_envs`]).
pub fn command(
    path: &Path,
    args: &[String],
    envs: &[String],
    dir: &Path,
    policy: &Policy,
) -> Command {
    let mut cmd = Command::new(path);
    cmd.args(args).current_dir(dir);
    cmd.envs(policy.env_pairs(&[]));
    if !envs.is_empty() {
        let merged = merged_envs(envs, &policy.envs);
        cmd.envs(merged.iter().filter_map(|e| e.split_once('=')));
    }
    cmd
}

/// What Kustomize v5.7.0 and later add to an exec function's
/// environment: its spec's `envs` (`declared`) merged with the user's
/// `--env` values (`imperative`), which win for the same name. Only the
/// entries with exactly one `=` take part (a bare `NAME` is not looked
/// up, `NAME=a=b` is dropped; `NAME=` sets an empty value); a later entry
/// for the same name replaces an earlier one. The result is
/// `NAME=value` strings, sorted.
pub fn merged_envs(declared: &[String], imperative: &[String]) -> Vec<String> {
    let mut by_name: HashMap<&str, &str> = HashMap::new();
    for entry in declared.iter().chain(imperative) {
        let mut parts = entry.split('=');
        if let (Some(name), Some(value), None) = (parts.next(), parts.next(), parts.next()) {
            by_name.insert(name, value);
        }
    }
    let mut merged: Vec<String> = by_name
        .into_iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    merged.sort();
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn envs_merge_with_the_flag_winning() {
        let declared = strings(&["B=2", "A=1", "BARE", "C=x=y", "EMPTY=", "B=3", ""]);
        let imperative = strings(&["A=flag", "D=a=b", "LONE"]);
        assert_eq!(
            merged_envs(&declared, &imperative),
            strings(&["A=flag", "B=3", "EMPTY="])
        );
        assert!(merged_envs(&[], &[]).is_empty());
        // The flag alone counts too.
        assert_eq!(merged_envs(&[], &strings(&["Z=1", "Y"])), strings(&["Z=1"]));
        // Sorted as strings, as Kustomize sorts them.
        assert_eq!(
            merged_envs(&strings(&["A=1", "A-B=2"]), &[]),
            strings(&["A-B=2", "A=1"])
        );
    }

    #[test]
    fn the_command_gets_the_merged_envs_over_the_flag() {
        let policy = Policy {
            envs: strings(&["A=flag", "K=a=b"]),
            ..Policy::default()
        };
        let env_of = |cmd: &Command| -> Vec<(String, Option<String>)> {
            let mut pairs: Vec<(String, Option<String>)> = cmd
                .get_envs()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.map(|v| v.to_string_lossy().into_owned()),
                    )
                })
                .collect();
            pairs.sort();
            pairs
        };
        let dir = Path::new("/");
        // Without envs in the spec, the environment is today's.
        let plain = command(Path::new("/bin/true"), &[], &[], dir, &policy);
        assert_eq!(
            env_of(&plain),
            vec![
                ("A".to_string(), Some("flag".to_string())),
                ("K".to_string(), Some("a=b".to_string())),
            ]
        );
        let declared = strings(&["A=spec", "B=spec", "K=spec", "N"]);
        let with = command(Path::new("/bin/true"), &[], &declared, dir, &policy);
        assert_eq!(
            env_of(&with),
            vec![
                ("A".to_string(), Some("flag".to_string())),
                ("B".to_string(), Some("spec".to_string())),
                ("K".to_string(), Some("spec".to_string())),
            ]
        );
    }
}
