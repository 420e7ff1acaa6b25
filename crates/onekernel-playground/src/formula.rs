//! Input values by formula: `i * 0.5`, `sin(x / 8) * y`, `(i % 7) - 3`.
//!
//! Variables: `i` (the element's index), `n` (the buffer's length), `x`
//! and `y` (column and row, for a buffer with a shape: `x = i % cols`,
//! `y = i / cols`), `cols`, `rows`, `pi`, `e`. Operators `+ - * / %` and
//! `^` (power), parentheses; functions `sin cos tan exp ln log2 sqrt abs
//! floor ceil round min max pow`. Evaluated in `f64`, then converted to the
//! element type as Rust's `as` does.

/// A parsed formula.
#[derive(Debug, Clone)]
pub enum Expr {
    /// A number.
    Num(f64),
    /// A variable.
    Var(Var),
    /// `-a`.
    Neg(Box<Expr>),
    /// `a op b`.
    Bin(char, Box<Expr>, Box<Expr>),
    /// `f(args)`.
    Call(Func, Vec<Expr>),
}

/// The variables.
#[derive(Debug, Clone, Copy)]
pub enum Var {
    /// Index.
    I,
    /// Length.
    N,
    /// Column.
    X,
    /// Row.
    Y,
    /// Columns.
    Cols,
    /// Rows.
    Rows,
}

/// The functions.
#[derive(Debug, Clone, Copy)]
pub enum Func {
    /// One argument.
    Unary(fn(f64) -> f64),
    /// Two arguments.
    Binary(fn(f64, f64) -> f64),
}

/// Where an element is.
#[derive(Debug, Clone, Copy)]
pub struct At {
    /// Index.
    pub i: f64,
    /// Length.
    pub n: f64,
    /// Columns (the length without a shape).
    pub cols: f64,
    /// Rows (1 without a shape).
    pub rows: f64,
}

/// Longest formula accepted.
pub const MAX_LEN: usize = 500;

/// Parses a formula, or says what is wrong with it.
pub fn parse(text: &str) -> Result<Expr, String> {
    if text.len() > MAX_LEN {
        return Err(format!("the formula is longer than {MAX_LEN} characters"));
    }
    let tokens = lex(text)?;
    let mut p = Parser { tokens, pos: 0, depth: 0 };
    let e = p.expr()?;
    match p.tokens.get(p.pos) {
        None => Ok(e),
        Some(t) => Err(format!("unexpected `{}` in formula `{text}`", t.show())),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Op(char),
}

impl Tok {
    fn show(&self) -> String {
        match self {
            Tok::Num(n) => n.to_string(),
            Tok::Ident(s) => s.clone(),
            Tok::Op(c) => c.to_string(),
        }
    }
}

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == '_') {
                i += 1;
            }
            // An exponent: 1e-3.
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let mut j = i + 1;
                if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    i = j;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let s: String = chars[start..i].iter().filter(|&&c| c != '_').collect();
            out.push(Tok::Num(s.parse().map_err(|_| format!("`{s}` is not a number"))?));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else if "+-*/%^(),".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else {
            return Err(format!("unexpected `{c}` in formula"));
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek_op(&self) -> Option<char> {
        match self.tokens.get(self.pos) {
            Some(Tok::Op(c)) => Some(*c),
            _ => None,
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > 64 {
            return Err("the formula is nested too deeply".into());
        }
        let mut e = self.term()?;
        while let Some(op @ ('+' | '-')) = self.peek_op() {
            self.pos += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.term()?));
        }
        self.depth -= 1;
        Ok(e)
    }

    fn term(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek_op() {
            self.pos += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.unary()?));
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.peek_op() == Some('-') {
            self.pos += 1;
            self.depth += 1;
            if self.depth > 64 {
                return Err("the formula is nested too deeply".into());
            }
            let e = Expr::Neg(Box::new(self.unary()?));
            self.depth -= 1;
            return Ok(e);
        }
        let base = self.atom()?;
        if self.peek_op() == Some('^') {
            self.pos += 1;
            return Ok(Expr::Bin('^', Box::new(base), Box::new(self.unary()?)));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, String> {
        let Some(tok) = self.tokens.get(self.pos).cloned() else {
            return Err("the formula ends too early".into());
        };
        self.pos += 1;
        match tok {
            Tok::Num(n) => Ok(Expr::Num(n)),
            Tok::Op('(') => {
                let e = self.expr()?;
                self.expect(')')?;
                Ok(e)
            }
            Tok::Ident(name) => {
                if self.peek_op() == Some('(') {
                    self.pos += 1;
                    let f = func(&name).ok_or_else(|| format!("unknown function `{name}` in formula"))?;
                    let mut args = Vec::new();
                    if self.peek_op() != Some(')') {
                        args.push(self.expr()?);
                        while self.peek_op() == Some(',') {
                            self.pos += 1;
                            args.push(self.expr()?);
                        }
                    }
                    self.expect(')')?;
                    let want = match f {
                        Func::Unary(_) => 1,
                        Func::Binary(_) => 2,
                    };
                    if args.len() != want {
                        return Err(format!("`{name}` takes {want} argument{}", if want == 1 { "" } else { "s" }));
                    }
                    return Ok(Expr::Call(f, args));
                }
                Ok(match name.as_str() {
                    "i" => Expr::Var(Var::I),
                    "n" => Expr::Var(Var::N),
                    "x" => Expr::Var(Var::X),
                    "y" => Expr::Var(Var::Y),
                    "cols" => Expr::Var(Var::Cols),
                    "rows" => Expr::Var(Var::Rows),
                    "pi" => Expr::Num(std::f64::consts::PI),
                    "e" => Expr::Num(std::f64::consts::E),
                    _ => return Err(format!("unknown name `{name}` in formula (use i, n, x, y, cols, rows, pi, e)")),
                })
            }
            Tok::Op(c) => Err(format!("unexpected `{c}` in formula")),
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.peek_op() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected `{c}` in formula"))
        }
    }
}

