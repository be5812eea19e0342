/// Refreshes the view.
#[switchboard::tool(app = "ui://notes/list", visibility = "agent")]
async fn refresh() -> String {
    String::new()
}

/// A link that is not a view.
#[switchboard::tool(app = "https://example.com/view")]
async fn web() -> String {
    String::new()
}

/// A visibility without a view.
#[switchboard::tool(visibility = "app")]
async fn lonely() -> String {
    String::new()
}

fn main() {}
