use onekernel::prelude::*;

// Only kernels are generic.
#[helper]
fn twice<T: Num>(x: T) -> T {
    x + x
}

fn main() {}
