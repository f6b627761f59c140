//! The object documents a user applies (`apply -f`, YAML or JSON): any text is parsed or
//! refused without a panic, and every document parsed reads back the same from the JSON the
//! client sends.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reactor_core::object::{ApplyRequest, parse_documents};

fuzz_target!(|text: &str| {
    let Ok(requests) = parse_documents(text) else {
        return;
    };
    for request in requests {
        let json = serde_json::to_string(&request).expect("a parsed document serialises");
        let again: ApplyRequest = serde_json::from_str(&json).expect("and reads back");
        assert_eq!(again, request, "{json}");
    }
});
