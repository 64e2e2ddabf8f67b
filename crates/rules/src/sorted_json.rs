//! A value's JSON text with every map's keys sorted, as serde_json writes it from a
//! [`serde_json::Value`] (whose maps keep their keys sorted), written without building that
//! value first.
//!
//! Outcomes are stored as that text, and the whole-campaign audit writes each replayed outcome
//! again to compare it with the stored one: through a `Value`, every key and string of it was
//! copied into a map of its own and dropped again. Here each map and struct gathers its entries'
//! text in one buffer, and writes them out sorted by key.
//!
//! The leaves are written by serde_json itself, so numbers and strings come out as it writes
//! them. What this writer does not take, it refuses, and the caller goes through `Value`
//! instead: an `f32` (a `Value` holds it as the `f64` it widens to), a 128-bit integer, a map
//! key other than a string, a character, an integer or a unit variant, the same key twice in
//! one map (a `Value` keeps the last), and serde_json's own private types.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::ser::{self, Serialize};

/// The text `serde_json::to_string(&serde_json::to_value(value)?)` gives, or `None` where this
/// writer does not take something in `value` (see the module's text).
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    let mut out = Vec::with_capacity(256);
    value.serialize(Writer { out: &mut out }).ok()?;
    // serde_json writes only UTF-8.
    String::from_utf8(out).ok()
}

/// Something this writer does not take.
#[derive(Debug)]
pub struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not written in sorted order here")
    }
}

impl std::error::Error for Refused {}

impl ser::Error for Refused {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Refused
    }
}

/// A leaf, written by serde_json.
fn leaf<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Refused> {
    serde_json::to_writer(out, value).map_err(|_| Refused)
}

/// `{"variant":`, how serde_json starts a variant that holds a value (its value and `}` follow).
fn variant_key(out: &mut Vec<u8>, variant: &str) -> Result<(), Refused> {
    out.push(b'{');
    leaf(out, variant)?;
    out.push(b':');
    Ok(())
}

/// Private types of serde_json's (its raw values and arbitrary-precision numbers) go through
/// `Value`, which knows them.
fn private(name: &str) -> Result<(), Refused> {
    if name.starts_with("$serde_json") {
        Err(Refused)
    } else {
        Ok(())
    }
}

/// `$then!` of serde's methods for the integers up to 64 bits, and their types.
macro_rules! integers {
    ($then:ident) => {
        $then!(
            serialize_i8: i8,
            serialize_i16: i16,
            serialize_i32: i32,
            serialize_i64: i64,
            serialize_u8: u8,
            serialize_u16: u16,
            serialize_u32: u32,
            serialize_u64: u64
        );
    };
}

/// `serialize_bool`, `serialize_i8`, …: each a leaf that serde_json writes.
macro_rules! leaves {
    ($($method:ident: $ty:ty),*) => {$(
        fn $method(self, v: $ty) -> Result<(), Refused> {
            leaf(self.out, &v)
        }
    )*};
}

