//! `kernel-cli explain FILE.rs [--kernel NAME] [--emit KIND]`: see the
//! library ([`kernel_cli`]) for what it prints.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = kernel_cli::run(&args);
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    std::process::exit(out.code);
}
