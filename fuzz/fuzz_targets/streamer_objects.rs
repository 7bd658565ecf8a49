//! Fuzz target: the two parsers of streamer fields, on untrusted bytes: the StreamerInfo record
//! (`parse_streamer_infos`) and the deserializer of streamed objects (`deserialize`), by fixed
//! records covering every element kind and by records parsed from the input itself, and the
//! objects' Arrow types and arrays (`object_type`, `object_array`). Must never panic, nor
//! allocate beyond what the bytes back (the smoke run's memory limits).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple::read::streamer::streamed_arrow::{object_array, object_type};
use rntuple::read::streamer::streamed_object::deserialize;
use rntuple::storage::container::streamer_info_read::{parse_streamer_infos, ClassInfo, ElementClass as C, ElementInfo, Range};

fn el(class: C, name: &str, ty: i32, type_name: &str, n: i32) -> ElementInfo {
    ElementInfo {
        class,
        name: name.into(),
        title: String::new(),
        ty,
        size: 0,
        array_length: n,
        dims: if n > 0 { vec![n] } else { vec![] },
        type_name: type_name.into(),
        base_version: 1,
        stl_type: if class == C::Stl { 1 } else { 0 },
        ctype: 0,
        count_name: "n".into(),
        range: (ty == 9).then_some(Range { xmin: 0.0, xmax: 10.0, factor: 100.0 }),
    }
}

fn fixed() -> Vec<ClassInfo> {
    let c = |name: &str, elements| ClassInfo { name: name.into(), version: 1, checksum: 7, elements };
    vec![
        c("Leaf", vec![el(C::BasicType, "x", 3, "int", 0), el(C::BasicType, "d", 9, "Double32_t", 0), el(C::BasicType, "h", 19, "Float16_t", 0)]),
        c(
            "All",
            vec![
                el(C::Base, "Leaf", 0, "BASE", 0),
                el(C::Base, "TObject", 66, "BASE", 0),
                el(C::BasicType, "n", 6, "int", 0),
                el(C::BasicType, "a", 25, "float", 3),
                el(C::BasicPointer, "p", 48, "double*", 0),
                el(C::StlString, "s", 500, "string", 0),
                el(C::String, "t", 65, "TString", 0),
                el(C::Stl, "v", 500, "vector<vector<Leaf> >", 0),
                el(C::Stl, "m", 500, "map<string,Leaf*>", 0),
                el(C::Stl, "w", 500, "vector<Leaf>", 0),
                el(C::ObjectAny, "o", 62, "All", 0),
                el(C::ObjectAnyPointer, "q", 69, "All*", 0),
                el(C::Object, "named", 67, "TNamed", 0),
                el(C::Loop, "loop", 501, "Leaf", 0),
            ],
        ),
    ]
}

/// Deserializes `bytes` as `class`, then builds its Arrow array when the class has an Arrow type.
fn objects(bytes: &[u8], infos: &[ClassInfo], class: &str) {
    let Ok(v) = deserialize(bytes, infos, class) else { return };
    if let Ok(t) = object_type(infos, class) {
        let _ = object_array(&[&v, &v], &t);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let _ = parse_streamer_infos(rest, u32::from(sel));
    let infos = fixed();
    for class in ["All", "Leaf"] {
        objects(rest, &infos, class);
    }
    let (records, object) = rest.split_at((usize::from(sel) * 8).min(rest.len()));
    if let Ok(parsed) = parse_streamer_infos(records, 0) {
        for c in parsed.iter().take(4) {
            objects(object, &parsed, &c.name);
        }
    }
});
