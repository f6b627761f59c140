//! The bindings `wit-bindgen` generates from the one WIT package, for the chosen world.

#[cfg(feature = "controller")]
wit_bindgen::generate!({
    path: "../wit",
    world: "controller",
    pub_export_macro: true,
    export_macro_name: "__export_controller",
    default_bindings_module: "reactor_sdk::bindings",
    runtime_path: "reactor_sdk::__wit_bindgen::rt",
    additional_derives: [PartialEq],
});

#[cfg(feature = "descriptor")]
wit_bindgen::generate!({
    path: "../wit",
    world: "descriptor",
    pub_export_macro: true,
    export_macro_name: "__export_descriptor",
    default_bindings_module: "reactor_sdk::bindings",
    runtime_path: "reactor_sdk::__wit_bindgen::rt",
    additional_derives: [PartialEq],
});
