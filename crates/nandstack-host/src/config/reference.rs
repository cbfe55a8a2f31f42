//! The config reference, generated from the config types' JSON schema (doc comments → descriptions):
//! one table per type, each key with its type and description (which states default and unit).

use schemars::schema_for;
use serde_json::Value;

use super::HostSimConfig;

fn type_name(v: &Value) -> String {
    if let Some(r) = v.get("$ref").and_then(Value::as_str) {
        return format!(
            "[{0}](#{1})",
            r.rsplit('/').next().unwrap_or(r),
            r.rsplit('/').next().unwrap_or(r).to_lowercase()
        );
    }
    if let Some(all) = v.get("allOf").and_then(Value::as_array) {
        if let Some(first) = all.first() {
            return type_name(first);
        }
    }
    if let Some(any) = v.get("anyOf").and_then(Value::as_array) {
        return any
            .iter()
            .filter(|x| x.get("type") != Some(&Value::from("null")))
            .map(type_name)
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if let Some(e) = v.get("enum").and_then(Value::as_array) {
        return e
            .iter()
            .map(|x| format!("`{}`", x.as_str().unwrap_or("?")))
            .collect::<Vec<_>>()
            .join(", ");
    }
    match v.get("type") {
        Some(Value::String(t)) if t == "array" => {
            format!("list of {}", v.get("items").map_or("?".into(), type_name))
        }
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "value".into(),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

fn table(name: &str, v: &Value, out: &mut String) {
    out.push_str(&format!("\n### {name}\n\n"));
    if let Some(d) = v.get("description").and_then(Value::as_str) {
        out.push_str(&one_line(d));
        out.push_str("\n\n");
    }
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = v
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        out.push_str("| key | type | description |\n|---|---|---|\n");
        for (k, p) in props {
            let req = if required.contains(&k.as_str()) {
                " (required)"
            } else {
                ""
            };
            out.push_str(&format!(
                "| `{k}`{req} | {} | {} |\n",
                type_name(p),
                one_line(p.get("description").and_then(Value::as_str).unwrap_or(""))
            ));
        }
    } else if let Some(one) = v.get("oneOf").and_then(Value::as_array) {
        out.push_str("| variant | description |\n|---|---|\n");
        let mut subtables = String::new();
        for variant in one {
            if let Some(tag) = variant
                .get("properties")
                .and_then(|p| p.get("type"))
                .and_then(|t| t.get("enum"))
                .and_then(Value::as_array)
                .and_then(|e| e.first())
                .and_then(Value::as_str)
            {
                let mut keys = variant.clone();
                if let Some(props) = keys.get_mut("properties").and_then(Value::as_object_mut) {
                    props.remove("type");
                }
                table(&format!("{name} `type = {tag}`"), &keys, &mut subtables);
            }
            let label = variant
                .get("enum")
                .and_then(Value::as_array)
                .map(|e| {
                    e.iter()
                        .map(|x| format!("`{}`", x.as_str().unwrap_or("?")))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .or_else(|| {
                    variant
                        .get("properties")
                        .and_then(|p| p.get("type"))
                        .and_then(|t| t.get("enum"))
                        .and_then(Value::as_array)
                        .map(|e| {
                            format!(
                                "`type = {}`",
                                e.first().and_then(Value::as_str).unwrap_or("?")
                            )
                        })
                })
                .unwrap_or_else(|| type_name(variant));
            let extra = variant
                .get("allOf")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .map(type_name)
                .map(|t| format!(" — keys of {t}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "| {label} | {}{extra} |\n",
                one_line(
                    variant
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                )
            ));
        }
        out.push_str(&subtables);
    }
}

/// Markdown reference of every config type of a host simulation.
pub fn config_reference_markdown() -> String {
    let schema = serde_json::to_value(schema_for!(HostSimConfig)).expect("schema serialises");
    let mut out = String::from(
        "_Generated from the config types (`cargo run -p nandstack-host --example config_reference`); \
         do not edit by hand._\n",
    );
    table("HostSimConfig", &schema, &mut out);
    if let Some(defs) = schema.get("definitions").and_then(Value::as_object) {
        for (name, v) in defs {
            table(name, v, &mut out);
        }
    }
    out
}
