struct Calc;

#[switchboard::handlers]
impl Default for Calc {
    fn default() -> Self {
        Calc
    }
}

fn main() {}
