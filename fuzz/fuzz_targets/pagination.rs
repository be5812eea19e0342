//! libFuzzer around `switchboard_fuzz_targets::pagination::run`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| switchboard_fuzz_targets::pagination::run(data));
