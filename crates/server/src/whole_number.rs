//! Integers as clients send them. JSON does not tell 3 from 3.0 (JSON Schema calls both an
//! integer), so where Adjutant expects a whole number it takes either, and refuses 3.5. In a
//! query string every value is text: `limit=3` and `limit=3.0` both read 3.
//!
//! Use on a field: `#[serde(deserialize_with = "crate::whole_number::json")]` in a JSON body,
//! `#[serde(default, deserialize_with = "crate::whole_number::query")]` on an optional query
//! parameter (`query_required` when it must be there).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// The largest float that still counts whole numbers one by one.
const EXACT_FLOAT: f64 = 9_007_199_254_740_992.0;

fn from_float<T: TryFrom<i64>, E: de::Error>(value: f64) -> Result<T, E> {
    if value.fract() != 0.0 || !value.is_finite() || value.abs() > EXACT_FLOAT {
        return Err(E::invalid_value(de::Unexpected::Float(value), &"a whole number"));
    }
    from_int(value as i64)
}

fn from_int<T: TryFrom<i64>, E: de::Error>(value: i64) -> Result<T, E> {
    T::try_from(value).map_err(|_| E::invalid_value(de::Unexpected::Signed(value), &"a whole number in range"))
}

struct Whole<T> {
    text_too: bool,
    _kind: PhantomData<T>,
}

impl<T: TryFrom<i64>> Visitor<'_> for Whole<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a whole number")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        from_int(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        let v = i64::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &"a smaller number"))?;
        from_int(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        from_float(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        if !self.text_too {
            return Err(E::invalid_type(de::Unexpected::Str(v), &self));
        }
        match v.parse::<i64>() {
            Ok(n) => from_int(n),
            // Only plain decimals: no "inf", "NaN" or exponents.
            Err(_) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'-') => {
                from_float(v.parse::<f64>().map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))?)
            }
            Err(_) => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
        }
    }
}

/// A whole number in a JSON body: `3` or `3.0`, never `"3"`.
pub fn json<'de, D: Deserializer<'de>, T: TryFrom<i64>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(Whole { text_too: false, _kind: PhantomData })
}

struct QueryWhole<T>(T);

impl<'de, T: TryFrom<i64>> Deserialize<'de> for QueryWhole<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Whole { text_too: true, _kind: PhantomData }).map(QueryWhole)
    }
}

/// An optional whole number in a query string.
pub fn query<'de, D: Deserializer<'de>, T: TryFrom<i64>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<QueryWhole<T>>::deserialize(d).map(|v| v.map(|w| w.0))
}

/// A whole number a query string must carry.
pub fn query_required<'de, D: Deserializer<'de>, T: TryFrom<i64>>(d: D) -> Result<T, D::Error> {
    QueryWhole::<T>::deserialize(d).map(|w| w.0)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Body {
        #[serde(deserialize_with = "super::json")]
        first_digit: u32,
    }

    #[derive(Debug, Deserialize)]
    struct Query {
        #[serde(default, deserialize_with = "super::query")]
        limit: Option<i64>,
        #[serde(deserialize_with = "super::query_required")]
        ms: u32,
    }

    fn body(text: &str) -> Result<u32, String> {
        serde_json::from_str::<Body>(text).map(|b| b.first_digit).map_err(|e| e.to_string())
    }

    fn query(text: &str) -> Result<(Option<i64>, u32), String> {
        axum::extract::Query::<Query>::try_from_uri(&format!("/x?{text}").parse().unwrap())
            .map(|q| (q.0.limit, q.0.ms))
            .map_err(|e| e.body_text())
    }

    #[test]
    fn a_json_body_takes_3_and_3_point_0_alike() {
        assert_eq!(body(r#"{"first_digit": 9}"#), Ok(9));
        assert_eq!(body(r#"{"first_digit": 9.0}"#), Ok(9));
        assert_eq!(body(r#"{"first_digit": 8e0}"#), Ok(8));
        assert!(body(r#"{"first_digit": 9.5}"#).is_err());
        assert!(body(r#"{"first_digit": "9"}"#).is_err());
        assert!(body(r#"{"first_digit": -1}"#).is_err());
        assert!(body(r#"{"first_digit": 1e300}"#).is_err());
        assert!(body(r#"{"first_digit": null}"#).is_err());
    }

    #[test]
    fn a_query_takes_3_and_3_point_0_alike() {
        assert_eq!(query("ms=123"), Ok((None, 123)));
        assert_eq!(query("ms=123.0&limit=5.00"), Ok((Some(5), 123)));
        assert_eq!(query("ms=0&limit=-2"), Ok((Some(-2), 0)));
        for bad in ["ms=1.5", "ms=abc", "ms=", "ms=-1", "ms=inf", "ms=NaN", "ms=1e3", "ms=4294967296", "limit=5"] {
            assert!(query(bad).is_err(), "{bad}");
        }
    }
}
