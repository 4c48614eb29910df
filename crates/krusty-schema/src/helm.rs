//! Reading a chart's configuration: the kustomization's `helmCharts`,
//! `helmGlobals` and deprecated `helmChartInflationGenerator` fields, and
//! an `apiVersion: builtin` `HelmChartInflationGenerator` config. Field
//! names match without regard to case and values are typed as Go's JSON
//! decoding types them, with its error wording.

use crate::error::SchemaResult;
use crate::typed::{self, At, Strictness};
use crate::version::KustomizeVersion;
use krusty_yaml::{Node, Value};

/// `helmGlobals`: settings shared by a kustomization's charts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HelmGlobals {
    /// `chartHome`: the folder holding one folder per chart (relative to
    /// the kustomization, or absolute); `charts` when empty.
    pub chart_home: String,
    /// `configHome`: `HELM_CONFIG_HOME` for helm; a temporary folder when
    /// empty.
    pub config_home: String,
}

/// One chart to inflate, with the globals in force for it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChartConfig {
    /// The kustomization's `helmGlobals` (or the config's own fields).
    pub globals: HelmGlobals,
    /// `name`: the chart's name (its folder under the chart home).
    pub name: String,
    /// `version`: the version to pull.
    pub version: String,
    /// `repo`: the repository to pull from (`https://…` or `oci://…`).
    pub repo: String,
    /// `releaseName` (`--generate-name` when empty).
    pub release_name: String,
    /// `namespace`: the release's namespace.
    pub namespace: String,
    /// `nameTemplate`: helm's `--name-template`.
    pub name_template: String,
    /// `valuesFile`: used instead of the chart's `values.yaml`.
    pub values_file: String,
    /// `additionalValuesFiles`: more values files, in order.
    pub additional_values_files: Vec<String>,
    /// `valuesInline`: values written in the kustomization (a mapping;
    /// `None` when absent or null).
    pub values_inline: Option<Node>,
    /// `valuesMerge`: `override` (the default), `merge` or `replace`.
    pub values_merge: String,
    /// `includeCRDs`: helm's `--include-crds`.
    pub include_crds: bool,
    /// `skipHooks`: helm's `--no-hooks`.
    pub skip_hooks: bool,
    /// `skipTests`: helm's `--skip-tests`.
    pub skip_tests: bool,
    /// `apiVersions`, when set (it then wins over `--helm-api-versions`).
    pub api_versions: Option<Vec<String>>,
    /// `kubeVersion`, when set (it then wins over `--helm-kube-version`).
    pub kube_version: Option<String>,
    /// `debug`, when set (it then wins over `--helm-debug`).
    pub debug: Option<bool>,
    /// `devel` (Kustomize v5.8.1): helm's `--devel`, development
    /// versions allowed.
    pub devel: bool,
}

/// The fields of Kustomize's `HelmChart`: v5.5.0's, then `devel`, which
/// Kustomize v5.8.1 added.
const CHART_FIELDS: [&str; 17] = [
    "name",
    "version",
    "repo",
    "releaseName",
    "namespace",
    "additionalValuesFiles",
    "valuesFile",
    "valuesInline",
    "valuesMerge",
    "includeCRDs",
    "skipHooks",
    "apiVersions",
    "kubeVersion",
    "nameTemplate",
    "skipTests",
    "debug",
    "devel",
];

/// The fields of `HelmChart` in release `version`.
fn chart_fields(version: KustomizeVersion) -> &'static [&'static str] {
    match version {
        KustomizeVersion::V5_5_0 => &CHART_FIELDS[..16],
        _ => &CHART_FIELDS,
    }
}

/// The fields of `HelmGlobals`.
const GLOBAL_FIELDS: [&str; 2] = ["chartHome", "configHome"];

