//! From text to [`Expr`]: the grammar is that of the `evalexpr` crate (numbers, `true`/`false`,
//! identifiers, `+ - * / % ^`, comparisons, `&&`, `||`, `!`, parentheses and function calls),
//! whose parser builds the operator tree; this module turns that tree into the project's own
//! [`Expr`] and refuses what a selection has no use for (strings, assignments, `;` chains), each
//! error naming the column of the expression where the offending part starts.

use crate::error::{Error, Result};
use evalexpr::{DefaultNumericTypes, Node, Operator, Value};

/// A binary operator of an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%` (remainder, sign of the dividend)
    Rem,
    /// `^` (power)
    Pow,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&`
    And,
    /// `||`
    Or,
}

/// A parsed selection expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number (integers are held as `f64`, exact up to 2^53).
    Num(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A field by its name (`Jet_pt`, or `Jet.pt` for the member `pt` of a collection of records
    /// `Jet`), and the column of the expression where it is first named.
    Field(String, usize),
    /// Unary minus.
    Neg(Box<Expr>),
    /// Logical not.
    Not(Box<Expr>),
    /// A binary operation.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// A function call: name, arguments, and the column of the name.
    Call(String, Vec<Expr>, usize),
}

/// Parses `text` into an [`Expr`].
///
/// ```
/// use rntuple::expr::{parse, Expr, BinOp};
/// let e = parse("count(Jet_pt > 25) >= 4")?;
/// assert!(matches!(e, Expr::Bin(BinOp::Ge, _, _)));
/// let err = parse("Jet_pt > 'a'").unwrap_err().to_string();
/// assert!(err.contains("column 10"), "{err}");
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn parse(text: &str) -> Result<Expr> {
    if text.trim().is_empty() {
        return Err(Error::Invalid("expression: empty".into()));
    }
    precheck(text)?;
    let tree = evalexpr::build_operator_tree::<DefaultNumericTypes>(text).map_err(|e| Error::Invalid(format!("expression '{text}': {e}")))?;
    convert(&tree, text)
}

/// Errors the parser would give without a position: unbalanced parentheses, strings, and
/// assignment or chain operators (which evalexpr accepts and a selection must not).
fn precheck(text: &str) -> Result<()> {
    let mut open: Vec<usize> = Vec::new();
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let col = i + 1;
        let next = bytes.get(i + 1).copied();
        let prev = if i > 0 { bytes.get(i - 1).copied() } else { None };
        let fail = |what: &str| Err(Error::Invalid(format!("expression '{text}': {what} at column {col}")));
        match b {
            b'(' => open.push(col),
            // The guard pops the matching '(' when there is one.
            b')' if open.pop().is_none() => return fail("a ')' without its '('"),
            b'"' | b'\'' => return fail("strings are not supported (a quote)"),
            b';' => return fail("';' is not supported (one expression only)"),
            b'=' if next != Some(b'=') && !matches!(prev, Some(b'=' | b'!' | b'<' | b'>')) => return fail("'=' (assignment); compare with '=='"),
            b'&' if next != Some(b'&') && prev != Some(b'&') => return fail("'&'; the logical and is '&&'"),
            b'|' if next != Some(b'|') && prev != Some(b'|') => return fail("'|'; the logical or is '||'"),
            _ => {}
        }
    }
    if let Some(col) = open.pop() {
        return Err(Error::Invalid(format!("expression '{text}': the '(' at column {col} is not closed")));
    }
    Ok(())
}

/// The column (1-based) where the identifier `name` first appears as a whole word in `text`.
pub(crate) fn column_of(text: &str, name: &str) -> usize {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    let mut from = 0;
    while let Some(k) = text[from..].find(name) {
        let at = from + k;
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        if !before.is_some_and(ident) && !after.is_some_and(ident) {
            return at + 1;
        }
        from = at + name.len().max(1);
    }
    1
}

