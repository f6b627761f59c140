//! A descriptor for keys `file/<name>`: each value is written to `/<name>.json` under the
//! folder the host preopened as its root.

use reactor_sdk::{
    Dependency, DependencyTarget, Descriptor, Info, Kv, Origin, Retrieved, export_descriptor,
};

const PREFIX: &str = "file/";

struct Files;

fn path_of(key: &str) -> Result<String, String> {
    let name = key
        .strip_prefix(PREFIX)
        .ok_or_else(|| format!("key {key} is not under {PREFIX}"))?;
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(format!("key {key} does not name a file"));
    }
    Ok(format!("/{name}.json"))
}

impl Descriptor for Files {
    fn describe() -> Info {
        Info::new("files", PREFIX)
    }

    fn validate(key: String, value: String) -> Result<(), String> {
        path_of(&key)?;
        serde_json::from_str::<serde_json::Value>(&value)
            .map_err(|e| format!("value of {key}: {e}"))?;
        Ok(())
    }

    fn create(key: String, value: String) -> Result<Option<String>, String> {
        let path = path_of(&key)?;
        std::fs::write(&path, value).map_err(|e| format!("write {path}: {e}"))?;
        reactor_sdk::info!("wrote {path}");
        Ok(Some(path))
    }

    fn delete(key: String, _value: String, _metadata: Option<String>) -> Result<(), String> {
        let path = path_of(&key)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("remove {path}: {e}")),
        }
    }

    fn retrieve(_correlate: Vec<Kv>) -> Result<Vec<Retrieved>, String> {
        let entries = std::fs::read_dir("/").map_err(|e| format!("list /: {e}"))?;
        let mut found = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("list /: {e}"))?;
            let file = entry.file_name().to_string_lossy().into_owned();
            let Some(name) = file.strip_suffix(".json") else {
                continue;
            };
            let path = format!("/{file}");
            let value = std::fs::read_to_string(&path).map_err(|e| format!("read {path}: {e}"))?;
            found.push(Retrieved {
                key: format!("{PREFIX}{name}"),
                value,
                metadata: Some(path),
                origin: Origin::FromNorthbound,
            });
        }
        found.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(found)
    }

    fn dependencies(key: String, _value: String) -> Vec<Dependency> {
        // Every file but `file/base` waits for `file/base`.
        if key == "file/base" {
            return Vec::new();
        }
        vec![Dependency {
            label: "base".into(),
            target: DependencyTarget::Key("file/base".into()),
        }]
    }
}

export_descriptor!(Files);