/// The fields of the deprecated `HelmChartArgs`.
const ARGS_FIELDS: [&str; 13] = [
    "chartName",
    "chartVersion",
    "chartRepoUrl",
    "chartHome",
    "chartRepoName",
    "helmBin",
    "helmHome",
    "values",
    "valuesLocal",
    "valuesMerge",
    "releaseName",
    "releaseNamespace",
    "extraArgs",
];

/// Reads `helmGlobals`.
pub fn read_globals(node: &Node) -> SchemaResult<HelmGlobals> {
    let mut g = HelmGlobals::default();
    for (name, value) in typed::fields(node, &GLOBAL_FIELDS, "HelmGlobals", Strictness::Strict)? {
        let path = format!("helmGlobals.{name}");
        let at = At {
            owner: "HelmGlobals",
            path: &path,
        };
        set_global(&mut g, name, typed::string(value, at)?);
    }
    Ok(g)
}

fn set_global(g: &mut HelmGlobals, name: &str, text: String) {
    match name {
        "chartHome" => g.chart_home = text,
        _ => g.config_home = text,
    }
}

/// Reads the `helmCharts` list. An empty `apiVersions`, `kubeVersion` or
/// `debug` counts as unset: Kustomize passes the entry on without them.
pub fn read_charts(node: &Node, version: KustomizeVersion) -> SchemaResult<Vec<ChartConfig>> {
    let at = At {
        owner: "Kustomization",
        path: "helmCharts",
    };
    let mut charts = Vec::new();
    for item in typed::array(node, at, "[]HelmChart")? {
        let mut c = ChartConfig::default();
        let fields = chart_fields(version);
        for (name, value) in typed::fields(item, fields, "HelmChart", Strictness::Strict)? {
            let path = format!("helmCharts.{name}");
            let at = At {
                owner: "HelmChart",
                path: &path,
            };
            set_chart_field(&mut c, name, value, at)?;
        }
        c.api_versions = c.api_versions.filter(|v| !v.is_empty());
        c.kube_version = c.kube_version.filter(|v| !v.is_empty());
        c.debug = c.debug.filter(|d| *d);
        charts.push(c);
    }
    Ok(charts)
}

/// Sets the `HelmChart` field `name` of `c` from `value`.
fn set_chart_field(c: &mut ChartConfig, name: &str, value: &Node, at: At<'_>) -> SchemaResult<()> {
    match name {
        "name" => c.name = typed::string(value, at)?,
        "version" => c.version = typed::string(value, at)?,
        "repo" => c.repo = typed::string(value, at)?,
        "releaseName" => c.release_name = typed::string(value, at)?,
        "namespace" => c.namespace = typed::string(value, at)?,
        "nameTemplate" => c.name_template = typed::string(value, at)?,
        "valuesFile" => c.values_file = typed::string(value, at)?,
        "valuesMerge" => c.values_merge = typed::string(value, at)?,
        "additionalValuesFiles" => c.additional_values_files = typed::string_list(value, at)?,
        "valuesInline" => c.values_inline = values_map(value, at)?,
        "includeCRDs" => c.include_crds = typed::boolean(value, at)?,
        "skipHooks" => c.skip_hooks = typed::boolean(value, at)?,
        "skipTests" => c.skip_tests = typed::boolean(value, at)?,
        "apiVersions" => c.api_versions = Some(typed::string_list(value, at)?),
        "kubeVersion" => c.kube_version = Some(typed::string(value, at)?),
        "debug" => c.debug = Some(typed::boolean(value, at)?),
        "devel" => c.devel = typed::boolean(value, at)?,
        _ => {}
    }
    Ok(())
}

/// A `map[string]interface{}` field: a mapping, or nothing for a null.
fn values_map(value: &Node, at: At<'_>) -> SchemaResult<Option<Node>> {
    typed::object(value, at, "map[string]interface {}")?;
    Ok((!value.is_null()).then(|| value.clone()))
}

