//! Tables must be written as tables. serde fills a struct from a sequence by position, so without this
//! check `run = [7]` would quietly set the first field of `[run]`. After a config is built, its
//! effective form is walked beside the input: wherever the input has a list and the effective config a
//! table, the input is refused with the dotted key.

use nandstack_core::{Error, Result};
use serde_json::Value;

/// Refuse a list in `input` where `effective` (the built config, serialized) has a table.
pub(crate) fn check_tables(input: &Value, effective: &Value) -> Result<()> {
    let mut stack: Vec<(&Value, &Value, String)> = vec![(input, effective, String::new())];
    while let Some((i, e, key)) = stack.pop() {
        match (i, e) {
            (Value::Array(_), Value::Object(_)) => {
                return Err(Error::config(
                    key,
                    "must be a table (`{ key = value, ... }` or a [section]), not a list",
                ))
            }
            (Value::Object(im), Value::Object(em)) => {
                for (k, iv) in im {
                    if let Some(ev) = em.get(k) {
                        let sub = if key.is_empty() {
                            k.clone()
                        } else {
                            format!("{key}.{k}")
                        };
                        stack.push((iv, ev, sub));
                    }
                }
            }
            (Value::Array(ia), Value::Array(ea)) => {
                for (n, (iv, ev)) in ia.iter().zip(ea).enumerate() {
                    stack.push((iv, ev, format!("{key}[{n}]")));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_list_where_a_table_is_is_named() {
        let e = json!({"run": {"a": 1}, "w": [{"t": {"x": 1}}]});
        assert!(check_tables(&json!({"run": {"a": 1}}), &e).is_ok());
        let err = check_tables(&json!({"run": [7]}), &e).unwrap_err();
        assert!(err.to_string().contains("`run`"), "{err}");
        let err = check_tables(&json!({"w": [{"t": [1]}]}), &e).unwrap_err();
        assert!(err.to_string().contains("`w[0].t`"), "{err}");
        // A list where the effective config has a list, or a key it dropped, is not this check's business.
        assert!(check_tables(&json!({"w": [{"t": {"x": 2}}], "gone": [1]}), &e).is_ok());
    }
}
