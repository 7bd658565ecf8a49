use super::*;
use arrow_array::cast::AsArray;

fn el(class: ElementClass, name: &str, ty: i32, type_name: &str) -> ElementInfo {
    ElementInfo {
        class,
        name: name.into(),
        title: String::new(),
        ty,
        size: 4,
        array_length: 0,
        dims: vec![],
        type_name: type_name.into(),
        base_version: 0,
        stl_type: 0,
        ctype: 0,
        count_name: String::new(),
        range: None,
    }
}

fn info(name: &str, version: i32, elements: Vec<ElementInfo>) -> ClassInfo {
    ClassInfo { name: name.into(), version, checksum: 0, elements }
}

fn rec(m: Vec<(&str, Value)>) -> Value {
    Value::Record(m.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
}

fn names(t: &DataType) -> Vec<String> {
    let DataType::Struct(f) = t else { panic!("{t} is not a struct") };
    f.iter().map(|f| f.name().clone()).collect()
}

/// A derived class (base flattened in place), with a vector, a map, a 2x3 array, a pointer and a pair.
fn records() -> Vec<ClassInfo> {
    let mut arr = el(ElementClass::BasicType, "grid", 23, "int");
    arr.array_length = 6;
    arr.dims = vec![2, 3];
    vec![
        info("Base", 1, vec![el(ElementClass::BasicType, "id", 3, "int"), el(ElementClass::BasicType, "w", 9, "Double32_t")]),
        info(
            "Derived",
            3,
            vec![
                el(ElementClass::Base, "Base", 0, "BASE"),
                el(ElementClass::Stl, "v", 500, "vector<float>"),
                el(ElementClass::Stl, "m", 500, "map<int,string>"),
                arr,
                el(ElementClass::ObjectPointer, "next", 64, "Base*"),
                el(ElementClass::Stl, "p", 500, "vector<pair<int,double> >"),
                el(ElementClass::Object, "named", 67, "TNamed"),
            ],
        ),
    ]
}

fn derived(id: i64, null_next: bool) -> Value {
    let next = if null_next { Value::Null } else { rec(vec![("id", Value::Int(id * 10)), ("w", Value::F64(0.5))]) };
    rec(vec![
        (":_0", rec(vec![("id", Value::Int(id)), ("w", Value::F64(id as f64 / 4.0))])),
        ("v", Value::List((0..id).map(|i| Value::F32(i as f32)).collect())),
        ("m", Value::List(vec![Value::List(vec![Value::Int(id), Value::String(format!("k{id}"))])])),
        ("grid", Value::List((0..2).map(|r| Value::List((0..3).map(|c| Value::Int(id * 100 + r * 3 + c)).collect())).collect())),
        ("next", next),
        ("p", Value::List(vec![Value::List(vec![Value::Int(1), Value::F64(2.5)])])),
        ("named", rec(vec![("fUniqueID", Value::UInt(0)), ("fBits", Value::UInt(0x0300_0000)), ("fName", Value::String("n".into())), ("fTitle", Value::String("t".into()))])),
    ])
}

#[test]
fn types_flatten_bases_and_map_every_shape() {
    let t = object_type(&records(), "Derived").unwrap();
    assert_eq!(names(&t), ["id", "w", "v", "m", "grid", "next", "p", "named"]);
    let DataType::Struct(f) = &t else { unreachable!() };
    assert_eq!(f[1].data_type(), &DataType::Float64); // Double32_t
    assert!(matches!(f[2].data_type(), DataType::LargeList(i) if i.data_type() == &DataType::Float32));
    let DataType::LargeList(entry) = f[3].data_type() else { panic!("{}", f[3].data_type()) };
    assert_eq!(names(entry.data_type()), ["first", "second"]);
    let DataType::FixedSizeList(rows, 2) = f[4].data_type() else { panic!("{}", f[4].data_type()) };
    assert!(matches!(rows.data_type(), DataType::FixedSizeList(c, 3) if c.data_type() == &DataType::Int32));
    assert_eq!(names(f[5].data_type()), ["id", "w"]);
    let DataType::LargeList(pair) = f[6].data_type() else { panic!() };
    assert_eq!(names(pair.data_type()), ["first", "second"]);
    assert_eq!(names(f[7].data_type()), ["fUniqueID", "fBits", "fName", "fTitle"]);
}

#[test]
fn arrays_hold_the_values() {
    let t = object_type(&records(), "Derived").unwrap();
    let values = [derived(2, false), Value::Null, derived(3, true)];
    let refs: Vec<&Value> = values.iter().collect();
    let a = object_array(&refs, &t).unwrap();
    let s = a.as_struct();
    assert_eq!(s.len(), 3);
    assert!(a.is_null(1) && !a.is_null(0));
    assert_eq!(s.column(0).as_primitive::<Int32Type>().values().to_vec(), [2, 0, 3]);
    assert_eq!(s.column(1).as_primitive::<Float64Type>().value(2), 0.75);
    let v = s.column(2).as_list::<i64>();
    assert_eq!(v.value_offsets(), [0, 2, 2, 5]);
    let m = s.column(3).as_list::<i64>().values().as_struct().clone();
    assert_eq!(m.column(0).as_primitive::<Int32Type>().values().to_vec(), [2, 3]);
    assert_eq!(m.column(1).as_string::<i64>().value(1), "k3");
    let grid = s.column(4).as_fixed_size_list();
    let flat = grid.values().as_fixed_size_list().values().as_primitive::<Int32Type>().values().to_vec();
    assert_eq!(&flat[..6], [200, 201, 202, 203, 204, 205]);
    assert_eq!(&flat[12..], [300, 301, 302, 303, 304, 305]);
    let next = s.column(5).as_struct();
    assert!(!next.is_null(0) && next.is_null(2));
    assert_eq!(next.column(0).as_primitive::<Int32Type>().value(0), 20);
    let p = s.column(6).as_list::<i64>().values().as_struct().clone();
    assert_eq!(p.column(1).as_primitive::<Float64Type>().value(0), 2.5);
    assert_eq!(s.column(7).as_struct().column(2).as_string::<i64>().value(2), "n");
}

#[test]
fn a_derived_object_behind_a_base_pointer_keeps_the_base_members() {
    let t = object_type(&records(), "Base").unwrap();
    let d = derived(4, true);
    let a = object_array(&[&d], &t).unwrap();
    assert_eq!(a.as_struct().column(0).as_primitive::<Int32Type>().value(0), 4);
    assert_eq!(a.as_struct().column(1).as_primitive::<Float64Type>().value(0), 1.0);
}

#[test]
fn a_member_missing_from_an_older_version_is_null() {
    let t = object_type(&records(), "Base").unwrap();
    let old = rec(vec![("id", Value::Int(9))]);
    let a = object_array(&[&old], &t).unwrap();
    assert!(a.as_struct().column(1).is_null(0));
}

#[test]
fn the_latest_version_gives_the_type() {
    let mut infos = records();
    infos.push(info("Base", 2, vec![el(ElementClass::BasicType, "id", 3, "int"), el(ElementClass::BasicType, "extra", 18, "bool")]));
    assert_eq!(names(&object_type(&infos, "Base").unwrap()), ["id", "extra"]);
}

#[test]
fn unsupported_classes_are_errors() {
    let selfish = vec![info("Node", 1, vec![el(ElementClass::BasicType, "x", 3, "int"), el(ElementClass::ObjectPointer, "next", 64, "Node*")])];
    let e = object_type(&selfish, "Node").unwrap_err().to_string();
    assert!(e.contains("contains itself"), "{e}");
    assert!(object_type(&records(), "Missing").unwrap_err().to_string().contains("no StreamerInfo record describes class Missing"));
    let odd = vec![info("Odd", 1, vec![el(ElementClass::BasicType, "x", 77, "weird")])];
    let e = object_type(&odd, "Odd").unwrap_err().to_string();
    assert!(e.contains("member x (weird) of class Odd") && e.contains("element type 77"), "{e}");
}

#[test]
fn values_of_the_wrong_shape_are_errors() {
    let t = object_type(&records(), "Base").unwrap();
    let bad = rec(vec![("id", Value::String("seven".into()))]);
    let e = object_array(&[&bad], &t).unwrap_err().to_string();
    assert!(e.contains("\"seven\"") && e.contains("member id"), "{e}");
    let overflow = rec(vec![("id", Value::Int(1 << 40))]);
    assert!(object_array(&[&overflow], &t).is_err());
    let DataType::Struct(f) = object_type(&records(), "Derived").unwrap() else { unreachable!() };
    let short_grid = Value::List(vec![Value::Int(1)]);
    assert!(object_array(&[&short_grid], f[4].data_type()).is_err());
}
