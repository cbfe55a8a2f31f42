//! The config reference, generated from the config types' JSON schema (doc comments → descriptions), and
//! the default config as TOML.

use schemars::schema_for;
use serde_json::Value;

use crate::config::SimConfig;

/// Markdown: one table per section, every key with its type/allowed values, default and description.
pub fn config_reference_markdown() -> String {
    let schema = serde_json::to_value(schema_for!(SimConfig)).expect("schema serializes");
    schema_reference_markdown(
        &schema,
        "# Configuration reference\n\n_Generated from the config types by `nandstack config --reference`; do not edit._\n\n\
         One schema for every stack: `[workload]` (synthetic block requests, a trace, a stand-in or host programs), \
         `[host]` (the OS memory/swap model, host programs only), `[device]` (`kind = \"block\"` or `\"hybrid\"`; \
         sections of the other kind are errors), `[precondition]`, `[run]`, `[[pretrain]]`. A config is one TOML \
         file; every key below can also be set with `--set section.key=value`. Unknown keys are errors that name \
         the key.\n",
    )
}

/// Markdown reference of any config type's JSON schema (`schemars`), after `header`: one table per
/// section (nested structs become `[a.b]` sections).
pub fn schema_reference_markdown(schema: &Value, header: &str) -> String {
    let defs = schema.get("definitions").cloned().unwrap_or(Value::Null);
    let mut out = String::from(header);
    section(schema, "", &defs, &mut out);
    out
}

fn resolve<'a>(v: &'a Value, defs: &'a Value) -> &'a Value {
    if let Some(r) = v.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        return defs.get(name).map(|d| resolve(d, defs)).unwrap_or(v);
    }
    if let Some(all) = v.get("allOf").and_then(Value::as_array) {
        if all.len() == 1 {
            return resolve(&all[0], defs);
        }
    }
    // Option<Struct>: anyOf [struct, null] documents the struct's keys.
    if let Some(any) = v.get("anyOf").and_then(Value::as_array) {
        let inner: Vec<&Value> = any
            .iter()
            .filter(|x| x.get("type") != Some(&Value::from("null")))
            .collect();
        if inner.len() == 1 {
            let r = resolve(inner[0], defs);
            if is_struct(r) {
                return r;
            }
        }
    }
    v
}

fn is_struct(v: &Value) -> bool {
    v.get("properties").is_some() && v.get("oneOf").is_none()
}

