//! The Starlark runtime: a program that edits the list in place, with
//! the contract of Kustomize's former Starlark runtime and kpt's
//! `StarlarkRun`: the program sees `ctx.resource_list`, a dict with
//! `items` and `functionConfig`, and changes it; `fail()` becomes an
//! error. The interpreter has no file, network or `load()` access, and
//! `print` writes to stderr.

use krusty_fn::FnResult;
use krusty_runtime::Failed;
use starlark::environment::{GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::Evaluator;
use starlark::syntax::{AstModule, Dialect};

/// Names the program's file in Starlark's error messages.
const PROGRAM_NAME: &str = "function.star";

/// Evaluates `program` over the list `input_json` (a ResourceList as
/// JSON); returns `ctx.resource_list` as JSON when the program is done.
/// Deep recursion in a program needs a large stack: run it on a thread
/// that has one.
pub fn evaluate(program: &str, input_json: String) -> Result<String, Failed> {
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
    use krusty_fn::ResourceList;

    const LIST: &str = "{\"apiVersion\": \"config.kubernetes.io/v1\", \"kind\": \"ResourceList\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}, \"data\": {\"n\": 1}}], \"functionConfig\": {\"kind\": \"StarlarkRun\", \"data\": {\"team\": \"web\"}}}";

    #[test]
    fn edits_in_place_and_sees_the_config() {
        let program = r#"
def run(items, team):
    for r in items:
        r["metadata"].setdefault("labels", {})["team"] = team
run(ctx.resource_list["items"], ctx.resource_list["functionConfig"]["data"]["team"])
ctx.resource_list["items"].append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}})
"#;
        let out = evaluate(program, LIST.to_string()).unwrap();
        let out = ResourceList::parse(&out).unwrap();
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
        let run = |program: &str| evaluate(program, LIST.to_string()).unwrap_err();
        let err = run("fail('missing limits')");
        assert!(err.results[0].message.contains("missing limits"), "{err:?}");
        let err = run("load('x.star', 'y')");
        assert!(!err.message.is_empty());
        let err = run("open('/etc/passwd')");
        assert!(err.message.contains("open"), "{err:?}");
    }
}
