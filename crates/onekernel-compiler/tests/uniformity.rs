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
        "fn k(out: &mut [u32]) { if subgroup_invocation_id() == 0 { out[0] = subgroup_ballot(true); } }",
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
