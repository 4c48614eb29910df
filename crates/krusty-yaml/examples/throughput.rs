//! Measures the YAML engine's parse and emit throughput on a file.
//!
//! `cargo run --release -p krusty-yaml --example throughput -- FILE [ROUNDS]`

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: throughput FILE [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: u32 = args.next().and_then(|r| r.parse().ok()).unwrap_or(20);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let (mut parse, mut emit) = (f64::MAX, f64::MAX);
    let mut out_len = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let docs = match krusty_yaml::parse_stream(&text) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        };
        parse = parse.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut out = String::with_capacity(text.len());
        for (i, d) in docs.iter().filter_map(|d| d.root.as_ref()).enumerate() {
            if i > 0 {
                out.push_str("---\n");
            }
            if let Err(e) = krusty_yaml::emit_document(d, &mut out) {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        }
        emit = emit.min(t.elapsed().as_secs_f64());
        out_len = out.len();
    }
    let mb = text.len() as f64 / 1e6;
    println!(
        "{} bytes in, {} bytes out; best of {rounds}: parse {:.1} ms ({:.0} MB/s), emit {:.1} ms ({:.0} MB/s), parse+emit {:.0} MB/s",
        text.len(),
        out_len,
        parse * 1e3,
        mb / parse,
        emit * 1e3,
        mb / emit,
        mb / (parse + emit)
    );
}
