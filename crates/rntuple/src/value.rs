//! Row-wise dynamic values and their JSON form (the form of `rntuple dump`): what the writer
//! fills from and the reader converts to, so it belongs to neither.

/// A dynamic value of one field in one entry.
///
/// ```
/// use rntuple::Value;
/// let v = Value::Record(vec![("pt".into(), Value::F32(25.5)), ("tags".into(), Value::List(vec![Value::String("good".into())]))]);
/// assert_eq!(v.to_json().to_string(), r#"{"pt":25.5,"tags":["good"]}"#);
/// let Value::Record(members) = &v else { unreachable!() };
/// assert_eq!(members[0].1.as_f64(), Some(25.5));
/// // JSON numbers come back as the widest types: the float as a double.
/// assert_eq!(Value::from_json(&v.to_json()), Value::Record(vec![
///     ("pt".into(), Value::F64(25.5)),
///     ("tags".into(), Value::List(vec![Value::String("good".into())])),
/// ]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Absent optional, valueless variant.
    Null,
    /// bool.
    Bool(bool),
    /// Signed integers (and char).
    Int(i64),
    /// Unsigned integers (and std::byte).
    UInt(u64),
    /// float.
    F32(f32),
    /// double.
    F64(f64),
    /// std::string.
    String(String),
    /// Raw bytes (streamer fields).
    Bytes(Vec<u8>),
    /// Vectors, sets, arrays, bitsets, maps (as lists of pairs), pairs and tuples.
    List(Vec<Value>),
    /// Records: (member name, value) in schema order.
    Record(Vec<(String, Value)>),
}

impl Value {
    /// The JSON form of DESIGN.md: NaN and infinities as strings, floats that read back
    /// exactly, records as objects, everything else as arrays.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        fn float(x: f64) -> J {
            if x.is_nan() {
                J::String("nan".into())
            } else if x.is_infinite() {
                J::String(if x > 0.0 { "inf" } else { "-inf" }.into())
            } else {
                serde_json::Number::from_f64(x).map(J::Number).unwrap_or(J::Null)
            }
        }
        match self {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::UInt(u) => J::from(*u),
            Value::F32(x) => float(*x as f64),
            Value::F64(x) => float(*x),
            Value::String(s) => J::String(s.clone()),
            Value::Bytes(b) => J::Array(b.iter().map(|&x| J::from(x)).collect()),
            Value::List(v) => J::Array(v.iter().map(|x| x.to_json()).collect()),
            Value::Record(m) => J::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
        }
    }
}

impl Value {
    /// From the JSON form of `rntuple dump` (integers, floats, strings, arrays, objects, null;
    /// `"nan"`, `"inf"`, `"-inf"` stay strings and are accepted by floating-point fields).
    ///
    /// ```
    /// let v = rntuple::Value::from_json(&serde_json::json!({"x": [1, 2.5, "a"]}));
    /// assert_eq!(v.to_json(), serde_json::json!({"x": [1, 2.5, "a"]}));
    /// ```
    pub fn from_json(j: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        match j {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::Int(i)
                } else if let Some(u) = n.as_u64() {
                    Value::UInt(u)
                } else {
                    Value::F64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            J::String(s) => Value::String(s.clone()),
            J::Array(a) => Value::List(a.iter().map(Value::from_json).collect()),
            J::Object(m) => Value::Record(m.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect()),
        }
    }

    /// The floating-point value of a number or of `"nan"`, `"inf"`, `"-inf"`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::UInt(u) => Some(*u as f64),
            Value::F32(x) => Some(*x as f64),
            Value::F64(x) => Some(*x),
            Value::String(s) => match s.as_str() {
                "nan" => Some(f64::NAN),
                "inf" => Some(f64::INFINITY),
                "-inf" => Some(f64::NEG_INFINITY),
                _ => None,
            },
            _ => None,
        }
    }
}
