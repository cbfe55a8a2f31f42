//! docs/model-host.md's configuration reference is generated from the config types; it must be current
//! (regenerate: `cargo run -p nandstack-host --example config_reference` and paste over the section).

#[test]
fn model_host_config_reference_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/model-host.md");
    let doc = std::fs::read_to_string(path).expect("docs/model-host.md");
    let start = doc
        .find("_Generated from the config types (`cargo run -p nandstack-host")
        .expect("the generated section");
    let end = doc[start..].find("\n## ").map_or(doc.len(), |i| start + i);
    let generated = nandstack_host::config::config_reference_markdown();
    assert_eq!(
        doc[start..end].trim(),
        generated.trim(),
        "docs/model-host.md's config reference is stale: regenerate it"
    );
}
