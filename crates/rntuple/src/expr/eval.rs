//! Evaluating an [`Expr`] over a record batch, column-wise: every operand becomes a vector (one
//! value for all, one per entry, or one per element of a collection), operands of different
//! shapes are broadcast (an entry's value to each of its elements), and reductions (`count`,
//! `sum`, `any`, `all`, `max`, `min`) turn element values into entry values.

use super::parse::{BinOp, Expr};
use super::values::{field_values, list_collection, Collection, Values};
use crate::error::{Error, Result};
use arrow_array::RecordBatch;
use std::sync::Arc;

/// The functions an expression may call, with what they do (for messages and docs).
pub const FUNCTIONS: &[(&str, &str)] = &[
    ("count", "count(pred) elements where pred holds; count(Jet) elements of a collection"),
    ("sum", "sum(x) of a collection's element values (booleans count 1)"),
    ("any", "any(pred) whether an element satisfies pred"),
    ("all", "all(pred) whether every element satisfies pred (true when empty)"),
    ("max", "max(x) largest element (NaN when empty); max(a, b) the larger of two values"),
    ("min", "min(x) smallest element (NaN when empty); min(a, b) the smaller of two values"),
    ("abs", "abs(x)"),
    ("sqrt", "sqrt(x)"),
    ("exp", "exp(x)"),
    ("log", "log(x) natural logarithm"),
];

/// Where values live.
#[derive(Clone)]
enum Shape {
    One,
    Entries(usize),
    Elements(Arc<Collection>),
}

/// Evaluates expressions over batches.
pub struct Evaluator<'a> {
    batch: &'a RecordBatch,
    text: &'a str,
    collections: Vec<Arc<Collection>>,
}

impl<'a> Evaluator<'a> {
    /// An evaluator over `batch`; `text` is the expression's source (for messages).
    pub fn new(batch: &'a RecordBatch, text: &'a str) -> Self {
        Evaluator { batch, text, collections: Vec::new() }
    }

    fn err(&self, what: String) -> Error {
        Error::Invalid(format!("expression '{}': {what}", self.text))
    }

    /// The value of `e`.
    pub fn eval(&mut self, e: &Expr) -> Result<Values> {
        match e {
            Expr::Num(x) => Ok(Values::Num(*x)),
            Expr::Bool(b) => Ok(Values::Bool(*b)),
            Expr::Field(name, col) => field_values(self.batch, name, &mut self.collections).map_err(|e| self.err(format!("at column {col}: {}", message(e)))),
            Expr::Neg(a) => {
                let v = self.eval(a)?;
                self.map_num(&v, "-", |x| -x)
            }
            Expr::Not(a) => {
                let v = self.eval(a)?;
                let (shape, b) = self.bools(&v, "'!'")?;
                Ok(make_bools(shape, b.into_iter().map(|x| !x).collect()))
            }
            Expr::Bin(op, a, b) => {
                let (l, r) = (self.eval(a)?, self.eval(b)?);
                self.binary(*op, &l, &r)
            }
            Expr::Call(name, args, col) => self.call(name, args, *col),
        }
    }

    /// The entry mask of a `--where` expression: one boolean per entry of the batch.
    pub fn entry_mask(&mut self, e: &Expr) -> Result<Vec<bool>> {
        let n = self.batch.num_rows();
        match self.eval(e)? {
            Values::Bool(b) => Ok(vec![b; n]),
            Values::Bools(b) => Ok(b.to_vec()),
            other => Err(self.err(format!("a selection of entries must give a boolean per entry, this gives {}", other.describe()))),
        }
    }