fn convert(n: &Node<DefaultNumericTypes>, text: &str) -> Result<Expr> {
    let kids = n.children();
    let arg = |i: usize| -> Result<Expr> {
        kids.get(i).map(|k| convert(k, text)).unwrap_or_else(|| Err(Error::Invalid(format!("expression '{text}': an operator is missing an operand"))))
    };
    let bin = |op: BinOp| -> Result<Expr> {
        if kids.len() != 2 {
            return Err(Error::Invalid(format!("expression '{text}': {op:?} needs two operands")));
        }
        Ok(Expr::Bin(op, Box::new(arg(0)?), Box::new(arg(1)?)))
    };
    match n.operator() {
        Operator::RootNode => match kids.len() {
            1 => arg(0),
            0 => Err(Error::Invalid(format!("expression '{text}': empty parentheses"))),
            _ => Err(Error::Invalid(format!("expression '{text}': several expressions side by side"))),
        },
        Operator::Add => bin(BinOp::Add),
        Operator::Sub => bin(BinOp::Sub),
        Operator::Mul => bin(BinOp::Mul),
        Operator::Div => bin(BinOp::Div),
        Operator::Mod => bin(BinOp::Rem),
        Operator::Exp => bin(BinOp::Pow),
        Operator::Eq => bin(BinOp::Eq),
        Operator::Neq => bin(BinOp::Ne),
        Operator::Lt => bin(BinOp::Lt),
        Operator::Leq => bin(BinOp::Le),
        Operator::Gt => bin(BinOp::Gt),
        Operator::Geq => bin(BinOp::Ge),
        Operator::And => bin(BinOp::And),
        Operator::Or => bin(BinOp::Or),
        Operator::Neg => Ok(Expr::Neg(Box::new(arg(0)?))),
        Operator::Not => Ok(Expr::Not(Box::new(arg(0)?))),
        Operator::Const { value } => match value {
            Value::Float(f) => Ok(Expr::Num(*f)),
            Value::Int(i) => Ok(Expr::Num(*i as f64)),
            Value::Boolean(b) => Ok(Expr::Bool(*b)),
            other => Err(Error::Invalid(format!("expression '{text}': the constant {other} is not a number or a boolean"))),
        },
        Operator::VariableIdentifierRead { identifier } => Ok(Expr::Field(identifier.clone(), column_of(text, identifier))),
        Operator::FunctionIdentifier { identifier } => {
            let col = column_of(text, identifier);
            let args = match kids.first().map(|k| (k.operator(), k)) {
                None => Vec::new(),
                Some((Operator::Tuple, t)) => t.children().iter().map(|c| convert(c, text)).collect::<Result<_>>()?,
                Some((Operator::RootNode, r)) if r.children().len() == 1 && matches!(r.children()[0].operator(), Operator::Tuple) => {
                    r.children()[0].children().iter().map(|c| convert(c, text)).collect::<Result<_>>()?
                }
                Some(_) => vec![arg(0)?],
            };
            Ok(Expr::Call(identifier.clone(), args, col))
        }
        Operator::Tuple => Err(Error::Invalid(format!("expression '{text}': a ',' outside a function's arguments"))),
        Operator::Chain => Err(Error::Invalid(format!("expression '{text}': ';' is not supported"))),
        other => Err(Error::Invalid(format!("expression '{text}': the operator {other} is not supported in a selection"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, col: usize) -> Box<Expr> {
        Box::new(Expr::Field(name.into(), col))
    }

    #[test]
    fn precedence_and_calls() {
        let e = parse("nMuon >= 1 && count(Jet.pt > 25) >= 4").unwrap();
        let Expr::Bin(BinOp::And, l, r) = e else { panic!("{e:?}") };
        assert_eq!(*l, Expr::Bin(BinOp::Ge, f("nMuon", 1), Box::new(Expr::Num(1.0))));
        let Expr::Bin(BinOp::Ge, c, four) = *r else { panic!() };
        assert_eq!(*four, Expr::Num(4.0));
        assert_eq!(*c, Expr::Call("count".into(), vec![Expr::Bin(BinOp::Gt, f("Jet.pt", 21), Box::new(Expr::Num(25.0)))], 15));
    }

    #[test]
    fn several_arguments_and_unary() {
        let e = parse("max(a, -b) > 2 * c || !d").unwrap();
        let Expr::Bin(BinOp::Or, l, r) = e else { panic!() };
        let Expr::Bin(BinOp::Gt, call, _) = *l else { panic!() };
        assert_eq!(*call, Expr::Call("max".into(), vec![Expr::Field("a".into(), 5), Expr::Neg(f("b", 9))], 1));
        assert_eq!(*r, Expr::Not(f("d", 24)));
    }

    #[test]
    fn errors_name_the_column() {
        for (text, want) in [
            ("a > (b", "'(' at column 5 is not closed"),
            ("a > b)", "')' without its '(' at column 6"),
            ("a = 3", "assignment"),
            ("a & b", "'&&'"),
            ("a > \"x\"", "column 5"),
            ("a; b", "column 2"),
            ("", "empty"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn column_of_whole_words() {
        assert_eq!(column_of("Jet_pt2 > Jet_pt", "Jet_pt"), 11);
        assert_eq!(column_of("x", "y"), 1);
    }
}
