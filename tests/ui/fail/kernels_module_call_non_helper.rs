// In a `#[onekernel::kernels]` module, and in a module that imports its
// parent's items: a function without `#[helper]` is named as such, at the
// call.
#[onekernel::kernels]
mod m {
    use onekernel::prelude::*;

    fn half(x: f32) -> f32 {
        x * 0.5
    }

    #[kernel(workgroup_size = 64)]
    pub fn k(a: &mut [f32]) {
        let i = global_id().x;
        if i < a.len() {
            a[i] = half(a[i]);
        }
    }
}

fn twice(x: f32) -> f32 {
    x * 2.0
}

mod inner {
    #[allow(unused_imports)] // the kernel that uses it does not compile
    use super::*;
    use onekernel::prelude::*;

    #[kernel(workgroup_size = 64)]
    pub fn k2(a: &mut [f32]) {
        let i = global_id().x;
        if i < a.len() {
            a[i] = twice(a[i]);
        }
    }
}

fn main() {}
