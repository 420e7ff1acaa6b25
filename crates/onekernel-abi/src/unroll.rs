//! Unrolling at specialisation: an `#[unroll]` loop whose bound is set at
//! the launch (`for r in 0..TM` with `TM` a const parameter) cannot be
//! unrolled when the kernel is compiled, so the compiler keeps it a loop
//! and marks it: its counter is named [`UNROLL_PREFIX`]` + name`
//! (`unroll_r`). Once a specialisation's values are written into the
//! module as constants ([`crate::wgsl_with_constants`]), its bounds are
//! known, and [`unroll_marked_loops`] repeats the body once per value with
//! the counter's every read replaced by the value (`const _e160 = 3u;`), so
//! that arrays indexed by the counter are indexed by constants and stay in
//! registers (a dynamically indexed `array<f32, 16>` went to local memory
//! on an H200: 0.37 TFLOP/s for a matmul, docs/performance.md).
//!
//! It reads the text naga's WGSL writer makes of the compiler's counted
//! loop, line by line:
//!
//! ```text
//! unroll_r = 0u;
//! loop {
//!     let _e154 = unroll_r;
//!     if !((_e154 < TM)) {
//!         break;
//!     }
//!     ..body..
//!     continuing {
//!         let _e173 = unroll_r;
//!         unroll_r = (_e173 + 1u);
//!     }
//! }
//! ```
//!
//! A loop of any other shape (a bound that is not a literal or a
//! constant, a `break` of its own, a read of the counter that is not a
//! `let`, more than [`MAX_UNROLL`] iterations) stays a loop: the module is
//! correct either way, only slower. Nested marked loops unroll outer
//! first, then each copy's inner ones.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// The prefix of the counter of a loop unrolled at specialisation.
pub const UNROLL_PREFIX: &str = "unroll_";

/// The most iterations one loop is unrolled into.
pub const MAX_UNROLL: i64 = 256;

/// The most bytes of text unrolling may make; past it the module is left
/// with its loops (a shader that large would take the driver long to
/// compile for no gain).
const MAX_TEXT: usize = 8 << 20;

/// `text` (a module with its overrides written as constants) with each
/// marked loop whose bounds are constants unrolled.
/// A module without marked loops comes back unchanged.
pub fn unroll_marked_loops(text: &str) -> String {
    if !text.contains(UNROLL_PREFIX) {
        return text.to_string();
    }
    let consts = constants(text);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut from = 0;
    while let Some(i) = (from..lines.len()).find(|&i| lines[i].trim() == "loop {") {
        from = i + 1;
        let Some((start, replacement)) = unrolled(&lines, i, &consts) else { continue };
        let end = start + replacement.len();
        let old_len = i - start + loop_len(&lines, i).unwrap_or(0);
        let size: usize =
            lines.iter().map(|l| l.len() + 1).sum::<usize>() + replacement.iter().map(|l| l.len() + 1).sum::<usize>();
        if size > MAX_TEXT {
            return text.to_string();
        }
        lines.splice(start..start + old_len, replacement);
        // The copies may hold marked loops of their own: look again from
        // the first of them.
        from = start.min(end);
    }
    // An unrolled loop's counter is read by no one any more: drop its
    // `var unroll_x: u32;` so the module shows no trace of the loop.
    let unused = |name: &str, lines: &[String]| {
        lines.iter().filter(|l| l.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == name)).count() == 1
    };
    let counters: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("var ")?;
            let (name, ty) = rest.split_once(':')?;
            (name.starts_with(UNROLL_PREFIX) && ty.trim() == "u32;").then(|| name.to_string())
        })
        .collect();
    for name in counters {
        if unused(&name, &lines) {
            lines.retain(|l| l.trim() != format!("var {name}: u32;"));
        }
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `const NAME: T = LIT;` declarations of `text` whose value is an
/// integer literal: name → (value, suffix).
fn constants(text: &str) -> Vec<(String, (i64, String))> {
    text.lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("const ")?;
            let (name, rest) = rest.split_once(':')?;
            let (_, value) = rest.split_once('=')?;
            let value = value.split_once(';')?.0.trim();
            Some((name.trim().to_string(), literal(value)?))
        })
        .collect()
}

/// An integer literal as naga writes it (`8u`, `-3i`, `7`): its value and
/// suffix.
fn literal(text: &str) -> Option<(i64, String)> {
    let digits_end = text.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    let value = digits.parse::<i64>().ok()?;
    matches!(suffix, "" | "u" | "i" | "li" | "lu").then(|| (value, suffix.to_string()))
}

