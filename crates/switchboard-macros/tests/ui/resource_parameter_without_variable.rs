/// A note.
#[switchboard::resource("note://{title}")]
async fn note(title: String, format: String) -> String {
    format!("{title}.{format}")
}

fn main() {}
