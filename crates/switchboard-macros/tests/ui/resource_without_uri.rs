/// A note.
#[switchboard::resource]
async fn note() -> String {
    String::new()
}

fn main() {}