/// Reads the deprecated `helmChartInflationGenerator` list: its charts,
/// and the globals its entries set (the last non-empty `chartHome` and
/// `helmHome` win).
pub fn read_deprecated(node: &Node) -> SchemaResult<(Vec<ChartConfig>, HelmGlobals)> {
    let at = At {
        owner: "Kustomization",
        path: "helmChartInflationGenerator",
    };
    let mut charts = Vec::new();
    let mut globals = HelmGlobals::default();
    for item in typed::array(node, at, "[]HelmChartArgs")? {
        let mut c = ChartConfig::default();
        for (name, value) in typed::fields(item, &ARGS_FIELDS, "HelmChartArgs", Strictness::Strict)?
        {
            let path = format!("helmChartInflationGenerator.{name}");
            let at = At {
                owner: "HelmChartArgs",
                path: &path,
            };
            match name {
                "valuesLocal" => c.values_inline = values_map(value, at)?,
                "extraArgs" => {
                    typed::string_list(value, at)?;
                }
                _ => {
                    let text = typed::string(value, at)?;
                    match name {
                        "chartName" => c.name = text,
                        "chartVersion" => c.version = text,
                        "chartRepoUrl" => c.repo = text,
                        "values" => c.values_file = text,
                        "valuesMerge" => c.values_merge = text,
                        "releaseName" => c.release_name = text,
                        "chartHome" if !text.is_empty() => globals.chart_home = text,
                        "helmHome" if !text.is_empty() => globals.config_home = text,
                        _ => {}
                    }
                }
            }
        }
        charts.push(c);
    }
    Ok((charts, globals))
}

/// Reads an `apiVersion: builtin` `HelmChartInflationGenerator` config:
/// the chart's fields and the globals' beside `apiVersion`, `kind` and
/// `metadata`; other fields are ignored, as Kustomize ignores them.
pub fn read_builtin(config: &Node, version: KustomizeVersion) -> SchemaResult<ChartConfig> {
    let owner = "HelmChartInflationGeneratorPlugin";
    let known: Vec<&'static str> = chart_fields(version)
        .iter()
        .chain(&GLOBAL_FIELDS)
        .copied()
        .collect();
    let mut c = ChartConfig::default();
    for (name, value) in typed::fields(config, &known, owner, Strictness::Lenient)? {
        let at = At { owner, path: name };
        if GLOBAL_FIELDS.contains(&name) {
            set_global(&mut c.globals, name, typed::string(value, at)?);
        } else {
            set_chart_field(&mut c, name, value, at)?;
        }
    }
    Ok(c)
}

impl ChartConfig {
    /// The configuration as Kustomize prints it in its errors: the fields
    /// that are set, in sorted order.
    pub fn to_yaml(&self) -> String {
        let mut map = Node::map();
        let mut text = |key: &str, value: &str| {
            if !value.is_empty() {
                map.set(key, Node::string(value));
            }
        };
        text("chartHome", &self.globals.chart_home);
        text("configHome", &self.globals.config_home);
        text("name", &self.name);
        text("version", &self.version);
        text("repo", &self.repo);
        text("releaseName", &self.release_name);
        text("namespace", &self.namespace);
        text("valuesFile", &self.values_file);
        text("valuesMerge", &self.values_merge);
        text("nameTemplate", &self.name_template);
        text("kubeVersion", self.kube_version.as_deref().unwrap_or(""));
        let mut list = |key: &str, items: &[String]| {
            if !items.is_empty() {
                map.set(key, Node::seq_of(items.iter().map(Node::string)));
            }
        };
        list("additionalValuesFiles", &self.additional_values_files);
        list("apiVersions", self.api_versions.as_deref().unwrap_or(&[]));
        for (key, on) in [
            ("includeCRDs", self.include_crds),
            ("skipHooks", self.skip_hooks),
            ("skipTests", self.skip_tests),
            ("debug", self.debug.unwrap_or(false)),
            ("devel", self.devel),
        ] {
            if on {
                map.set(key, Node::plain("true"));
            }
        }
        if let Some(values) = self.values_inline.as_ref().filter(|v| !is_empty_map(v)) {
            map.set("valuesInline", values.clone());
        }
        krusty_yaml::to_kustomize_yaml(&map).unwrap_or_default()
    }

