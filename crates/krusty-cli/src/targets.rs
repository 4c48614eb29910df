//! `krusty build DIR1 DIR2 … -o OUTDIR`: several targets built in one
//! process (sharing its function servers), one output file per target,
//! written all or nothing.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use krusty_api::{BuildRequest, Engine};

use crate::output;

/// The file a target's output goes to in the output folder: the target
/// as given, without a leading `./` and trailing `/`, every character
/// other than an ASCII letter, digit, `.`, `-` or `_` replaced by `_`
/// (`/` too), then `.yaml`; the current folder (`.`) is `_.yaml`.
pub fn output_name(target: &Path) -> String {
    let text = target.to_string_lossy();
    let mut trimmed: &str = &text;
    while let Some(rest) = trimmed.strip_prefix("./") {
        trimmed = rest;
    }
    let trimmed = trimmed.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/.").unwrap_or(trimmed);
    if trimmed.is_empty() || trimmed == "." {
        return "_.yaml".to_string();
    }
    let name: String = trimmed
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => c,
            _ => '_',
        })
        .collect();
    format!("{name}.yaml")
}

/// Builds every target, at once, then writes each one's stream into
/// `output`. The builds share one fetcher (a remote base several targets
/// use is fetched once) and the function servers; warnings are printed
/// in target order. Nothing is written unless every target builds; the
/// error names the first target (in the order given) that failed. Each
/// build is made as `request` says.
pub fn build_all(
    dirs: &[PathBuf],
    output: Option<&OsStr>,
    engine: &Engine,
    request: &BuildRequest,
) -> Result<(), String> {
    use rayon::prelude::*;
    let out_dir = output
        .filter(|o| !o.is_empty())
        .map(Path::new)
        .ok_or("building several targets needs -o OUTDIR (one file per target)")?;
    let names = names(dirs)?;
    let built: Vec<Result<(Vec<String>, output::Stream), String>> = dirs
        .par_iter()
        .map(|dir| {
            let failed = |e: String| format!("target '{}': {e}", dir.display());
            let out = engine
                .build_with(dir, request)
                .0
                .map_err(|e| failed(e.to_string()))?;
            let warnings = out.warnings().to_vec();
            let stream = output::render(out.resources()).map_err(|e| failed(e.to_string()))?;
            // The process ends soon: freeing every node would only cost time.
            std::mem::forget(out);
            Ok((warnings, stream))
        })
        .collect();
    let mut streams = Vec::with_capacity(dirs.len());
    for (result, name) in built.into_iter().zip(names) {
        let (warnings, stream) = result?;
        for w in warnings {
            eprintln!("{w}");
        }
        streams.push((name, stream));
    }
    std::fs::create_dir_all(out_dir).map_err(|e| format!("creating {}: {e}", out_dir.display()))?;
    output::write_targets(out_dir, &streams)
}

/// Each target's output file name; two targets with the same name are an
/// error.
fn names(dirs: &[PathBuf]) -> Result<Vec<String>, String> {
    let mut seen: HashMap<String, &Path> = HashMap::new();
    dirs.iter()
        .map(|dir| {
            let name = output_name(dir);
            if let Some(first) = seen.insert(name.clone(), dir) {
                return Err(format!(
                    "targets '{}' and '{}' would both be written to {name}",
                    first.display(),
                    dir.display()
                ));
            }
            Ok(name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names() {
        for (target, name) in [
            ("overlays/prod", "overlays_prod.yaml"),
            ("./overlays/prod/", "overlays_prod.yaml"),
            (".", "_.yaml"),
            ("./", "_.yaml"),
            ("/abs/app", "_abs_app.yaml"),
            ("../base", ".._base.yaml"),
            ("a b:c", "a_b_c.yaml"),
        ] {
            assert_eq!(output_name(Path::new(target)), name, "{target}");
        }
        let err = names(&[PathBuf::from("a/b"), PathBuf::from("a_b")]).unwrap_err();
        assert!(err.contains("would both be written to a_b.yaml"), "{err}");
    }
}
