//! `#[derive(Record)]` with `#[rntuple(class = ..., version = ...)]`, `#[rntuple(base)]` and
//! `#[rntuple(enum = ...)]`: class fields and enum fields as ROOT writes them (type names, class
//! versions, ROOT's type checksums, base classes as `:_0`), read back as values and as the Rust types.

use rntuple::write::{WriteOptions, Writer};
use rntuple::Record;

#[derive(Record, Debug, PartialEq, Clone)]
#[rntuple(class = "Base")]
#[allow(non_snake_case)] // the C++ member name
struct Base {
    fInt: i32,
}

#[derive(Record, Debug, PartialEq, Clone, Copy)]
#[rntuple(enum = "Color")]
#[repr(u8)]
enum Color {
    Red = 1,
    Green = 2,
    Blue = 7,
}

#[derive(Record, Debug, PartialEq, Clone)]
#[rntuple(class = "Muon", version = 3)]
struct Muon {
    pt: f32,
    charge: i16,
    // The base class comes first in the field tree wherever it is declared.
    #[rntuple(base)]
    base: Base,
    color: Color,
}

#[derive(Record, Debug, PartialEq)]
struct Event {
    mu: Muon,
    muons: Vec<Muon>,
    color: Color,
}

#[test]
fn derived_classes_and_enums_are_written_as_root_writes_them() {
    let path = std::env::temp_dir().join(format!("rntuple-class-derive-{}.root", std::process::id()));
    let m = |pt: f32, charge: i16, i: i32, color: Color| Muon { pt, charge, base: Base { fInt: i }, color };
    let events = vec![
        Event { mu: m(25.5, -1, 7, Color::Blue), muons: vec![m(1.0, 1, 1, Color::Red), m(2.0, -1, 2, Color::Green)], color: Color::Green },
        Event { mu: m(0.0, 0, 0, Color::Red), muons: vec![], color: Color::Red },
    ];
    let mut w = Writer::create_typed::<Event>(&path, "Events", WriteOptions::default()).unwrap();
    for e in &events {
        w.fill_typed(e).unwrap();
    }
    w.commit().unwrap();

    let r = rntuple::RNTupleFile::open(&path).unwrap().reader("Events").unwrap();
    let d = r.descriptor();
    let field = |path: &[&str]| {
        let mut id = d.fields.iter().find(|f| f.parent.is_none() && f.name == path[0]).unwrap().id;
        for p in &path[1..] {
            id = *d.fields[id as usize].children.iter().find(|&&c| d.fields[c as usize].name == *p).unwrap();
        }
        &d.fields[id as usize]
    };
    let mu = field(&["mu"]);
    assert_eq!((mu.type_name.as_str(), mu.type_version, mu.flags & 0x04), ("Muon", 3, 0x04));
    let names: Vec<&str> = mu.children.iter().map(|&c| d.fields[c as usize].name.as_str()).collect();
    assert_eq!(names, [":_0", "pt", "charge", "color"]);
    let base = field(&["mu", ":_0"]);
    // ROOT 6.40 writes 6887417 for `struct Base { std::int32_t fInt; }`.
    assert_eq!((base.type_name.as_str(), base.type_version, base.type_checksum), ("Base", 1, Some(6887417)));
    assert_eq!(
        mu.type_checksum,
        Some(
            rntuple::logical::typename::ClassDef::new("Muon")
                .version(3)
                .base(rntuple::logical::typename::ClassDef::new("Base").member("fInt", rntuple::logical::typename::parse("int").unwrap()))
                .member("pt", rntuple::logical::typename::parse("float").unwrap())
                .member("charge", rntuple::logical::typename::parse("short").unwrap())
                .member("color", rntuple::logical::typename::TypeExpr::Enum("Color".into(), rntuple::logical::kind::Scalar::U8))
                .root_checksum()
        )
    );
    assert_eq!(field(&["muons"]).type_name, "std::vector<Muon>");
    let color = field(&["color"]);
    assert_eq!((color.type_name.as_str(), color.type_checksum), ("Color", None));
    assert_eq!(field(&["color", "_0"]).type_name, "std::uint8_t");

    let rows: Vec<String> = r.read_values(None, 0, 2).unwrap().iter().map(|v| v.to_json().to_string()).collect();
    assert_eq!(
        rows[0],
        r#"{"mu":{":_0":{"fInt":7},"pt":25.5,"charge":-1,"color":7},"muons":[{":_0":{"fInt":1},"pt":1.0,"charge":1,"color":1},{":_0":{"fInt":2},"pt":2.0,"charge":-1,"color":2}],"color":2}"#
    );
    let back: Vec<Event> = r.read_typed(0, 2).unwrap();
    assert_eq!(back, events);
    std::fs::remove_file(&path).ok();
}

#[derive(Record, Debug)]
#[rntuple(class = "Holder")]
struct Holder {
    #[rntuple(base)]
    not_a_class: i32,
}

#[test]
fn a_base_that_is_no_class_is_refused_with_the_field_name() {
    #[derive(Record)]
    struct E {
        h: Holder,
    }
    let path = std::env::temp_dir().join(format!("rntuple-class-derive-bad-{}.root", std::process::id()));
    let e = Writer::create_typed::<E>(&path, "Events", WriteOptions::default()).err().unwrap().to_string();
    assert!(e.contains("field ':_0'") && e.contains("not a class: std::int32_t"), "{e}");
    std::fs::remove_file(&path).ok();
}
