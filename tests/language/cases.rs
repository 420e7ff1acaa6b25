//! The one list of the language suite's cases (as naga's `tests/in` with
//! its one driver): each row names a test function of `main.rs`, which runs
//! its kernels on the CPU executor and the GPU against their plain-Rust
//! references, and the kernels of `kernels.rs` it runs. Every check is
//! generated from this list: the run itself (`main.rs`, module `run`), a
//! WGSL snapshot of each kernel (`snapshots.rs`; `(folded)` adds the folded
//! module's), and `spirv-val` of each kernel's plain and folded SPIR-V and a
//! naga re-parse of its WGSL (`spirv.rs`). A generic kernel lists its
//! instantiations. A kernel or a test left out of the list is dead code (a
//! warning, an error under CI's `-D warnings`); a name that is in the list
//! but not defined is a compile error.
//!
//! Adding a case: the kernel in `kernels.rs`, its reference in
//! `reference.rs` (generated when it is the kernel's own body: see
//! `kernels_with_references!`), its test function in `main.rs`, and a row
//! here; then bless the new snapshot (`INSTA_UPDATE=always`).

/// Calls the macro `$then` with every case.
macro_rules! language_cases {
    ($then:ident) => {
        $then! {
            plain {
                vector_add_every_size: vector_add(folded);
                integer_operators: int_ops, uint_ops;
                float_operators_and_bools: float_ops;
                casts_follow_rust: casts;
                float_math_methods: float_math;
                integer_math_methods: int_math;
                control_flow_constructs: control_flow;
                builtins_on_a_2d_grid: builtins_2d(folded);
                grid_of_more_than_65535_workgroups: folded_ids;
                helpers_and_uniform_scalars: helpers_and_scalars;
                literals_are_typed_as_rustc_types_them: literals;
                local_arrays: local_arrays;
                unrolled_loops: unrolled, unrolled_in_helper;
                split_arrays: split_arrays;
                tuples_and_integer_match: tuples_and_match;
                more_methods_on_edge_values: more_methods;
                ranges_end_where_rust_ends_them: ranges;
                float_vectors_follow_glam: float_vectors;
                int_vectors_follow_glam: int_vectors;
                vectors_in_memory: vectors_in_memory;
                wide_integers_on_both_devices: wide_ints;
                f64_and_f16_on_both_devices: wide_floats;
                f16_vectors_on_both_devices: f16_vectors;
                wide_shared_arrays_on_both_devices: wide_shared;
                rejected_constants_are_computed_at_run_time: rejected_constants;
                chunk_slice_loop_matches_the_per_invocation_body: own_elements, own_elements_vec4;
                chunk_slice_loop_split_at_a_scalar_bound: own_below;
                own_element_kernels_outside_the_chunk_loop: neighbour_sum, own_with_thread_id;
                subgroup_values_partition_the_block: subgroup_ids;
            }
            generic {
                generic_kernel_for_every_num_type: generic_num<for_f32, for_i32, for_u32, for_f16, for_f64, for_i64, for_u64>;
                generic_float_kernel_for_f32_and_f64: generic_float<for_f32, for_f64>;
                generic_int_kernel_for_every_int_type: generic_int<for_i32, for_u32, for_i64, for_u64>;
                generic_cooperative_kernel_with_a_shared_array_of_t:
                    generic_reverse<for_f32, for_i32, for_u32, for_f16, for_f64, for_i64, for_u64>;
            }
        }
    };
}
pub(crate) use language_cases;

/// The run of every case: one `#[test]` per row, calling the function of
/// the same name in `main.rs`.
macro_rules! run_tests {
    (
        plain { $($run:ident: $($k:ident $(($folded:ident))?),+;)* }
        generic { $($grun:ident: $g:ident<$($inst:ident),+>;)* }
    ) => {
        $(
            #[test]
            fn $run() {
                crate::$run()
            }
        )*
        $(
            #[test]
            fn $grun() {
                crate::$grun()
            }
        )*
    };
}

/// The generated run tests.
mod run {
    super::language_cases!(run_tests);
}