    /// The element mask of a `--filter` expression over `coll`: one boolean per element of each
    /// entry (an entry-level boolean keeps all or none of an entry's elements).
    pub fn element_mask(&mut self, e: &Expr, coll: &Arc<Collection>) -> Result<Vec<bool>> {
        let v = self.eval(e)?;
        match &v {
            Values::ElemBools(c, _) if !c.same_shape(coll) => Err(self.err(format!(
                "a filter of '{}' must give a boolean per element of '{}', this gives one per element of '{}', whose sizes differ",
                coll.name, coll.name, c.name
            ))),
            Values::ElemBools(_, b) => Ok(b.to_vec()),
            Values::Bool(_) | Values::Bools(_) => {
                let (_, b) = self.bools_in(&v, &Shape::Elements(coll.clone()), "the filter")?;
                Ok(b)
            }
            other => Err(self.err(format!("a filter of '{}' must give a boolean per element, this gives {}", coll.name, other.describe()))),
        }
    }

    fn call(&mut self, name: &str, args: &[Expr], col: usize) -> Result<Values> {
        let at = |s: &Self, what: String| s.err(format!("{name}() at column {col}: {what}"));
        let one = |s: &Self| -> Result<&Expr> {
            match args {
                [a] => Ok(a),
                _ => Err(at(s, format!("takes one argument, got {}", args.len()))),
            }
        };
        match name {
            "count" | "len" => {
                let a = one(self)?;
                if let Expr::Field(f, _) = a
                    && let Some(c) = list_collection(self.batch, f, &mut self.collections)?
                {
                    return Ok(Values::Nums(Arc::new(c.offsets.windows(2).map(|w| w[1].saturating_sub(w[0]) as f64).collect())));
                }
                let v = self.eval(a)?;
                match v {
                    Values::ElemBools(c, b) => Ok(Values::Nums(Arc::new(reduce(&c, |r| r.filter(|&x| b[x]).count() as f64)))),
                    Values::ElemNums(c, _) => Ok(Values::Nums(Arc::new(reduce(&c, |r| r.len() as f64)))),
                    other => Err(at(self, format!("needs a collection or a condition on its elements, got {}", other.describe()))),
                }
            }
            "sum" | "any" | "all" => {
                let v = self.eval(one(self)?)?;
                let (c, x) = match &v {
                    Values::ElemNums(c, x) => (c.clone(), x.to_vec()),
                    Values::ElemBools(c, b) => (c.clone(), b.iter().map(|&b| b as u8 as f64).collect()),
                    other => return Err(at(self, format!("needs values per element of a collection, got {}", other.describe()))),
                };
                Ok(match name {
                    "sum" => Values::Nums(Arc::new(reduce(&c, |r| r.map(|i| x[i]).sum()))),
                    "any" => Values::Bools(Arc::new(reduce(&c, |mut r| r.any(|i| x[i] != 0.0)))),
                    _ => Values::Bools(Arc::new(reduce(&c, |mut r| r.all(|i| x[i] != 0.0)))),
                })
            }
            "max" | "min" => match args {
                [a] => {
                    let v = self.eval(a)?;
                    let Values::ElemNums(c, x) = &v else {
                        return Err(at(self, format!("of one argument needs numbers per element of a collection, got {}", v.describe())));
                    };
                    let pick = if name == "max" { f64::max } else { f64::min };
                    Ok(Values::Nums(Arc::new(reduce(c, |r| r.map(|i| x[i]).reduce(pick).unwrap_or(f64::NAN)))))
                }
                [a, b] => {
                    let (l, r) = (self.eval(a)?, self.eval(b)?);
                    let pick = if name == "max" { f64::max } else { f64::min };
                    self.zip_num(&l, &r, name, pick)
                }
                _ => Err(at(self, format!("takes one or two arguments, got {}", args.len()))),
            },
            "abs" | "sqrt" | "exp" | "log" => {
                let v = self.eval(one(self)?)?;
                let f: fn(f64) -> f64 = match name {
                    "abs" => f64::abs,
                    "sqrt" => f64::sqrt,
                    "exp" => f64::exp,
                    _ => f64::ln,
                };
                self.map_num(&v, name, f)
            }
            _ => {
                let known: Vec<&str> = FUNCTIONS.iter().map(|f| f.0).collect();
                Err(self.err(format!("no function '{name}' at column {col} (the functions are: {})", known.join(", "))))
            }
        }
    }

