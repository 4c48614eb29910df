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

/// `podman` with [`with_podman_conf`].
pub fn podman() -> Command {
    with_podman_conf(Command::new("podman"))
}

/// Podman is installed and answers.
pub fn podman_works() -> bool {
    podman()
        .arg("info")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The example function krm-set-labels as an image (the program and the
/// libraries it needs, nothing else, run as `/fn`), built in `dir/rootfs`
/// and imported into podman as `name`.
pub fn import_labels_image(dir: &Path, name: &str) {
    let rootfs = dir.join("rootfs");
    let _ = std::fs::remove_dir_all(&rootfs);
    let binary = super::examples::example("krm-set-labels");
    let copy = |from: &Path, to: &str| {
        let dest = rootfs.join(to.trim_start_matches('/'));
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(from, dest).unwrap();
    };
    copy(&binary, "/fn");
    let ldd = super::run(Command::new("ldd").arg(&binary));
    for lib in ldd.split_whitespace().filter(|w| w.starts_with('/')) {
        copy(Path::new(lib), lib);
    }
    super::write(
        &rootfs,
        "etc/passwd",
        "nobody:x:65534:65534::/:/sbin/nologin\n",
    );
    let tar = dir.join("rootfs.tar");
    super::run(
        Command::new("tar")
            .arg("-C")
            .arg(&rootfs)
            .arg("-cf")
            .arg(&tar)
            .arg("."),
    );
    super::run(
        podman()
            .args(["import", "-q", "--change", "ENTRYPOINT [\"/fn\"]"])
            .arg(&tar)
            .arg(name),
    );
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
