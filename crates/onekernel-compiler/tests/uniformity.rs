//! The barrier uniformity check: divergent barriers are rejected with a
//! reason; barriers in uniform control flow are accepted.

use onekernel_compiler::compile;

fn errors(src: &str) -> Vec<String> {
    let item: syn::ItemFn = syn::parse_str(src).expect("parses");
    match compile("workgroup_size = 64".parse().expect("attr"), &item, &[]) {
        Ok(_) => vec![],
        Err(e) => e.iter().filter(|d| d.is_reported()).map(|d| d.to_string()).collect(),
    }
}

#[track_caller]
fn rejected(src: &str, reason: &str) {
    let e = errors(src);
    assert_eq!(e.len(), 1, "want one error, got {e:#?}");
    assert!(e[0].contains(reason), "error should say {reason:?}: {}", e[0]);
}

#[track_caller]
fn accepted(src: &str) {
    let e = errors(src);
    assert!(e.is_empty(), "{e:#?}");
}

#[test]
fn barrier_under_a_thread_dependent_if() {
    rejected(
        "fn k(out: &mut [f32]) { let t = shared::<[f32; 64]>(); if thread_id().x < 32 { workgroup_barrier(); } out[0] = t[0]; }",
        "inside `if thread_id().x < 32`, and the condition depends on `thread_id()`",
    );
}

#[test]
fn barrier_under_a_condition_on_loaded_data() {
    rejected("fn k(a: &[f32], out: &mut [f32]) { let v = a[global_id().x]; if v > 0.0 { workgroup_barrier(); } out[0] = v; }", "depends on `v`");
}

#[test]
fn barrier_in_a_loop_with_a_varying_bound() {
    rejected(
        "fn k(out: &mut [u32]) { for j in 0..thread_id().x { workgroup_barrier(); out[j] = 1; } }",
        "inside a `for` loop whose range depends on `thread_id()`",
    );
    rejected("fn k(out: &mut [u32]) { let mut j = global_id().x; while j < 10 { workgroup_barrier(); j += 1; } out[0] = 0; }", "inside a `while` loop");
}

#[test]
fn barrier_after_a_divergent_return() {
    rejected(
        "fn k(out: &mut [u32]) { let i = global_id().x; if i >= out.len() { return; } workgroup_barrier(); out[i] = 1; }",
        "after a `return` that only some threads take",
    );
}

#[test]
fn barrier_in_a_loop_some_threads_leave() {
    rejected(
        "fn k(out: &mut [u32]) { for j in 0..8 { if thread_id().x == j { break; } workgroup_barrier(); } out[0] = 1; }",
        "inside a loop that some threads leave early",
    );
}

#[test]
fn a_local_made_varying_by_assignment() {
    rejected(
        "fn k(out: &mut [u32], n: u32) { let mut m = n; if thread_id().x == 0 { m = 0; } for j in 0..m { workgroup_barrier(); } out[0] = 1; }",
        "depends on `m`",
    );
}

#[test]
fn uniform_barriers_are_accepted() {
    // Loops over constants and uniform parameters, conditions on block ids.
    accepted("fn k(out: &mut [f32], n: u32) { let t = shared::<[f32; 64]>(); for j in 0..n { t[thread_id().x] = j as f32; workgroup_barrier(); } out[0] = t[0]; }");
    accepted(
        "fn k(out: &mut [f32]) { let t = shared::<[f32; 64]>(); let mut s = 32; while s > 0 { if thread_id().x < s { t[thread_id().x] += t[thread_id().x + s]; } workgroup_barrier(); s /= 2; } out[block_id().x] = t[0]; }",
    );
    accepted("fn k(out: &mut [u32]) { if block_id().x == 0 { workgroup_barrier(); } storage_barrier(); out[0] = 1; }");
    // A divergent `return` after the last barrier is fine.
    accepted("fn k(out: &mut [u32]) { workgroup_barrier(); let i = global_id().x; if i >= out.len() { return; } out[i] = 1; }");
}

