//! The HTTP API's request bodies and objects (`api::wire`, `object::Object`): any bytes are
//! read or refused without a panic, and what is read serialises and reads back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reactor_core::wire::{
    ApplyBody, FeedBody, FinalizersBody, HeartbeatBody, RegisterBody, ReportBody, StatusBody,
};
use reactor_core::object::Object;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads `bytes` as `T`; if it is one, its JSON must read back to the same JSON.
fn round_trip<T: Serialize + DeserializeOwned>(bytes: &[u8]) {
    let Ok(read) = serde_json::from_slice::<T>(bytes) else {
        return;
    };
    let json = serde_json::to_value(&read).expect("a read body serialises");
    let again: T = serde_json::from_value(json.clone()).expect("and reads back");
    let json_again: Value = serde_json::to_value(&again).expect("serialises again");
    assert_eq!(json, json_again);
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    match which % 8 {
        0 => round_trip::<ApplyBody>(body),
        1 => round_trip::<StatusBody>(body),
        2 => round_trip::<RegisterBody>(body),
        3 => round_trip::<HeartbeatBody>(body),
        4 => round_trip::<FeedBody>(body),
        5 => round_trip::<ReportBody>(body),
        6 => round_trip::<FinalizersBody>(body),
        _ => round_trip::<Object>(body),
    }
});
