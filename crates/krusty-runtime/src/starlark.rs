//! The Starlark runtime: a program that edits the list in place, with
//! the contract of Kustomize's former Starlark runtime and kpt's
//! `StarlarkRun`: the program sees `ctx.resource_list`, a dict with
//! `items` and `functionConfig`, and changes it; `fail()` becomes an
//! error. The interpreter has no file, network or `load()` access, and
//! `print` writes to stderr.

use std::sync::mpsc;
use std::time::Duration;

use krusty_fn::{FnResult, ResourceList};
use starlark::environment::{GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::Evaluator;
use starlark::syntax::{AstModule, Dialect};

use crate::Failed;

/// Names the program's file in Starlark's error messages.
const PROGRAM_NAME: &str = "function.star";

/// Runs `program` over `input`, stopping it after `timeout`.
pub fn run(program: &str, input: ResourceList, timeout: Duration) -> Result<ResourceList, Failed> {
    let json = krusty_yaml::to_go_json(&input.into_node());
    let program = program.to_string();
    let (tx, rx) = mpsc::channel();
    // The interpreter runs on its own thread so a runaway program can be
    // abandoned at the time limit.
    std::thread::Builder::new()
        .name("starlark".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let _ = tx.send(evaluate(&program, json));
        })
        .map_err(|e| Failed::new(format!("cannot start the Starlark interpreter: {e}")))?;
    let output = match rx.recv_timeout(timeout) {
        Ok(result) => result?,
        Err(_) => {
            return Err(Failed::new(format!(
                "the Starlark program ran longer than {} s and was abandoned",
                timeout.as_secs_f64()
            )))
        }
    };
    ResourceList::parse(&output).map_err(|e| {
        Failed::new(format!(
            "the Starlark program left ctx.resource_list in a state that is not a ResourceList: {e}"
        ))
    })
}

/// Evaluates the program; returns `ctx.resource_list` as JSON.
fn evaluate(program: &str, input_json: String) -> Result<String, Failed> {
    let globals = GlobalsBuilder::extended_by(&[
        LibraryExtension::StructType,
        LibraryExtension::Json,
        LibraryExtension::Print,
        LibraryExtension::Map,
        LibraryExtension::Filter,
        LibraryExtension::Partial,
        LibraryExtension::SetType,
    ])
    .build();
    let dialect = Dialect::Extended;
    let parse = |name: &str, code: String| {
        AstModule::parse(name, code, &dialect).map_err(|e| Failed::new(e.to_string()))
    };
    let prelude = parse(
        "krusty-prelude.star",
        "_krusty_resource_list = json.decode(_krusty_input)\nctx = struct(resource_list = _krusty_resource_list)\n".into(),
    )?;
    let user = parse(PROGRAM_NAME, program.to_string())?;
    let epilogue = parse(
        "krusty-epilogue.star",
        "json.encode(_krusty_resource_list)\n".into(),
    )?;
    Module::with_temp_heap(|module| {
        module.set("_krusty_input", module.heap().alloc(input_json.as_str()));
        let mut eval = Evaluator::new(&module);
        eval.eval_module(prelude, &globals)
            .map_err(|e| Failed::new(format!("cannot pass the list to Starlark: {e}")))?;
        eval.eval_module(user, &globals).map_err(|e| {
            let message = e.to_string();
            Failed {
                message: format!("the Starlark program failed: {message}"),
                results: vec![FnResult::error(first_line(&message))],
            }
        })?;
        let out = eval
            .eval_module(epilogue, &globals)
            .map_err(|e| Failed::new(format!("cannot read ctx.resource_list back: {e}")))?;
        out.unpack_str()
            .map(str::to_string)
            .ok_or_else(|| Failed::new("cannot read ctx.resource_list back"))
    })
}

/// The `error: …` line of a Starlark error (its traceback aside).
fn first_line(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("error: "))
        .or_else(|| text.lines().next())
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> ResourceList {
        ResourceList::parse(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n  data:\n    n: 1\nfunctionConfig:\n  kind: StarlarkRun\n  data:\n    team: web\n",
        )
        .unwrap()
    }

    #[test]
    fn edits_in_place_and_sees_the_config() {
        let program = r#"
def run(items, team):
    for r in items:
        r["metadata"].setdefault("labels", {})["team"] = team
run(ctx.resource_list["items"], ctx.resource_list["functionConfig"]["data"]["team"])
ctx.resource_list["items"].append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}})
"#;
        let out = run(program, list(), Duration::from_secs(30)).unwrap();
        assert_eq!(out.items.len(), 2);
        let cm = &out.items[0];
        let text = |path: &[&str]| {
            cm.get_path(path)
                .and_then(|n| n.as_str())
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(text(&["metadata", "labels", "team"]), "web");
        assert_eq!(text(&["data", "n"]), "1");
        assert_eq!(
            out.items[1].get("kind").and_then(|n| n.as_str()),
            Some("Namespace")
        );
    }

    #[test]
    fn fail_is_an_error_result_and_io_is_absent() {
        let err = run("fail('missing limits')", list(), Duration::from_secs(30)).unwrap_err();
        assert!(err.results[0].message.contains("missing limits"), "{err:?}");
        let err = run("load('x.star', 'y')", list(), Duration::from_secs(30)).unwrap_err();
        assert!(!err.message.is_empty());
        let err = run("open('/etc/passwd')", list(), Duration::from_secs(30)).unwrap_err();
        assert!(err.message.contains("open"), "{err:?}");
        let err = run(
            "def f(n):\n    for i in range(n):\n        for j in range(n):\n            pass\nf(1000000)\n",
            list(),
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(err.message.contains("abandoned"), "{err:?}");
    }
}