#[test]
fn several_divergent_barriers_are_all_reported() {
    let e = errors("fn k(out: &mut [u32]) { if thread_id().x == 0 { workgroup_barrier(); } if global_id().x == 1 { storage_barrier(); } out[0] = 1; }");
    assert_eq!(e.len(), 2, "{e:#?}");
}

#[test]
fn a_mut_parameter_made_varying() {
    rejected(
        "fn k(a: &[f32], out: &mut [f32], mut n: u32) { n += thread_id().x as u32; if n < 32 { workgroup_barrier(); } out[0] = a[0]; }",
        "depends on `n`",
    );
    rejected(
        "fn k(out: &mut [f32], mut n: u32) { n = thread_id().x as u32; while n < 10 { workgroup_barrier(); n += 1; } out[0] = 1.0; }",
        "inside a `while` loop whose condition depends on `n`",
    );
}

#[test]
fn a_barrier_in_a_short_circuit_operand() {
    rejected(
        "fn k(out: &mut [f32]) { let t = thread_id().x; let first = t < 4 || { workgroup_barrier(); false }; if first { out[0] = 1.0; } }",
        "in the right-hand side of `||`",
    );
    rejected(
        "fn k(out: &mut [f32]) { let ok = global_id().x > 0 && { storage_barrier(); true }; if ok { out[0] = 1.0; } }",
        "in the right-hand side of `&&`",
    );
    // A uniform left side: every thread evaluates the right side.
    accepted(
        "fn k(out: &mut [f32], n: u32) { let go = n > 4 || { workgroup_barrier(); false }; if go { out[0] = 1.0; } }",
    );
}

#[test]
fn a_return_inside_a_loop_makes_what_follows_divergent() {
    rejected(
        "fn k(out: &mut [u32]) { for j in 0..4u32 { if thread_id().x as u32 == j { return; } } workgroup_barrier(); out[0] = 1; }",
        "after a `return` that only some threads take",
    );
    // The threads that returned in one iteration miss the next one's barrier.
    rejected(
        "fn k(out: &mut [u32]) { for j in 0..4 { workgroup_barrier(); while thread_id().x < j { return; } } out[0] = 1; }",
        "inside a loop that some threads leave early",
    );
}

#[test]
fn jumps_out_of_inner_loops() {
    // An inner loop's own divergent `break`: its threads meet again after it.
    accepted("fn k(out: &mut [u32]) { for k in 0..4 { for j in 0..8 { if thread_id().x == j { break; } } workgroup_barrier(); } out[0] = 1; }");
    // A divergent `break` out of the outer loop from the inner one.
    rejected(
        "fn k(out: &mut [u32]) { 'o: for k in 0..4 { for j in 0..8 { if thread_id().x == j { break 'o; } } workgroup_barrier(); } out[0] = 1; }",
        "inside a loop that some threads leave early",
    );
}

#[test]
fn an_assignment_later_in_a_loop_makes_earlier_uses_varying() {
    rejected(
        "fn k(out: &mut [u32]) { let mut m = 4; for k in 0..4 { for j in 0..m { workgroup_barrier(); } m = thread_id().x; } out[0] = 1; }",
        "depends on `m`",
    );
}

#[test]
fn subgroup_collectives_are_checked_like_barriers() {
    rejected(
        "fn k(x: &[f32], out: &mut [f32]) { let i = global_id().x; if i < x.len() { out[i] = subgroup_add(x[i]); } }",
        "`subgroup_add()` is not reached by every thread of the workgroup: it is inside `if i < x.len()`",
    );
    // Their results are the same within a subgroup only: not uniform.
    rejected(
        "fn k(out: &mut [u32]) { let s = subgroup_max(thread_id().x as u32); if s > 3 { workgroup_barrier(); } out[0] = s; }",
        "depends on `s`",
    );
    rejected(
        "fn k(out: &mut [u32]) { if subgroup_invocation_id() == 0 { out[0] = subgroup_ballot(true).x; } }",
        "depends on `subgroup_invocation_id()`",
    );
    // Guarding the value, not the call, is accepted; the lane id and the
    // size are not collectives, and the size is uniform.
    accepted("fn k(x: &[f32], out: &mut [f32]) { let i = global_id().x; let s = subgroup_add(if i < x.len() { x[i] } else { 0.0 }); if subgroup_invocation_id() == 0 { out[i] = s; } }");
    accepted("fn k(out: &mut [u32]) { let mut m = subgroup_size() / 2; let mut v = 1u32; while m > 0 { v += subgroup_shuffle_xor(v, m); m /= 2; } out[0] = v; }");
}