    fn binary(&self, op: BinOp, l: &Values, r: &Values) -> Result<Values> {
        use BinOp::*;
        match op {
            Add => self.zip_num(l, r, "+", |a, b| a + b),
            Sub => self.zip_num(l, r, "-", |a, b| a - b),
            Mul => self.zip_num(l, r, "*", |a, b| a * b),
            Div => self.zip_num(l, r, "/", |a, b| a / b),
            Rem => self.zip_num(l, r, "%", |a, b| a % b),
            Pow => self.zip_num(l, r, "^", f64::powf),
            Eq | Ne if is_bool(l) && is_bool(r) => {
                let shape = self.join(l, r)?;
                let (_, a) = self.bools_in(l, &shape, "'=='")?;
                let (_, b) = self.bools_in(r, &shape, "'=='")?;
                let eq = op == Eq;
                Ok(make_bools(shape, a.iter().zip(&b).map(|(x, y)| (x == y) == eq).collect()))
            }
            Eq | Ne | Lt | Le | Gt | Ge => {
                let shape = self.join(l, r)?;
                let a = self.nums_in(l, &shape, "a comparison")?;
                let b = self.nums_in(r, &shape, "a comparison")?;
                let f: fn(f64, f64) -> bool = match op {
                    Eq => |a, b| a == b,
                    Ne => |a, b| a != b,
                    Lt => |a, b| a < b,
                    Le => |a, b| a <= b,
                    Gt => |a, b| a > b,
                    _ => |a, b| a >= b,
                };
                Ok(make_bools(shape, a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect()))
            }
            And | Or => {
                let what = if op == And { "'&&'" } else { "'||'" };
                let shape = self.join(l, r)?;
                let (_, a) = self.bools_in(l, &shape, what)?;
                let (_, b) = self.bools_in(r, &shape, what)?;
                let and = op == And;
                Ok(make_bools(shape, a.iter().zip(&b).map(|(&x, &y)| if and { x && y } else { x || y }).collect()))
            }
        }
    }

    fn zip_num(&self, l: &Values, r: &Values, what: &str, f: impl Fn(f64, f64) -> f64) -> Result<Values> {
        let shape = self.join(l, r)?;
        let a = self.nums_in(l, &shape, what)?;
        let b = self.nums_in(r, &shape, what)?;
        Ok(make_nums(shape, a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect()))
    }

    fn map_num(&self, v: &Values, what: &str, f: impl Fn(f64) -> f64) -> Result<Values> {
        let shape = shape_of(v);
        let x = self.nums_in(v, &shape, what)?;
        Ok(make_nums(shape, x.into_iter().map(f).collect()))
    }

    /// The common shape of two operands.
    fn join(&self, l: &Values, r: &Values) -> Result<Shape> {
        match (shape_of(l), shape_of(r)) {
            (Shape::Elements(a), Shape::Elements(b)) => {
                if a.same_shape(&b) {
                    Ok(Shape::Elements(a))
                } else {
                    Err(self.err(format!("'{}' and '{}' have different numbers of elements; combine them with count/sum/any/all/max/min", a.name, b.name)))
                }
            }
            (Shape::Elements(a), _) | (_, Shape::Elements(a)) => Ok(Shape::Elements(a)),
            (Shape::Entries(n), _) | (_, Shape::Entries(n)) => Ok(Shape::Entries(n)),
            _ => Ok(Shape::One),
        }
    }

    fn bools(&self, v: &Values, what: &str) -> Result<(Shape, Vec<bool>)> {
        self.bools_in(v, &shape_of(v), what)
    }

