//! Wire structs read only from a JSON map: serde's derive would also take a list (`[]`,
//! `["k", "a", …]`) field by field, which an API must refuse.

/// Implements `Serialize` and `Deserialize` for a struct declared with
/// `#[serde(remote = "Self")]`: serialized as derived, deserialized only from a map (a list or
/// a scalar is refused with "invalid type: …, expected `$expecting`").
#[doc(hidden)]
#[macro_export]
macro_rules! __from_map {
    ($ty:ty, $expecting:literal) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                <$ty>::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Fields;
                impl<'de> serde::de::Visitor<'de> for Fields {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        map: A,
                    ) -> Result<$ty, A::Error> {
                        <$ty>::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    }
                }
                deserializer.deserialize_map(Fields)
            }
        }
    };
}

pub use __from_map as from_map;

#[cfg(test)]
mod tests {
    use super::from_map;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self", deny_unknown_fields)]
    struct Pair {
        a: u32,
        #[serde(default)]
        b: bool,
    }
    from_map!(Pair, "a pair");

    #[test]
    fn a_map_is_read_and_a_list_refused() {
        let pair: Pair = serde_json::from_str(r#"{"a": 1}"#).expect("map");
        assert_eq!(pair, Pair { a: 1, b: false });
        assert_eq!(
            serde_json::to_string(&pair).expect("json"),
            r#"{"a":1,"b":false}"#
        );
        let err = serde_json::from_str::<Pair>("[1, true]").expect_err("list");
        assert!(err.to_string().contains("expected a pair"), "{err}");
        let err = serde_json::from_str::<Pair>(r#"{"a": 1, "c": 2}"#).expect_err("unknown");
        assert!(err.to_string().contains("unknown field `c`"), "{err}");
    }
}