#[test]
fn uniform_loads_make_values_uniform() {
    accepted("fn k(a: &[u32], out: &mut [u32]) { let n = shared::<[u32; 1]>(); if thread_id().x == 0 { n[0] = a[0]; } let m = workgroup_uniform_load(&n[0]); for j in 0..m { workgroup_barrier(); } out[0] = m; }");
    // A plain read of the same element is not uniform.
    rejected(
        "fn k(a: &[u32], out: &mut [u32]) { let n = shared::<[u32; 1]>(); n[0] = a[0]; workgroup_barrier(); let m = n[0]; for j in 0..m { workgroup_barrier(); } out[0] = m; }",
        "depends on `m`",
    );
    rejected(
        "fn k(out: &mut [u32]) { let n = shared::<[u32; 64]>(); let m = workgroup_uniform_load(&n[thread_id().x]); out[0] = m; }",
        "the index of `workgroup_uniform_load` must be the same for every thread",
    );
    rejected(
        "fn k(out: &mut [u32]) { let n = shared::<[u32; 64]>(); if thread_id().x == 0 { out[0] = workgroup_uniform_load(&n[0]); } }",
        "`workgroup_uniform_load()` is not reached by every thread",
    );
}

/// Generated kernels: barriers under random control flow (conditions on
/// uniform and varying values, loops with uniform and varying bounds,
/// `return`, `break` and `continue` under conditions, locals made varying
/// by assignment). Every kernel the compiler accepts is run by an oracle
/// that executes each invocation of a workgroup over several inputs and
/// records the barriers it reaches, in order, as the CPU executor requires
/// them: the same sequence for every invocation (a different barrier, or a
/// `return` while others wait, is the executor's divergence error). An
/// accepted kernel must never diverge; the kernels that do diverge must all
/// have been rejected, and some must exist (the test has teeth).
///
/// `ONEKERNEL_UNIFORMITY_KERNELS=N` runs more (default 400).
mod generated {
    use onekernel_compiler::compile;
    use onekernel_compiler::expand::phases::phase_body;

    /// Invocations per workgroup in the generated kernels.
    const WG: u32 = 4;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// A value a condition or a bound reads.
    #[derive(Clone, Copy, Debug)]
    enum Val {
        /// `thread_id().x` (varying).
        T,
        /// `block_id().x` (uniform).
        B,
        /// The scalar parameter (uniform).
        N,
        /// A local assigned from the others.
        M,
        /// A local counter, incremented under conditions.
        X,
        /// The loop variable of the enclosing loop at this depth.
        J(usize),
        /// `a[t]`: loaded at a varying index.
        LoadT,
        /// `a[b]`: loaded at a uniform index.
        LoadB,
    }

    #[derive(Clone, Debug)]
    enum Cond {
        Cmp(Val, &'static str, u32),
        And(Box<Cond>, Box<Cond>),
        Not(Box<Cond>),
    }

    #[derive(Clone, Debug)]
    enum Stmt {
        Barrier(u32),
        If(Cond, Vec<Stmt>, Vec<Stmt>),
        /// `for j{depth} in 0..bound`: a constant, or `val % 3`.
        For(Option<Val>, u32, Vec<Stmt>),
        Return(Cond),
        Break(Cond),
        Continue(Cond),
        SetM(Val),
        IncX,
    }