    /// Whether `valuesInline` holds any value.
    pub fn has_inline_values(&self) -> bool {
        self.values_inline
            .as_ref()
            .is_some_and(|v| !is_empty_map(v))
    }
}

fn is_empty_map(n: &Node) -> bool {
    matches!(&n.value, Value::Map(m) if m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        let mut root = krusty_yaml::first_root(text).unwrap().unwrap();
        krusty_yaml::retype_as_go_yaml_v2(&mut root);
        root
    }

    #[test]
    fn charts_read_every_field() {
        let charts = read_charts(&node(
            "- name: c\n  Version: '1'\n  repo: r\n  releaseName: rel\n  namespace: ns\n  nameTemplate: t\n  valuesFile: v.yaml\n  additionalValuesFiles: [a.yaml]\n  valuesInline: {x: 1}\n  valuesMerge: merge\n  includeCRDs: true\n  skipHooks: true\n  skipTests: true\n  apiVersions: [a/v1]\n  kubeVersion: '1.30'\n  debug: true\n  devel: true\n",
        ), KustomizeVersion::V5_8_1)
        .unwrap();
        let c = &charts[0];
        assert_eq!((c.name.as_str(), c.version.as_str()), ("c", "1"));
        assert_eq!(c.additional_values_files, ["a.yaml"]);
        assert!(c.include_crds && c.skip_hooks && c.skip_tests);
        assert_eq!(c.api_versions.as_deref(), Some(&["a/v1".to_string()][..]));
        assert_eq!(c.kube_version.as_deref(), Some("1.30"));
        assert_eq!(c.debug, Some(true));
        assert!(c.devel);
        assert!(c.has_inline_values());
    }

    #[test]
    fn devel_is_a_field_from_kustomize_v5_8_on() {
        let e = read_charts(
            &node("- name: c\n  devel: true\n"),
            KustomizeVersion::V5_5_0,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("json: unknown field \"devel\""),
            "{e}"
        );
    }

    #[test]
    fn unknown_fields_and_wrong_types_fail_with_go_words() {
        let e = read_charts(&node("- name: c\n  foo: 1\n"), KustomizeVersion::V5_8_1).unwrap_err();
        assert!(e.to_string().contains("json: unknown field \"foo\""), "{e}");
        let e = read_charts(&node("- name: 5\n"), KustomizeVersion::V5_8_1).unwrap_err();
        assert!(
            e.to_string()
                .contains("cannot unmarshal number into Go struct field HelmChart.helmCharts.name of type string"),
            "{e}"
        );
        let e = read_charts(&node("- valuesInline: 3\n"), KustomizeVersion::V5_8_1).unwrap_err();
        assert!(
            e.to_string().contains("of type map[string]interface {}"),
            "{e}"
        );
    }

    #[test]
    fn deprecated_entries_become_charts_and_globals() {
        let (charts, globals) = read_deprecated(&node(
            "- chartName: a\n  chartHome: one\n- chartName: b\n  chartHome: two\n  helmHome: h\n  valuesLocal: {x: 1}\n  extraArgs: [--x]\n",
        ))
        .unwrap();
        assert_eq!(charts.len(), 2);
        assert_eq!(globals.chart_home, "two");
        assert_eq!(globals.config_home, "h");
        assert!(charts[1].has_inline_values());
    }

    #[test]
    fn the_config_prints_sorted_and_without_empty_fields() {
        let charts = read_charts(&node(
            "- releaseName: rel\n  name: small\n  kubeVersion: 1.28.3\n  apiVersions: [baz/v1]\n",
        ), KustomizeVersion::V5_8_1)
        .unwrap();
        assert_eq!(
            charts[0].to_yaml(),
            "apiVersions:\n- baz/v1\nkubeVersion: 1.28.3\nname: small\nreleaseName: rel\n"
        );
    }
}
