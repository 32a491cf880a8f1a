//! The arithmetic of a short program the local model wrote to solve a worked problem: the
//! value it leaves in `answer`, computed without running anything.
//!
//! Only straight-line arithmetic is understood: assignments (`x = ...`, `x += ...`) of numbers,
//! names, `+ - * / // % **`, parentheses and a few pure functions (`round`, `int`, `abs`,
//! `min`, `max`, `sum`, `math.ceil`, ...). Comments, blank lines and `import math` are passed
//! over, and `print(x)` of one number stands for `answer` when the program sets none; anything
//! else (a loop, a condition, a string, a name never assigned) means the program is not
//! understood and yields no number, so a doubtful program never confirms an answer. The
//! program is model-written from text a user or a document controls: nothing in it
//! is executed, every step is bounded (length, statements, powers) and every error is a `None`.
//! Python's meaning is kept where it differs from most expression crates (`/` is true
//! division, `//` and `%` floor toward minus infinity, `-2**2` is -4), which is why this is a
//! small parser rather than a general expression evaluator.

use std::collections::HashMap;

/// Longest program read (characters): a worked problem's program is a few hundred.
const MAX_CHARS: usize = 6_000;
/// Most statements read.
const MAX_STATEMENTS: usize = 200;
/// Largest exponent of `**` (keeps every value finite and cheap).
const MAX_EXPONENT: f64 = 64.0;

/// The number the program stores in `answer` (else the last number it prints on its own),
/// `None` when it is not plain arithmetic.
pub fn answer(code: &str) -> Option<f64> {
    if code.chars().count() > MAX_CHARS {
        return None;
    }
    let mut env: HashMap<String, f64> = HashMap::new();
    let mut printed = None;
    let mut statements = 0;
    for raw in code.lines() {
        let line = raw.split('#').next().unwrap_or("").trim_end();
        if line.trim().is_empty() {
            continue;
        }
        // An indented line belongs to a block (a loop, a condition): not straight-line.
        if line.starts_with([' ', '\t']) {
            return None;
        }
        statements += 1;
        if statements > MAX_STATEMENTS {
            return None;
        }
        if line == "import math" {
            continue;
        }
        if line.starts_with("print(") {
            // A number printed on its own is the result of a program that sets no `answer`
            // (the model often ends with `print(total)`); a printed text is passed over.
            printed = printed_number(line, &env).or(printed);
            continue;
        }
        statement(line, &mut env)?;
    }
    env.get("answer")
        .copied()
        .or(printed)
        .filter(|v| v.is_finite())
}

/// The number `print(expr)` shows, `None` for anything else (several values, text).
fn printed_number(line: &str, env: &HashMap<String, f64>) -> Option<f64> {
    let toks = tokens(line)?;
    let inner = toks.get(2..toks.len().checked_sub(1)?)?;
    if toks.last() != Some(&Tok::Op(")".into())) {
        return None;
    }
    let mut p = Parser {
        toks: inner,
        at: 0,
        env,
    };
    let v = p.expr()?.number()?;
    (p.at == inner.len()).then_some(v)
}

/// One assignment, applied to `env`.
fn statement(line: &str, env: &mut HashMap<String, f64>) -> Option<()> {
    let toks = tokens(line)?;
    let Some(Tok::Name(target)) = toks.first() else {
        return None;
    };
    let op = match toks.get(1)? {
        Tok::Op(op) if op.ends_with('=') && !matches!(op.as_str(), "==" | "<=" | ">=" | "!=") => {
            op.trim_end_matches('=').to_string()
        }
        _ => return None,
    };
    if target.contains('.') {
        return None;
    }
    let mut p = Parser {
        toks: &toks[2..],
        at: 0,
        env,
    };
    let v = p.expr()?.number()?;
    if p.at != p.toks.len() {
        return None;
    }
    let value = if op.is_empty() {
        v
    } else {
        binary(&op, *env.get(target)?, v)?
    };
    if !value.is_finite() {
        return None;
    }
    env.insert(target.clone(), value);
    Some(())
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Op(String),
}

fn tokens(line: &str) -> Option<Vec<Tok>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == '.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    i = j;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let text = line[start..i].replace('_', "");
            out.push(Tok::Num(text.parse().ok()?));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Name(line[start..i].to_string()));
        } else {
            const OPS: [&str; 22] = [
                "//=", "**=", "**", "//", "+=", "-=", "*=", "/=", "%=", "==", "<=", ">=", "!=",
                "+", "-", "*", "/", "%", "(", ")", ",", "=",
            ];
            const BRACKETS: [&str; 2] = ["[", "]"];
            let rest = &line[i..];
            let op = OPS
                .iter()
                .chain(BRACKETS.iter())
                .find(|op| rest.starts_with(**op))?;
            out.push(Tok::Op(op.to_string()));
            i += op.len();
        }
    }
    Some(out)
}

