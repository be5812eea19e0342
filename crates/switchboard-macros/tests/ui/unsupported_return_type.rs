/// Counts.
#[switchboard::tool]
async fn count() -> u32 {
    1
}

fn main() {}
