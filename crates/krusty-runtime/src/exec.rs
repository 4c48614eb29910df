//! The exec runtime: a local executable.

use std::path::Path;
use std::process::Command;

use crate::policy::Policy;

/// The command for an exec function at `path` (already resolved and
/// checked by the caller), run in the kustomization's directory `dir`.
pub fn command(path: &Path, args: &[String], dir: &Path, policy: &Policy) -> Command {
    let mut cmd = Command::new(path);
    cmd.args(args).current_dir(dir);
    cmd.envs(policy.env_pairs(&[]));
    cmd
}
