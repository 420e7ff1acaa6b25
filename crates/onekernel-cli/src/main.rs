//! `onekernel explain FILE.rs [--kernel NAME] [--emit KIND] [--folded] [--checked] [-o OUT]`:
//! see the library ([`onekernel_cli`]) for what it prints.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = onekernel_cli::run(&args);
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    std::process::exit(out.code);
}