/// `serialize_i8`, …: an integer key in decimal, as a `Value`'s map holds it.
macro_rules! integer_keys {
    ($($method:ident: $ty:ty),*) => {$(
        fn $method(self, v: $ty) -> Result<String, Refused> {
            Ok(v.to_string())
        }
    )*};
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> ser::Serializer for Writer<'a> {
    type Ok = ();
    type Error = Refused;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    leaves!(serialize_bool: bool);
    integers!(leaves);

    fn serialize_i128(self, _: i128) -> Result<(), Refused> {
        Err(Refused)
    }
    fn serialize_u128(self, _: u128) -> Result<(), Refused> {
        Err(Refused)
    }
    fn serialize_f32(self, _: f32) -> Result<(), Refused> {
        Err(Refused)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Refused> {
        // A `Value` holds a finite f64 as it is and anything else as null; serde_json writes
        // both so.
        leaf(self.out, &v)
    }
    fn serialize_char(self, v: char) -> Result<(), Refused> {
        leaf(self.out, &v)
    }
    fn serialize_str(self, v: &str) -> Result<(), Refused> {
        leaf(self.out, v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Refused> {
        // A list of numbers, as a `Value` holds bytes.
        leaf(self.out, v)
    }
    fn serialize_none(self) -> Result<(), Refused> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Refused> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Refused> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<(), Refused> {
        private(name)?;
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), Refused> {
        leaf(self.out, variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, name: &'static str, value: &T) -> Result<(), Refused> {
        private(name)?;
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        variant_key(self.out, variant)?;
        value.serialize(Writer { out: self.out })?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'a>, Refused> {
        self.out.push(b'[');
        Ok(Seq { out: self.out, first: true, closing: b"]" })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>, Refused> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, name: &'static str, len: usize) -> Result<Seq<'a>, Refused> {
        private(name)?;
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Seq<'a>, Refused> {
        variant_key(self.out, variant)?;
        self.out.push(b'[');
        Ok(Seq { out: self.out, first: true, closing: b"]}" })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Object<'a>, Refused> {
        Ok(Object::new(self.out, b"}"))
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Object<'a>, Refused> {
        private(name)?;
        Ok(Object::new(self.out, b"}"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Object<'a>, Refused> {
        variant_key(self.out, variant)?;
        Ok(Object::new(self.out, b"}}"))
    }
}

/// A list: its elements in their order.
struct Seq<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    closing: &'static [u8],
}

impl Seq<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        value.serialize(Writer { out: self.out })
    }

    fn close(self) -> Result<(), Refused> {
        self.out.extend_from_slice(self.closing);
        Ok(())
    }
}

/// serde's four kinds of list, each written by [`Seq`] alike.
macro_rules! seq_impls {
    ($($kind:ident::$method:ident),*) => {$(
        impl ser::$kind for Seq<'_> {
            type Ok = ();
            type Error = Refused;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
                self.element(value)
            }
            fn end(self) -> Result<(), Refused> {
                self.close()
            }
        }
    )*};
}

seq_impls!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// A map or a struct: each entry's value written into `values` as it comes, then every entry
/// written out in the order of its key.
struct Object<'a> {
    out: &'a mut Vec<u8>,
    values: Vec<u8>,
    entries: Vec<(Cow<'static, str>, Range<usize>)>,
    /// A map's key, until its value comes.
    key: Option<Cow<'static, str>>,
    closing: &'static [u8],
}

impl<'a> Object<'a> {
    fn new(out: &'a mut Vec<u8>, closing: &'static [u8]) -> Self {
        Object { out, values: Vec::new(), entries: Vec::new(), key: None, closing }
    }

    fn entry<T: Serialize + ?Sized>(&mut self, key: Cow<'static, str>, value: &T) -> Result<(), Refused> {
        let start = self.values.len();
        value.serialize(Writer { out: &mut self.values })?;
        self.entries.push((key, start..self.values.len()));
        Ok(())
    }

    fn close(mut self) -> Result<(), Refused> {
        // Sorted as a `Value`'s map sorts its keys: by their bytes.
        self.entries.sort_unstable_by(|(a, _), (b, _)| a.as_bytes().cmp(b.as_bytes()));
        if self.entries.windows(2).any(|pair| pair[0].0 == pair[1].0) {
            return Err(Refused);
        }
        self.out.push(b'{');
        for (i, (key, range)) in self.entries.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            leaf(self.out, key.as_ref())?;
            self.out.push(b':');
            self.out.extend_from_slice(&self.values[range.clone()]);
        }
        self.out.extend_from_slice(self.closing);
        Ok(())
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Refused> {
        self.key = Some(Cow::Owned(key.serialize(KeyWriter)?));
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        let key = self.key.take().ok_or(Refused)?;
        self.entry(key, value)
    }
    fn end(self) -> Result<(), Refused> {
        self.close()
    }
}

/// A struct and a struct variant, each written by [`Object`] alike.
macro_rules! struct_impls {
    ($($kind:ident),*) => {$(
        impl ser::$kind for Object<'_> {
            type Ok = ();
            type Error = Refused;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Refused> {
                self.entry(Cow::Borrowed(key), value)
            }
            fn end(self) -> Result<(), Refused> {
                self.close()
            }
        }
    )*};
}

struct_impls!(SerializeStruct, SerializeStructVariant);

/// A map's key as the text a `Value`'s map holds it by: a string or a character as it is, an
/// integer in decimal, a unit variant by its name. Any other key is refused.
struct KeyWriter;

impl ser::Serializer for KeyWriter {
    type Ok = String;
    type Error = Refused;
    type SerializeSeq = ser::Impossible<String, Refused>;
    type SerializeTuple = ser::Impossible<String, Refused>;
    type SerializeTupleStruct = ser::Impossible<String, Refused>;
    type SerializeTupleVariant = ser::Impossible<String, Refused>;
    type SerializeMap = ser::Impossible<String, Refused>;
    type SerializeStruct = ser::Impossible<String, Refused>;
    type SerializeStructVariant = ser::Impossible<String, Refused>;

    fn serialize_str(self, v: &str) -> Result<String, Refused> {
        Ok(v.to_owned())
    }
    fn serialize_char(self, v: char) -> Result<String, Refused> {
        Ok(v.to_string())
    }
    integers!(integer_keys);
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<String, Refused> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, name: &'static str, value: &T) -> Result<String, Refused> {
        private(name)?;
        value.serialize(self)
    }

    fn serialize_bool(self, _: bool) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_i128(self, _: i128) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_u128(self, _: u128) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_f32(self, _: f32) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_f64(self, _: f64) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_none(self) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_unit(self) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, Refused> {
        Err(Refused)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Refused> {
        Err(Refused)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Refused> {
        Err(Refused)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Refused> {
        Err(Refused)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Refused> {
        Err(Refused)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Refused> {
        Err(Refused)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Refused> {
        Err(Refused)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Refused> {
        Err(Refused)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::Serialize;

    use super::to_string;

    /// What `Value` writes.
    fn through_value<T: Serialize>(value: &T) -> String {
        serde_json::to_value(value).unwrap().to_string()
    }

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(u8),
        Tuple(i32, String),
        Struct { zeta: bool, alpha: Option<u8> },
    }

    #[derive(Serialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Tagged {
        Moved { to: String, from: String },
    }

    #[derive(Serialize)]
    struct Inner {
        b: Vec<Shape>,
        a: &'static str,
    }

    #[derive(Serialize)]
    struct Outer {
        z_last: Inner,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        nothing: Option<u8>,
        #[serde(rename = "Capital")]
        capital: i64,
        #[serde(flatten)]
        flat: BTreeMap<String, u64>,
        tagged: Tagged,
        by_number: HashMap<u32, &'static str>,
        escapes: HashMap<String, String>,
        unit: (),
        big: u64,
        small: i64,
        real: f64,
        nan: f64,
        bytes: serde_bytes_like::Bytes,
        value: serde_json::Value,
    }

    mod serde_bytes_like {
        /// Bytes written with `serialize_bytes`.
        pub struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    #[test]
    fn every_shape_is_written_as_a_value_writes_it() {
        let outer = Outer {
            z_last: Inner {
                b: vec![
                    Shape::Unit,
                    Shape::Newtype(7),
                    Shape::Tuple(-3, "t".into()),
                    Shape::Struct { zeta: true, alpha: None },
                ],
                a: "é \"quoted\" \u{1}",
            },
            skipped: None,
            nothing: None,
            capital: -1,
            flat: [("m".to_owned(), 1), ("aa".to_owned(), 2)].into(),
            tagged: Tagged::Moved { to: "0604".into(), from: "0503".into() },
            by_number: [(10, "ten"), (9, "nine"), (100, "hundred")].into(),
            escapes: [("b\"".to_owned(), "x".to_owned()), ("a\n".to_owned(), "<b>".to_owned())].into(),
            unit: (),
            big: u64::MAX,
            small: i64::MIN,
            real: 0.1,
            nan: f64::NAN,
            bytes: serde_bytes_like::Bytes(vec![0, 255]),
            value: serde_json::json!({"y": [1, {"b": 2, "a": null}], "x": "s"}),
        };
        let written = to_string(&outer).expect("taken");
        assert_eq!(written, through_value(&outer));
        // Sorted: an integer key by its text, an upper-case key before the lower-case ones.
        assert!(written.starts_with(r#"{"Capital":-1,"aa":2,"big":"#), "{written}");
        assert!(written.contains(r#""by_number":{"10":"ten","100":"hundred","9":"nine"}"#), "{written}");
    }

    #[test]
    fn what_a_value_holds_otherwise_is_refused() {
        #[derive(Serialize)]
        struct Narrow {
            f: f32,
        }
        assert_eq!(to_string(&Narrow { f: 0.1 }), None);
        assert_eq!(to_string(&[1u128]), None);
        assert_eq!(to_string(&[-1i128]), None);
        let by_list: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into();
        assert_eq!(to_string(&by_list), None);
        let by_bool: BTreeMap<bool, u8> = [(true, 1)].into();
        assert_eq!(to_string(&by_bool), None);

        // The same key twice (a flattened map naming a field): a `Value` keeps the last one.
        #[derive(Serialize)]
        struct Twice {
            a: u8,
            #[serde(flatten)]
            more: BTreeMap<String, u8>,
        }
        let twice = Twice { a: 1, more: [("a".to_owned(), 2)].into() };
        assert_eq!(to_string(&twice), None);
        assert_eq!(through_value(&twice), r#"{"a":2}"#);

        // serde_json's raw values are its own to write.
        let raw = serde_json::value::RawValue::from_string("{\"b\":1,\"a\":2}".to_owned()).unwrap();
        assert_eq!(to_string(&raw), None);
    }
}

#[cfg(test)]
mod resolutions {
    use crate::outcome::OutcomeData;
    use crate::resolver::{resolve, rulesets};
    use crate::DiceStream;

    /// Every action of every ruleset, its example resolved from many stamps: each resolution is
    /// written straight from its type, and to the bytes it is stored as through `Value`.
    #[test]
    fn every_resolution_is_written_as_it_is_stored() {
        let mut written = 0;
        for ruleset in rulesets() {
            for spec in ruleset.actions() {
                for stamp in 0..40 {
                    let dice = DiceStream::from_text(format!("{}/{}/{stamp}", ruleset.name(), spec.name));
                    let Ok(resolution) = resolve(ruleset, spec.name, &spec.example, dice) else { continue };
                    let headline = resolution.headline.clone();
                    let data = OutcomeData::from(resolution);
                    let through_value =
                        serde_json::to_string(&serde_json::json!({"data": data.to_json(), "headline": headline}))
                            .unwrap();
                    let OutcomeData::Resolution(typed) = &data else { unreachable!() };
                    assert!(super::to_string(typed).is_some(), "{} {}", ruleset.name(), spec.name);
                    assert_eq!(data.stored_text(&headline), through_value, "{} {}", ruleset.name(), spec.name);
                    written += 1;
                }
            }
        }
        assert!(written > 100, "{written} resolutions");
    }
}

#[cfg(test)]
mod clock_records {
    use crate::outcome::OutcomeData;

    /// The campaign clock's records and a replaced player, as the server stores them (the
    /// short ACW corpus holds none; `tests/data/server_records.jsonl` does, and the render tests
    /// read the same file): each is written straight from its type, to its stored bytes. A
    /// rollback is a server record read by its headline, with no type of its own.
    #[test]
    fn every_record_of_the_clock_is_written_as_it_is_stored() {
        let records = include_str!("../tests/data/server_records.jsonl");
        let mut typed_records = 0;
        for line in records.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let kind = record["kind"].as_str().unwrap();
            if kind == "rollback" {
                assert!(OutcomeData::read(kind, &record["data"]).is_err(), "{line}");
                continue;
            }
            let typed = OutcomeData::read(kind, &record["data"]).unwrap_or_else(|e| panic!("{line}: {e}"));
            typed_records += 1;
            let stored =
                serde_json::to_string(&serde_json::json!({"data": typed.to_json(), "headline": "a headline"})).unwrap();
            assert_eq!(typed.stored_text("a headline"), stored, "{line}");
            let sorted = match &typed {
                OutcomeData::Paused(d) => super::to_string(d),
                OutcomeData::Resumed(d) => super::to_string(d),
                OutcomeData::Extended(d) => super::to_string(d),
                OutcomeData::PlayerReplaced(d) => super::to_string(d),
                other => panic!("{line}: read as {}", other.kind()),
            };
            assert_eq!(sorted, Some(typed.to_json().to_string()), "{line}");
        }
        assert_eq!(typed_records, 6, "the file's typed records");
    }
}