/// A literal or a constant's name as (value, suffix).
fn value_of(text: &str, consts: &[(String, (i64, String))]) -> Option<(i64, String)> {
    literal(text).or_else(|| consts.iter().find(|(n, _)| n == text).map(|(_, v)| v.clone()))
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The number of lines of the loop starting at line `i` (`loop {` to its
/// closing `}`), counting braces.
fn loop_len(lines: &[String], i: usize) -> Option<usize> {
    let mut depth = 0i64;
    for (k, line) in lines[i..].iter().enumerate() {
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        if depth == 0 {
            return Some(k + 1);
        }
    }
    None
}

/// If the loop at line `i` is a marked loop with constant bounds: the line
/// its counter's initialisation is on, and the lines that replace the
/// initialisation and the loop.
fn unrolled(lines: &[String], i: usize, consts: &[(String, (i64, String))]) -> Option<(usize, Vec<String>)> {
    let len = loop_len(lines, i)?;
    let line = |k: usize| lines.get(k).map(|l| l.trim());
    // The header: the counter's read and the bound's test.
    let (load, counter) = line(i + 1)?.strip_prefix("let ")?.strip_suffix(';')?.split_once(" = ")?;
    if !counter.starts_with(UNROLL_PREFIX) || !is_ident(counter) {
        return None;
    }
    let bound = line(i + 2)?.strip_prefix(&format!("if !(({load} < "))?.strip_suffix(")) {")?;
    if line(i + 3)? != "break;" || line(i + 4)? != "}" {
        return None;
    }
    let (end, _) = value_of(bound, consts)?;
    // The initialisation just before the loop.
    let init = line(i.checked_sub(1)?)?.strip_prefix(&format!("{counter} = "))?.strip_suffix(';')?;
    let (start, suffix) = value_of(init, consts)?;
    // The continuing block, the loop's last four lines before its `}`.
    let last = i + len - 1;
    let cont = last.checked_sub(4)?;
    let inner = format!("{}    ", indent(&lines[i]));
    if lines[cont] != format!("{inner}continuing {{") || line(last - 1)? != "}" {
        return None;
    }
    let (next_load, again) = line(cont + 1)?.strip_prefix("let ")?.strip_suffix(';')?.split_once(" = ")?;
    if again != counter {
        return None;
    }
    let step = line(cont + 2)?.strip_prefix(&format!("{counter} = ({next_load} + "))?.strip_suffix(");")?;
    let (step, _) = value_of(step, consts)?;
    if step <= 0 {
        return None;
    }
    let body = &lines[i + 5..cont];
    if !jumps_stay_inside(body) {
        return None;
    }
    let count = if end > start { (end - start + step - 1) / step } else { 0 };
    if count > MAX_UNROLL {
        return None;
    }
    let read = |l: &str| -> Option<String> {
        let (name, value) = l.trim().strip_prefix("let ")?.strip_suffix(';')?.split_once(" = ")?;
        (value == counter).then(|| name.to_string())
    };
    let outer = indent(&lines[i]).to_string();
    let mut out = Vec::new();
    for k in 0..count {
        let v = start + k * step;
        out.push(format!("{outer}{{"));
        for l in body {
            match read(l) {
                Some(name) => out.push(format!("{}const {name} = {v}{suffix};", indent(l))),
                None if mentions(l, counter) => return None,
                None => out.push(l.clone()),
            }
        }
        out.push(format!("{outer}}}"));
    }
    Some((i - 1, out))
}

fn is_ident(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `line` names `ident` (as a whole word).
fn mentions(line: &str, ident: &str) -> bool {
    line.match_indices(ident).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + ident.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Whether every `break` and `continue` of `body` leaves a loop (or, for
/// `break`, a `switch`) inside it, not the loop being unrolled.
fn jumps_stay_inside(body: &[String]) -> bool {
    // Per open brace: whether it opened a loop or a switch.
    let mut stack: Vec<(bool, bool)> = Vec::new();
    for l in body {
        let t = l.trim();
        for _ in 0..t.matches('}').count() {
            stack.pop();
        }
        let in_loop = stack.iter().any(|&(is_loop, _)| is_loop);
        let in_switch = stack.iter().any(|&(_, is_switch)| is_switch);
        if (t.starts_with("break") && !(in_loop || in_switch)) || (t.starts_with("continue;") && !in_loop) {
            return false;
        }
        for _ in 0..t.matches('{').count() {
            stack.push((t.starts_with("loop"), t.starts_with("switch")));
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    const LOOP: &str = "\
const TM: u32 = 3u;
fn f() {
    var a: array<f32, TM>;
    var unroll_r: u32;
    unroll_r = 0u;
    loop {
        let _e1 = unroll_r;
        if !((_e1 < TM)) {
            break;
        }
        let _e2 = unroll_r;
        a[_e2] = 1f;
        continuing {
            let _e3 = unroll_r;
            unroll_r = (_e3 + 1u);
        }
    }
}
";

    #[test]
    fn a_marked_loop_with_a_constant_bound_is_repeated_per_value() {
        let out = unroll_marked_loops(LOOP);
        assert!(!out.contains("loop {"), "{out}");
        for v in 0..3 {
            assert!(out.contains(&format!("const _e2 = {v}u;")), "{out}");
        }
        assert!(!out.contains("_e2 = 3u;"), "{out}");
        assert!(!out.contains("unroll_r = 0u;"), "{out}");
    }

    #[test]
    fn other_loops_stay_loops() {
        // Not marked.
        let plain = LOOP.replace("unroll_r", "r");
        assert_eq!(unroll_marked_loops(&plain), plain);
        // A bound that is not a constant.
        let dynamic = LOOP.replace("(_e1 < TM)", "(_e1 < n)");
        assert_eq!(unroll_marked_loops(&dynamic), dynamic);
        // A `break` of its own.
        let breaks = LOOP.replace("a[_e2] = 1f;", "a[_e2] = 1f;\n        if true {\n            break;\n        }");
        assert_eq!(unroll_marked_loops(&breaks), breaks);
        // A `break` of an inner loop is fine.
        let inner = LOOP.replace("a[_e2] = 1f;", "a[_e2] = 1f;\n        loop {\n            break;\n        }");
        assert!(!unroll_marked_loops(&inner).contains("_e1 < TM"));
    }

    #[test]
    fn nested_loops_unroll_outer_then_inner() {
        let nested = LOOP.replace(
            "        a[_e2] = 1f;\n",
            "        unroll_c = 0u;
        loop {
            let _e4 = unroll_c;
            if !((_e4 < 2u)) {
                break;
            }
            let _e5 = unroll_c;
            a[_e2] = f32(_e5);
            continuing {
                let _e6 = unroll_c;
                unroll_c = (_e6 + 1u);
            }
        }
",
        );
        let out = unroll_marked_loops(&nested);
        assert!(!out.contains("loop {"), "{out}");
        assert_eq!(out.matches("const _e5 = 1u;").count(), 3, "{out}");
    }
}
