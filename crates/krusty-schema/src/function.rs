//! Which runtime a function config asks for: the
//! `config.kubernetes.io/function` annotation (or its legacy
//! `config.k8s.io/function` spelling), or the reserved top-level
//! `runtime:` field. Both hold the same structure, read by one resolver.

use krusty_yaml::{Node, YamlError};

/// The annotation that declares a function's runtime.
pub const FUNCTION_ANNOTATION: &str = "config.kubernetes.io/function";
/// Its legacy spelling.
pub const LEGACY_FUNCTION_ANNOTATION: &str = "config.k8s.io/function";

/// The protocol a spec v2 function server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerProtocol {
    /// HTTP/1.1 `POST` of a ResourceList.
    Http,
    /// gRPC, with krusty's function proto.
    Grpc,
}

/// Why a function config's runtime declaration cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// An image name a container CLI could read as something else.
    #[error("container: invalid image {0:?}: an image may not start with '-' or hold spaces or control characters")]
    InvalidImage(String),
    /// A mount that cannot be used.
    #[error(transparent)]
    Mount(#[from] MountError),
    /// The runtime annotation is not YAML.
    #[error("annotation {key}: not valid YAML: {}: {}", .source.pos, .source.message)]
    AnnotationYaml {
        /// The annotation.
        key: &'static str,
        /// Why it does not parse.
        source: YamlError,
    },
    /// The runtime annotation holds nothing.
    #[error("annotation {0} is empty")]
    AnnotationEmpty(&'static str),
    /// The declaration (where it is written) is unusable.
    #[error("{declared}: {source}")]
    Declaration {
        /// Where it is written: `annotation KEY` or `field 'runtime'`.
        declared: String,
        /// What is wrong with it.
        source: Box<SpecError>,
    },
    /// [`SERVER_ANNOTATION`] names no protocol (its value, or a word for
    /// a value that is no string).
    #[error("annotation {SERVER_ANNOTATION}: expected http or grpc, got {0:?}")]
    ServerProtocol(String),
    /// The declaration is no mapping.
    #[error("expected a mapping with one of exec, container or starlark")]
    NotMapping,
    /// `exec:` without a path.
    #[error("exec: a path is required")]
    ExecPath,
    /// `container:` without an image.
    #[error("container: an image is required")]
    ContainerImage,
    /// `starlark:` with both a path and a URL.
    #[error("starlark: give a path or a url, not both")]
    StarlarkBoth,
    /// `starlark:` with no program.
    #[error("starlark: a path or a url is required (or a StarlarkRun config with source)")]
    StarlarkMissing,
    /// No runtime is declared.
    #[error("expected one of exec, container or starlark")]
    NoRuntime,
    /// Several runtimes are declared (their names).
    #[error("declares several runtimes ({}); declare exactly one", .0.join(", "))]
    SeveralRuntimes(Vec<String>),
}

/// Why a bind mount cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MountError {
    /// A `--mount` part is no `key=value` pair.
    #[error("mount '{text}': expected key=value pairs, got '{part}'")]
    NotPair {
        /// The flag's value.
        text: String,
        /// The part.
        part: String,
    },
    /// A `--mount` key krusty does not know.
    #[error("mount '{text}': unknown key '{key}'")]
    UnknownKey {
        /// The flag's value.
        text: String,
        /// The key.
        key: String,
    },
    /// A `--mount` flag whose mount is unusable.
    #[error("mount '{text}': {source}")]
    Flag {
        /// The flag's value.
        text: String,
        /// What is wrong with the mount.
        source: Box<MountError>,
    },
    /// A mount type other than `bind`.
    #[error("mount type '{0}' is not supported (use type: bind)")]
    Type(String),
    /// A mount without its source or destination.
    #[error("a mount needs both src and dst")]
    Paths,
}

/// Refuses an image name that a container CLI could read as something
/// else: one that starts with `-`, or holds whitespace or a control
/// character (no image reference does).
pub fn check_image(image: &str) -> Result<(), SpecError> {
    if image.starts_with('-') || image.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(SpecError::InvalidImage(image.to_string()));
    }
    Ok(())
}

/// A bind mount for a container function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Mount type; only `bind` is supported.
    pub kind: String,
    /// Host path (relative paths are relative to the kustomization).
    pub src: String,
    /// Path in the container.
    pub dst: String,
    /// Writable (default: read-only).
    pub rw: bool,
}