    struct Gen {
        rng: Rng,
        sites: u32,
        budget: usize,
    }

    impl Gen {
        fn val(&mut self, loops: usize) -> Val {
            match self.rng.below(8 + loops.min(1)) {
                0 => Val::T,
                1 => Val::B,
                2 => Val::N,
                3 => Val::M,
                4 => Val::X,
                5 => Val::LoadT,
                6 => Val::LoadB,
                7 => Val::N,
                _ => Val::J(self.rng.below(loops)),
            }
        }
        fn cond(&mut self, loops: usize) -> Cond {
            match self.rng.below(8) {
                0 => Cond::And(Box::new(self.cond(loops)), Box::new(self.cond(loops))),
                1 => Cond::Not(Box::new(self.cond(loops))),
                _ => {
                    let op = ["<", "==", "!=", ">"][self.rng.below(4)];
                    Cond::Cmp(self.val(loops), op, self.rng.below(4) as u32)
                }
            }
        }
        fn block(&mut self, loops: usize, depth: usize) -> Vec<Stmt> {
            let mut out = Vec::new();
            for _ in 0..1 + self.rng.below(3) {
                if self.budget == 0 {
                    break;
                }
                self.budget -= 1;
                let s = match self.rng.below(12) {
                    0..=2 => {
                        self.sites += 1;
                        Stmt::Barrier(self.sites - 1)
                    }
                    3 | 4 if depth < 3 => {
                        let c = self.cond(loops);
                        let t = self.block(loops, depth + 1);
                        let e = if self.rng.below(2) == 0 { vec![] } else { self.block(loops, depth + 1) };
                        Stmt::If(c, t, e)
                    }
                    5 | 6 if depth < 3 => {
                        let bound = if self.rng.below(3) == 0 { None } else { Some(self.val(loops)) };
                        let k = 1 + self.rng.below(3) as u32;
                        let body = self.block(loops + 1, depth + 1);
                        Stmt::For(bound, k, body)
                    }
                    7 if self.rng.below(3) == 0 => Stmt::Return(self.cond(loops)),
                    8 if loops > 0 => Stmt::Break(self.cond(loops)),
                    9 if loops > 0 => Stmt::Continue(self.cond(loops)),
                    10 => Stmt::SetM(self.val(loops)),
                    _ => Stmt::IncX,
                };
                out.push(s);
            }
            out
        }
    }

    fn val_src(v: Val) -> String {
        match v {
            Val::T => "t".into(),
            Val::B => "b".into(),
            Val::N => "n".into(),
            Val::M => "m".into(),
            Val::X => "x".into(),
            Val::J(d) => format!("j{d}"),
            Val::LoadT => "a[t as usize]".into(),
            Val::LoadB => "a[b as usize]".into(),
        }
    }

    fn cond_src(c: &Cond) -> String {
        match c {
            Cond::Cmp(v, op, k) => format!("{} {op} {k}", val_src(*v)),
            Cond::And(a, b) => format!("({}) && ({})", cond_src(a), cond_src(b)),
            Cond::Not(a) => format!("!({})", cond_src(a)),
        }
    }

    fn block_src(s: &mut String, stmts: &[Stmt], loops: usize) {
        for st in stmts {
            match st {
                Stmt::Barrier(_) => s.push_str("workgroup_barrier(); "),
                Stmt::If(c, t, e) => {
                    s.push_str(&format!("if {} {{ ", cond_src(c)));
                    block_src(s, t, loops);
                    s.push_str("} ");
                    if !e.is_empty() {
                        s.push_str("else { ");
                        block_src(s, e, loops);
                        s.push_str("} ");
                    }
                }
                Stmt::For(bound, k, body) => {
                    let bound = match bound {
                        None => format!("{k}u32"),
                        Some(v) => format!("{} % {k}", val_src(*v)),
                    };
                    s.push_str(&format!("for j{loops} in 0..{bound} {{ "));
                    block_src(s, body, loops + 1);
                    s.push_str("} ");
                }
                Stmt::Return(c) => s.push_str(&format!("if {} {{ return; }} ", cond_src(c))),
                Stmt::Break(c) => s.push_str(&format!("if {} {{ break; }} ", cond_src(c))),
                Stmt::Continue(c) => s.push_str(&format!("if {} {{ continue; }} ", cond_src(c))),
                Stmt::SetM(v) => s.push_str(&format!("m = {}; ", val_src(*v))),
                Stmt::IncX => s.push_str("x += 1; "),
            }
        }
    }