fn type_of(v: &Value, defs: &Value) -> String {
    let v = resolve(v, defs);
    if let Some(e) = v.get("enum").and_then(Value::as_array) {
        return e
            .iter()
            .map(|x| format!("`{}`", x.as_str().unwrap_or("?")))
            .collect::<Vec<_>>()
            .join(", ");
    }
    if let Some(any) = v.get("anyOf").and_then(Value::as_array) {
        // Option<T>: T or null.
        let inner: Vec<String> = any
            .iter()
            .filter(|x| x.get("type") != Some(&Value::from("null")))
            .map(|x| type_of(x, defs))
            .collect();
        return inner.join(" | ");
    }
    if let Some(one) = v.get("oneOf").and_then(Value::as_array) {
        let mut names = Vec::new();
        for variant in one {
            let variant = resolve(variant, defs);
            if let Some(e) = variant.get("enum").and_then(Value::as_array) {
                names.extend(e.iter().map(|x| format!("`{}`", x.as_str().unwrap_or("?"))));
            } else if let Some(props) = variant.get("properties").and_then(Value::as_object) {
                for (k, p) in props {
                    if let Some(e) = p.get("enum").and_then(Value::as_array) {
                        let extra: Vec<&String> = props.keys().filter(|x| *x != k).collect();
                        let extra = if extra.is_empty() {
                            String::new()
                        } else {
                            format!(
                                " (+ {})",
                                extra
                                    .iter()
                                    .map(|x| format!("`{x}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        };
                        names.extend(
                            e.iter().map(|x| {
                                format!("`{k} = \"{}\"`{extra}", x.as_str().unwrap_or("?"))
                            }),
                        );
                    }
                }
            }
        }
        return names.join(", ");
    }
    match v.get("type") {
        Some(Value::String(t)) if t == "array" => format!(
            "array of {}",
            v.get("items").map_or("?".into(), |i| type_of(i, defs))
        ),
        Some(Value::String(t)) if t == "object" => "table".into(),
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "value".into(),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The struct an array's items are, if any.
fn array_struct<'a>(v: &'a Value, defs: &'a Value) -> Option<&'a Value> {
    let v = resolve(v, defs);
    (v.get("type") == Some(&Value::from("array")))
        .then(|| v.get("items"))
        .flatten()
        .map(|i| resolve(i, defs))
        .filter(|i| is_struct(i) || tagged_variants(i, defs).is_some())
}

/// The variants of an internally tagged enum: (tag key, tag value, variant schema) for each variant
/// that carries keys besides its tag.
fn tagged_variants<'a>(v: &'a Value, defs: &'a Value) -> Option<Vec<(String, String, &'a Value)>> {
    let one = resolve(v, defs).get("oneOf")?.as_array()?;
    let mut out = Vec::new();
    for variant in one {
        let variant = resolve(variant, defs);
        let Some(props) = variant.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (k, p) in props {
            if let Some(tag) = p
                .get("enum")
                .and_then(Value::as_array)
                .filter(|e| e.len() == 1)
                .and_then(|e| e[0].as_str())
            {
                if props.len() > 1 {
                    out.push((k.clone(), tag.to_string(), variant));
                }
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

fn section(schema: &Value, path: &str, defs: &Value, out: &mut String) {
    let schema = resolve(schema, defs);
    if let Some(variants) = tagged_variants(schema, defs) {
        // A table whose keys depend on its tag: one sub-section per variant.
        for (tag_key, tag, variant) in variants {
            let mut keys = variant.clone();
            if let Some(props) = keys.get_mut("properties").and_then(Value::as_object_mut) {
                props.remove(&tag_key);
            }
            section_titled(
                &keys,
                path,
                &format!("[{path}] with `{tag_key} = \"{tag}\"`"),
                defs,
                out,
            );
        }
        return;
    }
    let title = if path.is_empty() {
        "top level".to_string()
    } else {
        format!("[{path}]")
    };
    section_titled(schema, path, &title, defs, out);
}

fn section_titled(schema: &Value, path: &str, title: &str, defs: &Value, out: &mut String) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    out.push_str(&format!("\n## {title}\n\n"));
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        out.push_str(&format!("{}\n\n", one_line(d)));
    }
    out.push_str("| key | type / values | default | description |\n|---|---|---|---|\n");
    let mut nested = Vec::new();
    for (key, prop) in props {
        let target = resolve(prop, defs);
        let full = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        if is_struct(target) {
            nested.push((full, prop, false));
            continue;
        }
        if let Some(item) = array_struct(prop, defs) {
            nested.push((full.clone(), item, true));
        } else if tagged_variants(target, defs).is_some() {
            nested.push((full.clone(), prop, false));
        }
        let desc = prop
            .get("description")
            .or_else(|| target.get("description"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let default = prop
            .get("default")
            .map_or(String::new(), |d| format!("`{d}`"));
        out.push_str(&format!(
            "| `{key}` | {} | {} | {} |\n",
            type_of(prop, defs),
            default,
            one_line(desc)
        ));
    }
    for (full, prop, array) in nested {
        if array {
            let mut sub = String::new();
            section(prop, &full, defs, &mut sub);
            // Arrays of tables are `[[key]]` in TOML.
            out.push_str(&sub.replacen(&format!("## [{full}]"), &format!("## [[{full}]]"), 1));
        } else {
            section(prop, &full, defs, out);
        }
    }
}

/// The default config as TOML (what `nandstack run` uses with no config file).
pub fn default_config_toml() -> String {
    let mut cfg = SimConfig::default_main_job();
    // Fill and warm-up default by workload kind (block: full and one capacity; host programs: a fresh
    // device): left out, so an edited copy that switches the kind gets that kind's defaults.
    cfg.precondition.fill_fraction = None;
    cfg.precondition.warmup_capacity_multiples = None;
    let body = toml::to_string_pretty(&cfg).expect("config serializes to TOML");
    format!(
        "# nandstack default run: 4 KiB uniform random writes on the default 16 GiB TLC SSD, filled then warmed\n\
         # up to steady state. Every key is documented in docs/config-reference.md. [precondition]'s\n\
         # fill_fraction and warmup_capacity_multiples are left to each workload kind's default.\n\n{body}"
    )
}

impl SimConfig {
    /// The embedded main job.
    pub fn default_main_job() -> SimConfig {
        SimConfig::from_toml("").expect("empty config is valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_lists_every_section_and_key() {
        let md = config_reference_markdown();
        for needle in [
            "## [device.ftl.gc]",
            "`start_free_blocks`",
            "## [workload]",
            "`zipf_theta`",
            "## [workload.io]",
            "## [workload.trace]",
            "## [[workload.processes]]",
            "## [workload.processes.workload] with `type = \"memtouch\"`",
            "## [host]",
            "## [host.swap]",
            "## [device.geometry]",
            "## [device.hybrid]",
            "## [device.manager]",
            "`policy = \"d_choices\"`",
            "`policy = \"greedy\"`",
            "## [precondition]",
            "## [run]",
        ] {
            assert!(md.contains(needle), "missing {needle} in\n{md}");
        }
    }

    #[test]
    fn default_toml_leaves_kind_dependent_preconditioning_to_the_kind() {
        let t = default_config_toml();
        assert!(!t.contains("fill_fraction =") && !t.contains("warmup_capacity_multiples ="));
        assert!(t.contains("kind = \"synthetic\""), "{t}");
        let host = t.replacen("kind = \"synthetic\"", "kind = \"host\"", 1)
            + "[[workload.processes]]\nname = \"m\"\nworkload = { type = \"memtouch\", pages = 64, ops = 10, pattern = \"uniform\", write_pct = 50, seed = 1 }\n";
        let cfg = SimConfig::from_toml(&host).unwrap();
        assert_eq!(cfg.precondition.fill_fraction, Some(0.0), "{host}");
        assert_eq!(cfg.precondition.warmup_capacity_multiples, Some(0.0));
    }

    #[test]
    fn default_toml_parses_back_to_the_default() {
        let t = default_config_toml();
        assert_eq!(
            SimConfig::from_toml(&t).unwrap(),
            SimConfig::default_main_job()
        );
    }
}