impl Mount {
    /// Parses Kustomize's `--mount` form: `type=bind,src=PATH,dst=PATH[,rw=true]`.
    pub fn parse_flag(text: &str) -> Result<Mount, MountError> {
        let mut m = Mount {
            kind: String::new(),
            src: String::new(),
            dst: String::new(),
            rw: false,
        };
        for part in text.split(',') {
            let (k, v) = part.split_once('=').ok_or_else(|| MountError::NotPair {
                text: text.to_string(),
                part: part.to_string(),
            })?;
            match k {
                "type" => m.kind = v.to_string(),
                "src" | "source" => m.src = v.to_string(),
                "dst" | "destination" | "target" => m.dst = v.to_string(),
                "rw" => m.rw = v == "true",
                "readonly" => m.rw = v != "true",
                _ => {
                    return Err(MountError::UnknownKey {
                        text: text.to_string(),
                        key: k.to_string(),
                    })
                }
            }
        }
        m.check().map_err(|e| MountError::Flag {
            text: text.to_string(),
            source: Box::new(e),
        })?;
        Ok(m)
    }

    fn from_node(node: &Node) -> Result<Mount, MountError> {
        let text = |key: &str| {
            node.get(key)
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_string()
        };
        let m = Mount {
            kind: text("type"),
            src: text("src"),
            dst: text("dst"),
            rw: text("rw") == "true",
        };
        m.check()?;
        Ok(m)
    }

    fn check(&self) -> Result<(), MountError> {
        if self.kind != "bind" {
            return Err(MountError::Type(self.kind.clone()));
        }
        if self.src.is_empty() || self.dst.is_empty() {
            return Err(MountError::Paths);
        }
        Ok(())
    }
}

/// Where a Starlark program comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StarlarkSource {
    /// A file, relative to the kustomization.
    Path(String),
    /// A URL.
    Url(String),
    /// The `source` field of a `StarlarkRun` function config.
    Inline(String),
}

/// How a function runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runtime {
    /// A local executable.
    Exec {
        /// Path to the executable, relative to the kustomization.
        path: String,
        /// Arguments.
        args: Vec<String>,
        /// The spec's `envs` (Kustomize v5.7.0 and later): `NAME=value`
        /// entries as written, merged with `--env` when the function runs
        /// (see krusty-runtime's `exec::merged_envs`). The build empties it when
        /// it reproduces a release before v5.7.0.
        envs: Vec<String>,
    },
    /// A container image run with a docker-compatible CLI.
    Container {
        /// The image.
        image: String,
        /// The function asks for network access.
        network: bool,
        /// Bind mounts the function asks for.
        mounts: Vec<Mount>,
        /// Environment variables to pass: `NAME` (from krusty's
        /// environment) or `NAME=value`.
        envs: Vec<String>,
    },
    /// A Starlark program.
    Starlark(StarlarkSource),
}

impl Runtime {
    /// The runtime's name, as written in configs.
    pub fn name(&self) -> &'static str {
        match self {
            Runtime::Exec { .. } => "exec",
            Runtime::Container { .. } => "container",
            Runtime::Starlark(_) => "starlark",
        }
    }
}

/// The runtime a function config declares; `None` when it declares none.
pub fn runtime_of(config: &Node) -> Result<Option<Runtime>, SpecError> {
    let annotation = [FUNCTION_ANNOTATION, LEGACY_FUNCTION_ANNOTATION]
        .iter()
        .find_map(|key| {
            config
                .get_path(&["metadata", "annotations", key])
                .and_then(Node::as_str)
                .map(|text| (*key, text))
        });
    let declared = match (annotation, config.get("runtime")) {
        (Some((key, text)), _) => {
            let node = krusty_yaml::parse_stream(text)
                .map_err(|source| SpecError::AnnotationYaml { key, source })?
                .into_iter()
                .find_map(|d| d.root)
                .ok_or(SpecError::AnnotationEmpty(key))?;
            Some((format!("annotation {key}"), node))
        }
        (None, Some(node)) => Some(("field 'runtime'".to_string(), node.clone())),
        (None, None) => None,
    };
    let Some((source, node)) = declared else {
        return Ok(None);
    };
    resolve(&node, config)
        .map(Some)
        .map_err(|e| SpecError::Declaration {
            declared: source,
            source: Box::new(e),
        })
}

