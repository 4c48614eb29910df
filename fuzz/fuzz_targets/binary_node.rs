//! The binary node encoding (krusty_yaml::binary): any bytes decode to a
//! node or an error naming an offset, never a panic; a decoded node encodes
//! back to bytes that decode to the same node; and a document parsed from
//! YAML survives the encoding unchanged.
#![no_main]

use krusty_yaml::binary;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match binary::decode(data) {
        Ok(node) => {
            let mut bytes = Vec::new();
            binary::encode(&node, &mut bytes);
            assert_eq!(binary::decode(&bytes).as_ref(), Ok(&node));
        }
        Err(e) => assert!(e.offset <= data.len(), "{e}"),
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(docs) = krusty_yaml::parse_stream(text) {
            for root in docs.into_iter().filter_map(|d| d.root) {
                let mut bytes = Vec::new();
                binary::encode(&root, &mut bytes);
                let back = binary::decode(&bytes).expect("a parsed document decodes");
                assert_eq!(back, root);
                assert_eq!(
                    krusty_yaml::to_yaml_preserving(&back).ok(),
                    krusty_yaml::to_yaml_preserving(&root).ok()
                );
            }
        }
    }
});
