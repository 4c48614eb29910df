//! podman and `kubectl kustomize` as the container tests run them: with
//! this project's podman settings, docker being podman.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A command with the podman settings this project's machines need
/// (`.ci/containers.conf`), unless the caller's environment names its own.
pub fn with_podman_conf(mut cmd: Command) -> Command {
    if std::env::var_os("CONTAINERS_CONF").is_none() {
        let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/containers.conf");
        cmd.env("CONTAINERS_CONF", conf);
    }
    cmd
}

/// A folder `dir/shim` holding an executable `docker` that runs podman;
/// returns the folder, for the front of `PATH`.
pub fn docker_shim(dir: &Path) -> PathBuf {
    let shim = dir.join("shim");
    super::write(&shim, "docker", "#!/bin/sh\nexec podman \"$@\"\n");
    std::fs::set_permissions(
        shim.join("docker"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    shim
}

/// `kubectl kustomize --enable-alpha-plugins .` in `dir`, docker being
/// podman (the `shim` folder from [`docker_shim`] first in `PATH`).
pub fn kubectl_kustomize(dir: &Path, shim: &Path) -> Output {
    let path = format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    with_podman_conf(Command::new("kubectl"))
        .args(["kustomize", "--enable-alpha-plugins", "."])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("kubectl runs")
}