    fn source(body: &[Stmt], m_from_t: bool) -> String {
        let mut s = String::from(
            "fn k(a: &[u32], out: &mut [u32], n: u32) { let t = thread_id().x as u32; let b = block_id().x as u32; ",
        );
        s.push_str(if m_from_t { "let mut m = t; " } else { "let mut m = n; " });
        s.push_str("let mut x = 0u32; ");
        block_src(&mut s, body, 0);
        s.push_str("out[global_id().x] = x + m; }");
        s
    }

    /// One invocation's values.
    struct Inv<'a> {
        t: u32,
        b: u32,
        n: u32,
        m: u32,
        x: u32,
        j: Vec<u32>,
        a: &'a [u32],
    }

    enum Flow {
        Normal,
        Break,
        Continue,
        Return,
    }

    impl Inv<'_> {
        fn val(&self, v: Val) -> u32 {
            match v {
                Val::T => self.t,
                Val::B => self.b,
                Val::N => self.n,
                Val::M => self.m,
                Val::X => self.x,
                Val::J(d) => self.j[d],
                Val::LoadT => self.a[self.t as usize],
                Val::LoadB => self.a[self.b as usize],
            }
        }
        fn cond(&self, c: &Cond) -> bool {
            match c {
                Cond::Cmp(v, op, k) => {
                    let v = self.val(*v);
                    match *op {
                        "<" => v < *k,
                        "==" => v == *k,
                        "!=" => v != *k,
                        _ => v > *k,
                    }
                }
                Cond::And(a, b) => self.cond(a) && self.cond(b),
                Cond::Not(a) => !self.cond(a),
            }
        }
        /// Runs `stmts`, appending the barriers reached to `trace`.
        fn run(&mut self, stmts: &[Stmt], trace: &mut Vec<u32>) -> Flow {
            for st in stmts {
                let flow = match st {
                    Stmt::Barrier(site) => {
                        trace.push(*site);
                        Flow::Normal
                    }
                    Stmt::If(c, t, e) => {
                        if self.cond(c) {
                            self.run(t, trace)
                        } else {
                            self.run(e, trace)
                        }
                    }
                    Stmt::For(bound, k, body) => {
                        let n = match bound {
                            None => *k,
                            Some(v) => self.val(*v) % k,
                        };
                        self.j.push(0);
                        let mut flow = Flow::Normal;
                        for j in 0..n {
                            *self.j.last_mut().unwrap() = j;
                            match self.run(body, trace) {
                                Flow::Break => break,
                                Flow::Return => {
                                    flow = Flow::Return;
                                    break;
                                }
                                Flow::Normal | Flow::Continue => {}
                            }
                        }
                        self.j.pop();
                        flow
                    }
                    Stmt::Return(c) if self.cond(c) => Flow::Return,
                    Stmt::Break(c) if self.cond(c) => Flow::Break,
                    Stmt::Continue(c) if self.cond(c) => Flow::Continue,
                    Stmt::Return(_) | Stmt::Break(_) | Stmt::Continue(_) => Flow::Normal,
                    Stmt::SetM(v) => {
                        self.m = self.val(*v);
                        Flow::Normal
                    }
                    Stmt::IncX => {
                        self.x += 1;
                        Flow::Normal
                    }
                };
                if !matches!(flow, Flow::Normal) {
                    return flow;
                }
            }
            Flow::Normal
        }
    }

    /// The first workgroup configuration whose invocations reach different
    /// barrier sequences, described.
    fn divergence(body: &[Stmt], m_from_t: bool, rng: &mut Rng) -> Option<String> {
        for round in 0..6 {
            let a: Vec<u32> = (0..WG).map(|_| rng.below(4) as u32).collect();
            for b in 0..2 {
                let n = [0, 1, 2, 3, 5, 7][round];
                let traces: Vec<Vec<u32>> = (0..WG)
                    .map(|t| {
                        let m = if m_from_t { t } else { n };
                        let mut inv = Inv { t, b, n, m, x: 0, j: vec![], a: &a };
                        let mut trace = Vec::new();
                        inv.run(body, &mut trace);
                        trace
                    })
                    .collect();
                if traces.iter().any(|tr| *tr != traces[0]) {
                    return Some(format!("block {b}, n = {n}, a = {a:?}: barrier sequences per thread {traces:?}"));
                }
            }
        }
        None
    }

    #[test]
    fn accepted_kernels_never_diverge_and_divergent_ones_are_rejected() {
        let count: u64 = std::env::var("ONEKERNEL_UNIFORMITY_KERNELS").ok().and_then(|v| v.parse().ok()).unwrap_or(400);
        let (mut accepted, mut diverging, mut conservative) = (0, 0, 0);
        // Accepted kernels the CPU phase executor splits, and why it left
        // the others to the futures executor.
        let mut split = 0;
        let mut kept: std::collections::BTreeMap<&str, usize> = Default::default();
        for seed in 0..count {
            let mut g = Gen { rng: Rng(seed), sites: 0, budget: 4 + (seed % 8) as usize };
            let body = g.block(0, 0);
            if g.sites == 0 {
                continue;
            }
            let m_from_t = g.rng.below(3) == 0;
            let src = source(&body, m_from_t);
            let item: syn::ItemFn = syn::parse_str(&src).expect("generated kernels parse");
            let result = compile(format!("workgroup_size = {WG}").parse().unwrap(), &item, &[]);
            // Rejected only for its barriers: the generated kernels are
            // otherwise valid.
            if let Err(e) = &result {
                let other: Vec<String> = e.iter().map(|d| d.to_string()).filter(|d| !d.contains("barrier")).collect();
                assert!(other.is_empty(), "seed {seed}: rejected for another reason: {other:#?}\n{src}");
            }
            let ok = result.is_ok();
            let diverges = divergence(&body, m_from_t, &mut g.rng);
            match (ok, diverges) {
                (true, Some(how)) => panic!("seed {seed}: accepted, but diverges ({how}):\n{src}"),
                (true, None) => {
                    accepted += 1;
                    let Ok(k) = &result else { unreachable!() };
                    let c = &k.checked;
                    let (f, types, table) = (&c.program.kernel, &c.kernel_types, &c.program.types);
                    // The plan's decision, and the body it promises.
                    match onekernel_compiler::split::splits(f, types, table, &c.uniformity) {
                        Ok(()) => {
                            split += 1;
                            assert_eq!(format!("{:?}", c.cpu), "Cooperative { phased: true }", "seed {seed}");
                            let body = phase_body(f, types, table, &k.layout, k.info.workgroup_size, &c.uniformity);
                            assert!(body.is_ok(), "seed {seed}");
                        }
                        Err(why) => *kept.entry(why).or_default() += 1,
                    }
                    // And the whole expansion, without panicking.
                    drop(onekernel_compiler::expand::expand_kernel(&item, k));
                }
                (false, Some(_)) => diverging += 1,
                (false, None) => conservative += 1,
            }
        }
        eprintln!(
            "uniformity: {count} kernels: {accepted} accepted (none diverges), {diverging} rejected that diverge, \
             {conservative} rejected that did not diverge on the sampled inputs; {split} accepted ones split into \
             phases, the others not: {kept:?}"
        );
        assert!(accepted > count / 10 && diverging > count / 20, "the generator must exercise both sides");
        // Barriers under uniform `if`s, loops with breaks, early returns:
        // the splitter takes them all.
        assert_eq!(split, accepted, "{kept:?}");
    }
}