/// The annotation on a function config that runs its function as a spec
/// v2 server: `http` or `grpc`. Kustomize reads the runtime declaration
/// strictly (an unknown key inside `exec:` or `container:` fails its
/// build), so the opt-in is an annotation beside it, which Kustomize and
/// kpt ignore: the same kustomization runs there as spec v1.
pub const SERVER_ANNOTATION: &str = "krusty.dev/function-server";

/// The server protocol a function config opts into with
/// [`SERVER_ANNOTATION`]; `None` when it does not.
pub fn server_of(config: &Node) -> Result<Option<ServerProtocol>, SpecError> {
    let Some(value) = config.get_path(&["metadata", "annotations", SERVER_ANNOTATION]) else {
        return Ok(None);
    };
    match value.as_str().map(str::trim) {
        Some("http") => Ok(Some(ServerProtocol::Http)),
        Some("grpc") => Ok(Some(ServerProtocol::Grpc)),
        _ => Err(SpecError::ServerProtocol(
            value.as_str().unwrap_or("a non-string value").to_string(),
        )),
    }
}

/// The strings of the list under `key` of `node` (none when it is not a
/// list; entries that are not strings are skipped).
pub fn strings(node: &Node, key: &str) -> Vec<String> {
    node.get(key)
        .and_then(Node::as_seq)
        .map(|s| {
            s.iter()
                .filter_map(Node::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Reads a runtime declaration (`exec:`, `container:` or `starlark:`).
fn resolve(node: &Node, config: &Node) -> Result<Runtime, SpecError> {
    if node.as_map().is_none() {
        return Err(SpecError::NotMapping);
    }
    let text = |n: &Node, key: &str| n.get(key).and_then(Node::as_str).unwrap_or("").to_string();
    let declared: Vec<&str> = ["exec", "container", "starlark"]
        .into_iter()
        .filter(|k| node.get(k).is_some_and(|v| !v.is_null()))
        .collect();
    match declared.as_slice() {
        ["exec"] => {
            let exec = node.get("exec").cloned().unwrap_or_else(Node::map);
            let path = text(&exec, "path");
            if path.is_empty() {
                return Err(SpecError::ExecPath);
            }
            Ok(Runtime::Exec {
                path,
                args: strings(&exec, "args"),
                envs: strings(&exec, "envs"),
            })
        }
        ["container"] => {
            let c = node.get("container").cloned().unwrap_or_else(Node::map);
            let image = text(&c, "image");
            if image.is_empty() {
                return Err(SpecError::ContainerImage);
            }
            check_image(&image)?;
            let mounts = c
                .get("mounts")
                .and_then(Node::as_seq)
                .map(|s| {
                    s.iter()
                        .map(Mount::from_node)
                        .collect::<Result<Vec<_>, _>>()
                })
                .transpose()?
                .unwrap_or_default();
            Ok(Runtime::Container {
                image,
                network: text(&c, "network") == "true",
                mounts,
                envs: strings(&c, "envs"),
            })
        }
        ["starlark"] => {
            let s = node.get("starlark").cloned().unwrap_or_else(Node::map);
            let (path, url) = (text(&s, "path"), text(&s, "url"));
            let inline = config
                .get("source")
                .and_then(Node::as_str)
                .filter(|_| config.get("kind").and_then(Node::as_str) == Some("StarlarkRun"));
            match (path.is_empty(), url.is_empty(), inline) {
                (false, true, _) => Ok(Runtime::Starlark(StarlarkSource::Path(path))),
                (true, false, _) => Ok(Runtime::Starlark(StarlarkSource::Url(url))),
                (true, true, Some(src)) => {
                    Ok(Runtime::Starlark(StarlarkSource::Inline(src.to_string())))
                }
                (false, false, _) => Err(SpecError::StarlarkBoth),
                (true, true, None) => Err(SpecError::StarlarkMissing),
            }
        }
        [] => Err(SpecError::NoRuntime),
        many => Err(SpecError::SeveralRuntimes(
            many.iter().map(|k| k.to_string()).collect(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        krusty_yaml::first_root(text).unwrap().unwrap()
    }

    #[test]
    fn annotation_and_runtime_field_resolve_alike() {
        let a = node("kind: X\nmetadata:\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: img:v1\n        network: true\n        envs: [A, B=c]\n");
        let b = node("kind: X\nruntime:\n  container:\n    image: img:v1\n    network: true\n    envs: [A, B=c]\n");
        let want = Runtime::Container {
            image: "img:v1".into(),
            network: true,
            mounts: vec![],
            envs: vec!["A".into(), "B=c".into()],
        };
        assert_eq!(runtime_of(&a).unwrap(), Some(want.clone()));
        assert_eq!(runtime_of(&b).unwrap(), Some(want));
        let e = node("kind: X\nmetadata:\n  annotations:\n    config.k8s.io/function: 'exec: {path: ./fn}'\n");
        assert_eq!(
            runtime_of(&e).unwrap(),
            Some(Runtime::Exec {
                path: "./fn".into(),
                args: vec![],
                envs: vec![]
            })
        );
        assert_eq!(runtime_of(&node("kind: X\n")).unwrap(), None);
    }

    #[test]
    fn exec_envs_are_read_as_written() {
        // The annotation and the runtime field alike; entries are kept as
        // written (the merge with --env drops the ones that are not
        // NAME=value when the function runs), entries that are not
        // strings are skipped.
        let a = node("kind: X\nmetadata:\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n        args: [x]\n        envs: [A=1, B, C=d=e, D=, A=2]\n");
        let b = node("kind: X\nruntime:\n  exec:\n    path: ./fn.sh\n    args: [x]\n    envs: [A=1, B, C=d=e, D=, A=2, {E: f}]\n");
        let want = Runtime::Exec {
            path: "./fn.sh".into(),
            args: vec!["x".into()],
            envs: ["A=1", "B", "C=d=e", "D=", "A=2"]
                .map(String::from)
                .to_vec(),
        };
        assert_eq!(runtime_of(&a).unwrap(), Some(want.clone()));
        assert_eq!(runtime_of(&b).unwrap(), Some(want));
        // No envs, or not a list: none.
        for text in [
            "kind: X\nruntime: {exec: {path: ./f}}\n",
            "kind: X\nruntime: {exec: {path: ./f, envs: A=1}}\n",
            "kind: X\nruntime: {exec: {path: ./f, envs: []}}\n",
        ] {
            match runtime_of(&node(text)).unwrap() {
                Some(Runtime::Exec { envs, .. }) => assert!(envs.is_empty(), "{text}: {envs:?}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        // Two specs that differ only in their envs are different runtimes
        // (the result cache keys on the runtime's Debug text).
        let one = runtime_of(&node(
            "kind: X\nruntime: {exec: {path: ./f, envs: [A=1]}}\n",
        ))
        .unwrap();
        let two = runtime_of(&node(
            "kind: X\nruntime: {exec: {path: ./f, envs: [A=2]}}\n",
        ))
        .unwrap();
        assert_ne!(one, two);
        assert_ne!(format!("{one:?}"), format!("{two:?}"));
    }

    #[test]
    fn the_server_annotation_opts_into_spec_v2() {
        let with = |v: &str| {
            node(&format!(
                "kind: X\nmetadata:\n  annotations:\n    krusty.dev/function-server: {v}\n"
            ))
        };
        assert_eq!(
            server_of(&with("http")).unwrap(),
            Some(ServerProtocol::Http)
        );
        assert_eq!(
            server_of(&with("grpc")).unwrap(),
            Some(ServerProtocol::Grpc)
        );
        assert_eq!(server_of(&node("kind: X\n")).unwrap(), None);
        assert!(server_of(&with("tcp"))
            .unwrap_err()
            .to_string()
            .contains("expected http or grpc"));
    }

    #[test]
    fn starlark_sources_and_errors() {
        let run = node("kind: StarlarkRun\nsource: print(1)\nruntime:\n  starlark: {}\n");
        assert_eq!(
            runtime_of(&run).unwrap(),
            Some(Runtime::Starlark(StarlarkSource::Inline("print(1)".into())))
        );
        for (text, want) in [
            ("kind: X\nruntime: {exec: {}}\n", "a path is required"),
            ("kind: X\nruntime: {exec: {path: a}, container: {image: b}}\n", "several runtimes"),
            ("kind: X\nruntime: {wasm: {}}\n", "expected one of"),
            ("kind: X\nruntime: {container: {image: a, mounts: [{type: volume, src: a, dst: b}]}}\n", "not supported"),
            ("kind: X\nruntime: {container: {image: --privileged}}\n", "may not start with '-'"),
            ("kind: X\nruntime: {container: {image: \"a b\"}}\n", "invalid image"),
        ] {
            let err = runtime_of(&node(text)).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
        assert!(
            Mount::parse_flag("type=bind,src=/a,dst=/b,rw=true")
                .unwrap()
                .rw
        );
        assert!(Mount::parse_flag("src=/a").is_err());
    }
}
