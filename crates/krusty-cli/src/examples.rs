//! The examples every subcommand's `--help` ends with, in one table, so
//! that `--help`, the manual pages and the completion scripts come from
//! one command definition ([`with_examples`]).

use clap::Command;

/// Each subcommand's examples, by its path of names below `krusty`.
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "build",
        &[
            "krusty build overlays/prod",
            "krusty build overlays/prod -o rendered.yaml",
            "krusty build https://github.com/org/repo//deploy?ref=v1.2.0",
            "krusty build --enable-helm --helm-kube-version 1.31 charts/app",
            "krusty build --enable-alpha-plugins --enable-exec fns/",
            "krusty build --compare-versions v5.5.0,v5.8.1 overlays/prod",
        ],
    ),
    (
        "edit",
        &[
            "krusty edit set image nginx=nginx:1.27",
            "krusty edit add resource deployment.yaml",
        ],
    ),
    (
        "edit set",
        &[
            "krusty edit set namespace staging",
            "krusty edit set image app=registry.example/app:v2",
        ],
    ),
    ("edit set nameprefix", &["krusty edit set nameprefix -- staging-"]),
    ("edit set namesuffix", &["krusty edit set namesuffix -- -v2"]),
    ("edit set namespace", &["krusty edit set namespace staging"]),
    (
        "edit set image",
        &[
            "krusty edit set image nginx=nginx:1.27",
            "krusty edit set image app=registry.example/app@sha256:0123abcd",
        ],
    ),
    ("edit set replicas", &["krusty edit set replicas web=3"]),
    ("edit set label", &["krusty edit set label team:payments"]),
    ("edit set annotation", &["krusty edit set annotation owner:sre"]),
    (
        "edit set buildmetadata",
        &["krusty edit set buildmetadata originAnnotations,managedByLabel"],
    ),
    (
        "edit set configmap",
        &["krusty edit set configmap settings --from-literal=LOG_LEVEL=debug"],
    ),
    (
        "edit set secret",
        &["krusty edit set secret credentials --from-literal=user=admin"],
    ),
    (
        "edit add",
        &[
            "krusty edit add resource service.yaml",
            "krusty edit add configmap settings --from-literal=mode=fast",
        ],
    ),
    (
        "edit add resource",
        &["krusty edit add resource deployment.yaml service.yaml"],
    ),
    ("edit add component", &["krusty edit add component ../components/tls"]),
    ("edit add base", &["krusty edit add base ../../base"]),
    (
        "edit add patch",
        &["krusty edit add patch --path replicas.yaml --kind Deployment --name web"],
    ),
    (
        "edit add configmap",
        &["krusty edit add configmap settings --from-file=app.properties --from-literal=mode=fast"],
    ),
    (
        "edit add secret",
        &["krusty edit add secret credentials --from-literal=password=s3cret"],
    ),
    ("edit add label", &["krusty edit add label app:web,tier:frontend"]),
    ("edit add annotation", &["krusty edit add annotation owner:sre"]),
    ("edit add generator", &["krusty edit add generator generator.yaml"]),
    ("edit add transformer", &["krusty edit add transformer labels.yaml"]),
    ("edit add buildmetadata", &["krusty edit add buildmetadata originAnnotations"]),
    (
        "edit remove",
        &[
            "krusty edit remove resource old.yaml",
            "krusty edit remove label tier",
        ],
    ),
    ("edit remove resource", &["krusty edit remove resource 'legacy-*.yaml'"]),
    ("edit remove component", &["krusty edit remove component ../components/debug"]),
    (
        "edit remove patch",
        &["krusty edit remove patch --path replicas.yaml --kind Deployment --name web"],
    ),
    ("edit remove label", &["krusty edit remove label tier,team"]),
    ("edit remove annotation", &["krusty edit remove annotation owner"]),
    ("edit remove transformer", &["krusty edit remove transformer labels.yaml"]),
    ("edit remove buildmetadata", &["krusty edit remove buildmetadata originAnnotations"]),
    ("edit remove configmap", &["krusty edit remove configmap settings"]),
    ("edit remove secret", &["krusty edit remove secret credentials"]),
    ("edit fix", &["krusty edit fix", "krusty edit fix --vars"]),
    ("edit alpha-list-builtin-plugin", &["krusty edit alpha-list-builtin-plugin"]),
    (
        "create",
        &[
            "krusty create --resources deployment.yaml,service.yaml --namespace web",
            "krusty create --autodetect --recursive",
        ],
    ),
    (
        "version",
        &["krusty version", "krusty version --short", "krusty version -o json"],
    ),
    ("cache", &["krusty cache dir", "krusty cache clean"]),
    ("cache dir", &["krusty cache dir"]),
    ("cache clean", &["krusty cache clean"]),
    ("composition", &["krusty composition consolidate apps/web"]),
    (
        "composition consolidate",
        &["krusty composition consolidate apps/web"],
    ),
    ("view", &["krusty view catalog oci://registry.example/catalogs/platform:v1"]),
    (
        "view catalog",
        &[
            "krusty view catalog catalog.yaml",
            "krusty view catalog https://example.com/catalog.yaml",
            "krusty view catalog oci://registry.example/catalogs/platform:v1 --offline",
        ],
    ),
    (
        "targets",
        &[
            "krusty targets clusters/",
            "krusty targets --affected-by origin/main --json",
        ],
    ),
    (
        "diff",
        &[
            "krusty diff origin/main",
            "krusty diff v1.4.0 v1.5.0 --output markdown > comment.md",
        ],
    ),
    ("argocd", &["krusty argocd build apps/guestbook.yaml"]),
    (
        "argocd build",
        &[
            "krusty argocd build apps/guestbook.yaml",
            "krusty argocd build --argocd-build-options=\"--enable-helm\" apps/guestbook.yaml",
        ],
    ),
    ("flux", &["krusty flux build clusters/prod/apps.yaml"]),
    (
        "flux build",
        &[
            "krusty flux build clusters/prod/apps.yaml",
            "krusty flux build --strict-substitute=false --substitute-from vars.yaml",
        ],
    ),
    (
        "completion",
        &[
            "krusty completion bash > /etc/bash_completion.d/krusty",
            "krusty completion zsh > \"${fpath[1]}/_krusty\"",
            "krusty completion fish > ~/.config/fish/completions/krusty.fish",
            "krusty completion powershell >> $PROFILE",
        ],
    ),
    (
        "man",
        &[
            "krusty man | man -l -",
            "krusty man --dir /usr/local/share/man/man1",
        ],
    ),
    (
        "install",
        &[
            "krusty install /custom-tools",
            "krusty install --name kustomize /usr/local/bin",
        ],
    ),
];

/// `command` (the `krusty` command) with every subcommand's `--help`
/// ending in its examples. A subcommand missing from the table gets none;
/// the CLI's tests check that none is missing.
pub fn with_examples(command: Command) -> Command {
    add_examples(command, "")
}

fn add_examples(mut command: Command, path: &str) -> Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_string())
        .collect();
    for name in names {
        let sub_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        command = command.mut_subcommand(&name, |sub| {
            let sub = add_examples(sub, &sub_path);
            match examples(&sub_path) {
                Some(lines) => sub.after_long_help(render(lines)),
                None => sub,
            }
        });
    }
    command
}

/// The examples of the subcommand at `path` (`"edit set image"`).
pub fn examples(path: &str) -> Option<&'static [&'static str]> {
    EXAMPLES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, lines)| *lines)
}

fn render(lines: &[&str]) -> String {
    let mut text = String::from("Examples:");
    for line in lines {
        text.push_str("\n  ");
        text.push_str(line);
    }
    text
}