/// The facts the analysis keeps (`Checked::uniformity`), per local and per
/// expression, for kernels with barriers and without.
#[test]
fn the_facts_are_kept_per_local_and_expression() {
    let facts = |src: &str| {
        let item: syn::ItemFn = syn::parse_str(src).expect("parses");
        let k = compile("workgroup_size = 64".parse().expect("attr"), &item, &[]).expect("compiles");
        let f = &k.checked.program.kernel;
        let locals: Vec<(String, bool)> =
            f.locals.iter().map(|(l, local)| (local.name.clone(), k.checked.uniformity.local(l))).collect();
        let exprs = f.exprs.handles().filter(|e| k.checked.uniformity.expr(*e)).count();
        (locals, exprs, f.exprs.len())
    };
    let (locals, uniform, all) = facts(
        "fn k(a: &[u32], out: &mut [u32], n: u32) {
            let t = shared::<[u32; 64]>();
            let b = block_id().x;
            let g = global_id().x;
            let mut m = n * 2;
            let v = a[b];
            if g < 5 { m = 1; }
            workgroup_barrier();
            out[g] = t[0] + m + v + b as u32;
        }",
    );
    let want = [("b", true), ("g", false), ("m", false), ("v", false)];
    assert_eq!(locals, want.map(|(n, u)| (n.to_string(), u)), "assigned under a varying `if`, `m` varies");
    assert!(0 < uniform && uniform < all, "{uniform} of {all}");
    // Without barriers too: the facts do not depend on there being any.
    let (locals, ..) =
        facts("fn k(out: &mut [u32]) { let b = block_dim().x; let g = thread_id().x; out[g] = b as u32; }");
    assert_eq!(locals, [("b".to_string(), true), ("g".to_string(), false)]);
}

