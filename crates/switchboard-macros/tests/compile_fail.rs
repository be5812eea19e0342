//! Each unsupported signature fails to compile with a message that says what to write instead;
//! the expected messages are the `.stderr` files beside the cases in `tests/ui`
//! (`TRYBUILD=overwrite cargo test -p switchboard-macros --test compile_fail` rewrites them).

#[test]
fn unsupported_signatures_fail_with_a_clear_message() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
