struct Counter(u64);

#[switchboard::handlers]
impl Counter {
    /// Bumps.
    #[tool]
    async fn bump(&mut self) -> String {
        self.0 += 1;
        self.0.to_string()
    }
}

fn main() {}
