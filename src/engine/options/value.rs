//! How option values are read: the error every bad value becomes, decimal text, and the numbers
//! of the JSON options (an integer may be a JSON number or a string of digits, as the vendor
//! reads them). A leaf shared by the option parsers.

use serde_json::Value;

use crate::error::EngineError;
use crate::error::engine_status::ADXL_PARAM_INVALID;

/// PARAM_INVALID for `key=value`, saying why.
pub fn invalid(key: &str, value: &str, why: &str) -> EngineError {
    EngineError::new(ADXL_PARAM_INVALID, format!("option {key}={value:?}: {why}"))
}

/// PARAM_INVALID for one entry of a JSON option (`option` is the option's key).
pub fn invalid_entry(option: &str, entry: &str, value: &Value, why: &str) -> EngineError {
    EngineError::new(ADXL_PARAM_INVALID, format!("option {option}: {entry}={value}: {why}"))
}

/// A decimal number with nothing around it (no sign, no spaces).
pub fn number(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 19 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// An integer entry in `min..=max`: a JSON integer or a string holding one (`unit` follows the
/// range in the message, e.g. `" TB"`).
pub fn int_in(
    option: &str,
    entry: &str,
    value: &Value,
    min: i64,
    max: i64,
    unit: &str,
) -> Result<i64, EngineError> {
    let n = match value {
        Value::Number(n) => n.as_i64().or_else(|| n.as_u64().map(|_| i64::MAX)),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    let range = format!("must be an integer in [{min}, {max}]{unit} (a JSON integer or a string of digits)");
    match n {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(invalid_entry(option, entry, value, &range)),
    }
}

/// A ratio strictly between 0 and 1: a JSON number or a string holding one.
pub fn ratio(option: &str, entry: &str, value: &Value) -> Result<f64, EngineError> {
    let r = match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match r {
        Some(r) if r > 0.0 && r < 1.0 => Ok(r),
        _ => Err(invalid_entry(option, entry, value, "must be a number in (0, 1), e.g. 0.8")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_are_numbers_or_digit_strings() {
        assert_eq!(int_in("o", "e", &json!(5), 1, 8, "").unwrap(), 5);
        assert_eq!(int_in("o", "e", &json!("5"), 1, 8, "").unwrap(), 5);
        for bad in [json!(0), json!(9), json!("x"), json!(2.5), json!(true), json!(null), json!(u64::MAX)] {
            let e = int_in("o", "e", &bad, 1, 8, " TB").unwrap_err();
            assert_eq!(e.status, ADXL_PARAM_INVALID);
            assert!(e.message.contains("[1, 8] TB"), "{}", e.message);
        }
        assert_eq!(ratio("o", "e", &json!("0.5")).unwrap(), 0.5);
        for bad in [json!(0), json!(1), json!("1.5"), json!(false)] {
            assert!(ratio("o", "e", &bad).is_err());
        }
    }
}
