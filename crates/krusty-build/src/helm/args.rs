//! The argument lists of `helm template` and `helm pull`, in Kustomize's
//! order, except that every value is given in its flag's argument
//! (`--version=V`) and the positional arguments come after `--`: a value
//! that starts with `-` stays a value.

use std::path::Path;

use krusty_schema::helm::ChartConfig;

/// What `helm template` is given besides the chart's configuration.
pub struct TemplateInputs<'a> {
    /// The chart's folder.
    pub chart_dir: &'a Path,
    /// The values file written for helm.
    pub values_file: &'a Path,
    /// `additionalValuesFiles`, as paths.
    pub additional_values_files: &'a [std::path::PathBuf],
    /// The API versions in force (the chart's, else the flag's).
    pub api_versions: &'a [String],
    /// The Kubernetes version in force.
    pub kube_version: &'a str,
    /// Whether `--debug` is passed.
    pub debug: bool,
}

/// `helm template …` for `chart`: the flags, each with its value in one
/// argument (`--namespace=NS`), then `--` and the release name and chart
/// folder, so no value can be read as an option.
pub fn template(chart: &ChartConfig, inputs: &TemplateInputs<'_>) -> Vec<String> {
    let mut args = vec!["template".to_string()];
    if chart.release_name.is_empty() {
        args.push("--generate-name".into());
    }
    let mut flag = |name: &str, value: &str| {
        if !value.is_empty() {
            args.push(format!("{name}={value}"));
        }
    };
    flag("--namespace", &chart.namespace);
    flag("--name-template", &chart.name_template);
    flag("--values", &inputs.values_file.display().to_string());
    for file in inputs.additional_values_files {
        flag("--values", &file.display().to_string());
    }
    for version in inputs.api_versions {
        args.push(format!("--api-versions={version}"));
    }
    if !inputs.kube_version.is_empty() {
        args.push(format!("--kube-version={}", inputs.kube_version));
    }
    for (on, name) in [
        (chart.include_crds, "--include-crds"),
        (chart.skip_tests, "--skip-tests"),
        (chart.skip_hooks, "--no-hooks"),
        (inputs.debug, "--debug"),
        (chart.devel, "--devel"),
    ] {
        if on {
            args.push(name.into());
        }
    }
    args.push("--".into());
    if !chart.release_name.is_empty() {
        args.push(chart.release_name.clone());
    }
    args.push(inputs.chart_dir.display().to_string());
    args
}

/// `helm pull …` for `chart` into `chart_home`: by `--repo` for a chart
/// repository, by reference for an OCI registry; the chart after `--`.
pub fn pull(chart: &ChartConfig, chart_home: &Path) -> Vec<String> {
    let mut args = vec![
        "pull".to_string(),
        "--untar".into(),
        format!("--untardir={}", chart_home.display()),
    ];
    let oci = chart.repo.starts_with("oci://");
    if !oci && !chart.repo.is_empty() {
        args.push(format!("--repo={}", chart.repo));
    }
    if !chart.version.is_empty() {
        args.push(format!("--version={}", chart.version));
    }
    if chart.devel {
        args.push("--devel".into());
    }
    args.push("--".into());
    if oci {
        args.push(format!(
            "{}/{}",
            chart.repo.trim_end_matches('/'),
            chart.name
        ));
    } else {
        args.push(chart.name.clone());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn template_arguments_follow_kustomize_order() {
        let chart = ChartConfig {
            name: "c".into(),
            release_name: "rel".into(),
            namespace: "ns".into(),
            name_template: "t".into(),
            include_crds: true,
            skip_hooks: true,
            skip_tests: true,
            ..Default::default()
        };
        let extra = [PathBuf::from("/k/extra.yaml")];
        let args = template(
            &chart,
            &TemplateInputs {
                chart_dir: Path::new("/k/charts/c"),
                values_file: Path::new("/tmp/x/c-kustomize-values.yaml"),
                additional_values_files: &extra,
                api_versions: &["a/v1".into(), "b/v2".into()],
                kube_version: "1.30",
                debug: true,
            },
        );
        assert_eq!(
            args.join(" "),
            "template --namespace=ns --name-template=t --values=/tmp/x/c-kustomize-values.yaml --values=/k/extra.yaml --api-versions=a/v1 --api-versions=b/v2 --kube-version=1.30 --include-crds --skip-tests --no-hooks --debug -- rel /k/charts/c"
        );
    }

    #[test]
    fn a_chart_without_release_name_gets_a_generated_one() {
        let chart = ChartConfig {
            name: "c".into(),
            ..Default::default()
        };
        let args = template(
            &chart,
            &TemplateInputs {
                chart_dir: Path::new("/c"),
                values_file: Path::new("/v.yaml"),
                additional_values_files: &[],
                api_versions: &[],
                kube_version: "",
                debug: false,
            },
        );
        assert_eq!(
            args.join(" "),
            "template --generate-name --values=/v.yaml -- /c"
        );
    }

    #[test]
    fn pulls_name_the_repository_or_the_oci_reference() {
        let mut chart = ChartConfig {
            name: "c".into(),
            repo: "https://example.com/charts".into(),
            version: "1.2.3".into(),
            ..Default::default()
        };
        assert_eq!(
            pull(&chart, Path::new("/k/charts/c-1.2.3")).join(" "),
            "pull --untar --untardir=/k/charts/c-1.2.3 --repo=https://example.com/charts --version=1.2.3 -- c"
        );
        chart.repo = "oci://r.example/charts/".into();
        assert_eq!(
            pull(&chart, Path::new("/h")).join(" "),
            "pull --untar --untardir=/h --version=1.2.3 -- oci://r.example/charts/c"
        );
    }
}
