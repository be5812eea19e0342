/// Does nothing.
#[switchboard::tool]
async fn nothing(a: i64) {
    let _ = a;
}

fn main() {}