/// A value: a number, or a list (only as the argument of `sum`, `min`, `max`).
enum Value {
    Num(f64),
    List(Vec<f64>),
}

impl Value {
    fn number(self) -> Option<f64> {
        match self {
            Value::Num(v) => Some(v),
            Value::List(_) => None,
        }
    }
}

struct Parser<'a> {
    toks: &'a [Tok],
    at: usize,
    env: &'a HashMap<String, f64>,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<&str> {
        match self.toks.get(self.at) {
            Some(Tok::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        let hit = self.peek_op() == Some(op);
        if hit {
            self.at += 1;
        }
        hit
    }

    /// Sums and differences.
    fn expr(&mut self) -> Option<Value> {
        self.left_to_right(&["+", "-"], Self::term)
    }

    /// Products, quotients and remainders.
    fn term(&mut self) -> Option<Value> {
        self.left_to_right(&["*", "/", "//", "%"], Self::unary)
    }

    /// Operands read by `operand`, joined by any of `ops` from left to right.
    fn left_to_right(
        &mut self,
        ops: &[&str],
        operand: fn(&mut Self) -> Option<Value>,
    ) -> Option<Value> {
        let mut v = operand(self)?;
        while let Some(op) = self.peek_op().filter(|o| ops.contains(o)) {
            let op = op.to_string();
            self.at += 1;
            let r = operand(self)?.number()?;
            v = Value::Num(binary(&op, v.number()?, r)?);
        }
        Some(v)
    }

    /// A sign binds less tightly than a power (`-2**2` is -4).
    fn unary(&mut self) -> Option<Value> {
        if self.eat("-") {
            return Some(Value::Num(-self.unary()?.number()?));
        }
        if self.eat("+") {
            return Some(Value::Num(self.unary()?.number()?));
        }
        self.power()
    }

    /// Powers, right to left (`2**3**2` is 2**9).
    fn power(&mut self) -> Option<Value> {
        let base = self.atom()?;
        if self.eat("**") {
            let exp = self.unary()?.number()?;
            return Some(Value::Num(binary("**", base.number()?, exp)?));
        }
        Some(base)
    }

    fn atom(&mut self) -> Option<Value> {
        let tok = self.toks.get(self.at)?.clone();
        self.at += 1;
        match tok {
            Tok::Num(v) => Some(Value::Num(v)),
            Tok::Op(op) if op == "(" => {
                let v = self.expr()?;
                self.eat(")").then_some(v)
            }
            Tok::Op(op) if op == "[" => {
                self.separated("]", |p| p.expr()?.number()).map(Value::List)
            }
            Tok::Name(name) if self.peek_op() == Some("(") => {
                self.at += 1;
                let args = self.separated(")", Parser::expr)?;
                call(&name, args)
            }
            Tok::Name(name) => self.env.get(&name).copied().map(Value::Num),
            Tok::Op(_) => None,
        }
    }

    /// Items separated by commas up to `close` (consumed), each read by `item`.
    fn separated<T>(
        &mut self,
        close: &str,
        item: impl Fn(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        let mut out = Vec::new();
        if self.eat(close) {
            return Some(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat(close) {
                return Some(out);
            }
            if !self.eat(",") {
                return None;
            }
        }
    }
}

/// The pure functions a worked problem's program uses.
fn call(name: &str, args: Vec<Value>) -> Option<Value> {
    // `sum([..])`, `min([..])`, `max(a, b, ..)`: either one list or numbers.
    let numbers = |args: Vec<Value>| -> Option<Vec<f64>> {
        match <[Value; 1]>::try_from(args) {
            Ok([Value::List(v)]) => Some(v),
            Ok([Value::Num(v)]) => Some(vec![v]),
            Err(args) => args.into_iter().map(Value::number).collect(),
        }
    };
    let one = |args: Vec<Value>| -> Option<f64> {
        let [v] = <[Value; 1]>::try_from(args).ok()?;
        v.number()
    };
    let v = match name {
        "sum" => numbers(args)?.iter().sum(),
        "min" => numbers(args)?.into_iter().reduce(f64::min)?,
        "max" => numbers(args)?.into_iter().reduce(f64::max)?,
        "abs" => one(args)?.abs(),
        "int" => one(args)?.trunc(),
        "float" => one(args)?,
        "math.ceil" => one(args)?.ceil(),
        "math.floor" => one(args)?.floor(),
        "math.sqrt" => one(args)?.sqrt(),
        "round" => {
            let mut a = args.into_iter();
            let v = a.next()?.number()?;
            let digits = a.next().map(Value::number).unwrap_or(Some(0.0))?;
            if a.next().is_some() || !(0.0..=12.0).contains(&digits) {
                return None;
            }
            // As Python: the exact binary value rounded to decimal places, halves to even
            // (`2.675` is stored just below, so 2.67; scaling by 100 first would give 2.68).
            // Rust's formatting rounds the exact value the same way.
            format!("{v:.0$}", digits as usize).parse().ok()?
        }
        _ => return None,
    };
    v.is_finite().then_some(Value::Num(v))
}

/// `a op b` as Python computes it on numbers; `None` for a division by zero or a huge power.
fn binary(op: &str, a: f64, b: f64) -> Option<f64> {
    let v = match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" if b != 0.0 => a / b,
        "//" if b != 0.0 => (a / b).floor(),
        "%" if b != 0.0 => a - b * (a / b).floor(),
        "**" if b.abs() <= MAX_EXPONENT => a.powf(b),
        _ => return None,
    };
    v.is_finite().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worked_problem_program_gives_its_answer() {
        let code = "# Janet's ducks\neggs_per_day = 16\neaten = 3\nbaked = 4\n\
                    remaining = eggs_per_day - eaten - baked\nprice = 2\n\
                    answer = remaining * price\nprint(answer)\n";
        assert_eq!(answer(code), Some(18.0));
        let code = "lollipops = 24\nlollipops -= 2\nlollipops += 2 * 14\nlollipops -= 3 + 2\nanswer = lollipops";
        assert_eq!(answer(code), Some(45.0));
        assert_eq!(
            answer("price = 19.50\nanswer = price / (1 - 0.25)"),
            Some(26.0)
        );
        // No `answer`: the number it prints last; printed text is passed over.
        let code = "total = 3 * 4\nprint(total)\nprint(f\"Total: {total}\")\nprint(total + 1)\n";
        assert_eq!(answer(code), Some(13.0));
        assert_eq!(answer("total = 12\nprint(\"The total is\", total)"), None);
        assert_eq!(
            answer("answer = 5\nprint(answer * 2)"),
            Some(5.0),
            "`answer` wins"
        );
    }

    #[test]
    fn python_arithmetic_is_kept() {
        assert_eq!(answer("answer = 7 / 2"), Some(3.5));
        assert_eq!(answer("answer = 7 // 2"), Some(3.0));
        assert_eq!(answer("answer = -7 // 2"), Some(-4.0));
        assert_eq!(answer("answer = -7 % 3"), Some(2.0));
        assert_eq!(answer("answer = -2 ** 2"), Some(-4.0));
        assert_eq!(answer("answer = 2 ** 3 ** 2"), Some(512.0));
        assert_eq!(answer("answer = 1_000 * 1.5e2"), Some(150_000.0));
        assert_eq!(
            answer("import math\nanswer = math.ceil(10 / 3) + round(2.5) + int(-2.7)"),
            Some(4.0 + 2.0 - 2.0)
        );
        assert_eq!(
            answer("answer = sum([1, 2, 3]) + max(4, 5) + min([7, 6])"),
            Some(17.0)
        );
        for (code, v) in [
            ("round(2.345, 2)", 2.35),
            ("round(2.675, 2)", 2.67),
            ("round(0.125, 2)", 0.12),
        ] {
            assert_eq!(answer(&format!("answer = {code}")), Some(v), "{code}");
        }
    }

    #[test]
    fn anything_but_straight_line_arithmetic_is_not_understood() {
        // A block: the value depends on control flow this does not follow.
        assert_eq!(answer("x = 1\nif x == 1:\n    answer = 5\n"), None);
        assert_eq!(
            answer("total = 0\nfor i in range(3):\n    total += i\nanswer = total"),
            None
        );
        assert_eq!(answer("import os\nanswer = 1"), None);
        assert_eq!(answer("answer = os.system(1)"), None);
        assert_eq!(answer("answer = undefined_name + 1"), None);
        assert_eq!(answer("answer = 'five'"), None);
        assert_eq!(answer("answer = 1 / 0"), None);
        assert_eq!(answer("answer = 10 ** 400"), None);
        assert_eq!(answer("answer = (1 + 2"), None);
        assert_eq!(answer("answer = [1, 2]"), None);
        assert_eq!(answer("x = 4"), None, "no answer variable");
        assert_eq!(answer(&"x = 1\n".repeat(MAX_STATEMENTS + 1)), None);
    }
}
