#[switchboard::tool]
struct Add;

fn main() {}
