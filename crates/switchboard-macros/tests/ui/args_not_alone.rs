#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: f64,
}

/// Scales.
#[switchboard::tool]
async fn scale(p: switchboard::server::Args<Point>, by: f64) -> String {
    (p.x * by).to_string()
}

fn main() {}