fn func(name: &str) -> Option<Func> {
    Some(match name {
        "sin" => Func::Unary(f64::sin),
        "cos" => Func::Unary(f64::cos),
        "tan" => Func::Unary(f64::tan),
        "exp" => Func::Unary(f64::exp),
        "ln" => Func::Unary(f64::ln),
        "log2" => Func::Unary(f64::log2),
        "sqrt" => Func::Unary(f64::sqrt),
        "abs" => Func::Unary(f64::abs),
        "floor" => Func::Unary(f64::floor),
        "ceil" => Func::Unary(f64::ceil),
        "round" => Func::Unary(f64::round),
        "min" => Func::Binary(f64::min),
        "max" => Func::Binary(f64::max),
        "pow" => Func::Binary(f64::powf),
        _ => return None,
    })
}

impl Expr {
    /// The value at one element.
    pub fn eval(&self, at: &At) -> f64 {
        match self {
            Expr::Num(n) => *n,
            Expr::Var(v) => match v {
                Var::I => at.i,
                Var::N => at.n,
                Var::X => at.i % at.cols,
                Var::Y => (at.i / at.cols).floor(),
                Var::Cols => at.cols,
                Var::Rows => at.rows,
            },
            Expr::Neg(a) => -a.eval(at),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(at), b.eval(at));
                match op {
                    '+' => a + b,
                    '-' => a - b,
                    '*' => a * b,
                    '/' => a / b,
                    '%' => a % b,
                    _ => a.powf(b),
                }
            }
            Expr::Call(f, args) => match f {
                Func::Unary(f) => f(args[0].eval(at)),
                Func::Binary(f) => f(args[0].eval(at), args[1].eval(at)),
            },
        }
    }
}

/// A seeded pseudo-random generator (SplitMix64): the same seed gives the
/// same values on every machine.
pub struct Random(u64);

impl Random {
    /// Seeded.
    pub fn new(seed: u64) -> Random {
        Random(seed)
    }

    /// The next value in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}