/// `analysis::cpu_plan`: the one decision of how the CPU runs a kernel.
#[test]
fn the_cpu_plan() {
    let plan = |src: &str| {
        let item: syn::ItemFn = syn::parse_str(src).expect("parses");
        let k = compile("workgroup_size = 64".parse().expect("attr"), &item, &[]).expect("compiles");
        assert_eq!(k.info.cpu, k.checked.cpu, "KERNEL records the plan");
        format!("{:?}", k.checked.cpu)
    };
    assert_eq!(
        plan("fn k(a: &[f32], out: &mut [f32]) { let i = global_id().x; out[i] = a[i]; }"),
        "OwnElement { chunk_loop: true }"
    );
    assert_eq!(
        plan("fn k(a: &[f32], out: &mut [f32]) { let i = global_id().x; out[i] = a[thread_id().x]; }"),
        "OwnElement { chunk_loop: false }"
    );
    assert_eq!(plan("fn k(out: &mut [f32]) { out[0] = 1.0; }"), "Independent");
    assert_eq!(
        plan("fn k(out: &mut [f32]) { let t = shared::<[f32; 64]>(); t[thread_id().x] = 1.0; workgroup_barrier(); out[global_id().x] = t[0]; }"),
        "Cooperative { phased: true }"
    );
    assert_eq!(
        plan("fn k(out: &mut [u32]) { out[global_id().x] = subgroup_add(1u32); }"),
        "Cooperative { phased: false }"
    );
}

/// The analysis runs on every kernel now: a loop body is probed for early
/// exits only when it has a jump, so nested loops are walked once per
/// level, not twice (2^40 walks here otherwise).
#[test]
fn nested_loops_without_jumps_are_walked_once() {
    let depth = 40;
    let src = format!(
        "fn k(out: &mut [u32]) {{ let t = shared::<[u32; 64]>(); let mut s = 0u32; {} s += 1; {} \
         t[thread_id().x] = s; workgroup_barrier(); out[global_id().x] = t[0]; }}",
        "for _i in 0..2u32 { ".repeat(depth),
        "}".repeat(depth)
    );
    let start = std::time::Instant::now();
    accepted(&src);
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
}