    /// `v` as booleans laid out in `shape`.
    fn bools_in(&self, v: &Values, shape: &Shape, what: &str) -> Result<(Shape, Vec<bool>)> {
        let b = match v {
            Values::Bool(b) => broadcast(&[*b], &Shape::One, shape),
            Values::Bools(b) => broadcast(b, &Shape::Entries(b.len()), shape),
            Values::ElemBools(c, b) => broadcast(b, &Shape::Elements(c.clone()), shape),
            other => return Err(self.err(format!("{what} needs booleans, got {}", other.describe()))),
        };
        Ok((shape.clone(), b))
    }

    /// `v` as numbers (booleans as 0 and 1) laid out in `shape`.
    fn nums_in(&self, v: &Values, shape: &Shape, _what: &str) -> Result<Vec<f64>> {
        let as_num = |b: &[bool]| -> Vec<f64> { b.iter().map(|&x| x as u8 as f64).collect() };
        Ok(match v {
            Values::Num(x) => broadcast(&[*x], &Shape::One, shape),
            Values::Bool(b) => broadcast(&[*b as u8 as f64], &Shape::One, shape),
            Values::Nums(x) => broadcast(x, &Shape::Entries(x.len()), shape),
            Values::Bools(b) => broadcast(&as_num(b), &Shape::Entries(b.len()), shape),
            Values::ElemNums(c, x) => broadcast(x, &Shape::Elements(c.clone()), shape),
            Values::ElemBools(c, b) => broadcast(&as_num(b), &Shape::Elements(c.clone()), shape),
        })
    }
}

/// An error's message without its kind's prefix, to be wrapped in another.
fn message(e: Error) -> String {
    match e {
        Error::Invalid(m) => m,
        other => other.to_string(),
    }
}

fn is_bool(v: &Values) -> bool {
    matches!(v, Values::Bool(_) | Values::Bools(_) | Values::ElemBools(..))
}

fn shape_of(v: &Values) -> Shape {
    match v {
        Values::Num(_) | Values::Bool(_) => Shape::One,
        Values::Nums(x) => Shape::Entries(x.len()),
        Values::Bools(x) => Shape::Entries(x.len()),
        Values::ElemNums(c, _) | Values::ElemBools(c, _) => Shape::Elements(c.clone()),
    }
}

/// Values laid out in `from` (a shape no wider than `to`) copied out in `to`.
fn broadcast<T: Copy>(v: &[T], from: &Shape, to: &Shape) -> Vec<T> {
    match (from, to) {
        (Shape::One, Shape::One) => v.to_vec(),
        (Shape::One, Shape::Entries(n)) => vec![v[0]; *n],
        (Shape::One, Shape::Elements(c)) => vec![v[0]; c.elements()],
        (Shape::Entries(_), Shape::Elements(c)) => {
            let mut out = Vec::with_capacity(c.elements());
            for (i, w) in c.offsets.windows(2).enumerate() {
                if let Some(&x) = v.get(i) {
                    out.extend(std::iter::repeat_n(x, w[1].saturating_sub(w[0])));
                }
            }
            out
        }
        _ => v.to_vec(),
    }
}

fn make_nums(shape: Shape, v: Vec<f64>) -> Values {
    match shape {
        Shape::One => Values::Num(v.first().copied().unwrap_or(f64::NAN)),
        Shape::Entries(_) => Values::Nums(Arc::new(v)),
        Shape::Elements(c) => Values::ElemNums(c, Arc::new(v)),
    }
}

fn make_bools(shape: Shape, v: Vec<bool>) -> Values {
    match shape {
        Shape::One => Values::Bool(v.first().copied().unwrap_or(false)),
        Shape::Entries(_) => Values::Bools(Arc::new(v)),
        Shape::Elements(c) => Values::ElemBools(c, Arc::new(v)),
    }
}

/// One value per entry of `c` from its elements' indices.
fn reduce<T>(c: &Collection, f: impl Fn(std::ops::Range<usize>) -> T) -> Vec<T> {
    c.offsets.windows(2).map(|w| f(w[0]..w[1])).collect()
}
