//! Checks on the JSON before it is typed: the objects that hold exactly one
//! of several kinds (an RX frame, an RX fault, a QP's IP endpoints) get an
//! error that names the kinds expected and what was found, where serde's
//! generic enum errors would say "expected value".

use serde_json::Value;

/// The one-of objects of a vector, by where they are: (array, field, kinds).
const ONE_OF: &[(&str, &str, &[&str])] = &[
    ("rx", "frame", &["pfc", "cnp", "ack", "nak", "data", "hex"]),
    ("qps", "ip", &["ipv4", "ipv6"]),
];

/// RX faults written as a bare name, and those written `{"name": value}`.
const FAULT_NAMES: &[&str] = &["fcs", "ip_checksum", "icrc", "covered_byte"];
const FAULT_KEYS: &[&str] = &["truncate", "udp_dport", "dest_qp", "tver"];

/// `(field path, reason)` of the first shape error.
pub fn check(v: &Value) -> Result<(), (String, String)> {
    let Some(top) = v.as_object() else {
        return Err(("(top level)".into(), "a vector is a JSON object".into()));
    };
    for &(array, field, kinds) in ONE_OF {
        let Some(items) = top.get(array).and_then(Value::as_array) else {
            continue;
        };
        for (k, item) in items.iter().enumerate() {
            if let Some(x) = item.get(field) {
                one_of(x, kinds, &[]).map_err(|r| (format!("{array}[{k}].{field}"), r))?;
            }
        }
    }
    if let Some(items) = top.get("rx").and_then(Value::as_array) {
        for (k, item) in items.iter().enumerate() {
            if let Some(x) = item.get("fault").filter(|x| !x.is_null()) {
                one_of(x, FAULT_KEYS, FAULT_NAMES).map_err(|r| (format!("rx[{k}].fault"), r))?;
            }
        }
    }
    Ok(())
}

fn list(xs: &[&str]) -> String {
    match xs {
        [] => String::new(),
        [a] => a.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `x` is an object with exactly one key of `keys`, or a string of `names`.
pub(super) fn one_of(x: &Value, keys: &[&str], names: &[&str]) -> Result<(), String> {
    let expected = if names.is_empty() {
        format!("one of {}", list(keys))
    } else {
        format!(
            "one of \"{}\" or an object {{\"{}\": value}}",
            names.join("\", \""),
            keys.join("|")
        )
    };
    match x {
        Value::String(s) if names.contains(&s.as_str()) => Ok(()),
        Value::String(s) => Err(format!("expected {expected}, found \"{s}\"")),
        Value::Object(m) => {
            let found: Vec<&str> = m.keys().map(String::as_str).collect();
            match found.as_slice() {
                [] => Err(format!("expected {expected}, found an empty object")),
                [one] if keys.contains(one) => Ok(()),
                [one] => Err(format!("expected {expected}, found `{one}`")),
                many => Err(format!(
                    "expected exactly one of {}, found {}: {}",
                    list(keys),
                    many.len(),
                    many.join(" and ")
                )),
            }
        }
        other => Err(format!("expected {expected}, found {}", kind(other))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        let v: Value = serde_json::from_str(json).unwrap();
        let (p, r) = check(&v).unwrap_err();
        format!("{p}: {r}")
    }

    #[test]
    fn one_of_errors_say_what_was_expected_and_found() {
        assert_eq!(
            err(r#"{"rx":[{"frame":{"ack":{},"nak":{}}}]}"#),
            "rx[0].frame: expected exactly one of pfc, cnp, ack, nak, data or hex, found 2: ack and nak"
        );
        assert_eq!(
            err(r#"{"qps":[{"ip":{}}]}"#),
            "qps[0].ip: expected one of ipv4 or ipv6, found an empty object"
        );
        assert_eq!(
            err(r#"{"rx":[{"frame":{"cnp":{}},"fault":{"bogus":1}}]}"#),
            "rx[0].fault: expected one of \"fcs\", \"ip_checksum\", \"icrc\", \"covered_byte\" or an object {\"truncate|udp_dport|dest_qp|tver\": value}, found `bogus`"
        );
        assert_eq!(
            err(r#"{"rx":[{"frame":{"cnp":{}},"fault":"fsc"}]}"#),
            "rx[0].fault: expected one of \"fcs\", \"ip_checksum\", \"icrc\", \"covered_byte\" or an object {\"truncate|udp_dport|dest_qp|tver\": value}, found \"fsc\""
        );
        assert!(check(
            &serde_json::from_str(r#"{"rx":[{"frame":{"hex":"00"},"fault":"fcs"}]}"#).unwrap()
        )
        .is_ok());
    }
}
