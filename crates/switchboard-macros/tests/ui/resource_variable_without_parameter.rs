/// A note.
#[switchboard::resource("note://{title}")]
async fn note() -> String {
    String::new()
}

fn main() {}
