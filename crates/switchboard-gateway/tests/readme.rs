//! The README's gateway configurations are valid ones: each TOML block of its gateway section
//! that names upstreams parses as a `GatewayConfig`, with the upstreams it shows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use switchboard_gateway::GatewayConfig;

/// The TOML blocks of the README that name upstreams.
fn readme_configs() -> Vec<String> {
    let readme = include_str!("../../../README.md");
    readme
        .split("```toml\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("\n```").map(|(block, _)| block.to_owned()))
        .filter(|block| block.contains("[[upstream]]"))
        .collect()
}

#[test]
fn the_readmes_gateway_configurations_parse() {
    let configs = readme_configs();
    assert!(
        configs.len() >= 2,
        "the README shows its gateway configurations"
    );
    for text in &configs {
        let config = GatewayConfig::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let named = text.matches("[[upstream]]").count();
        assert_eq!(config.upstreams.len(), named, "{text}");
    }
    // The ten-line one: three upstreams, one of them pinned to 2026-07-28.
    let ten = configs
        .iter()
        .find(|c| c.lines().count() == 10)
        .expect("a ten-line configuration");
    assert!(ten.contains("era = \"2026-07-28\""), "{ten}");
}
