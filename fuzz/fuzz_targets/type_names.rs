//! Fuzz target: the C++ type name parser (field types come from the file, so they are untrusted).
//! Must never panic; and the name we print for a parsed type parses to the same type.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple::logical::typename::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    if let Ok(t) = parse(s) {
        let name = t.name();
        let again = parse(&name).unwrap_or_else(|e| panic!("{s:?} parsed, but its name {name:?} does not: {e}"));
        assert_eq!(again.name(), name, "input {s:?}");
    }
});
